// HDF5 identifiers owned by RAII, and HDF5 failures turned into strata::Error with the innermost
// message of HDF5's error stack. Shared by the hdf5 backend and the kernels that write HDF5
// themselves (MSLIO's hdf5 mode).
#pragma once

#include <hdf5.h>

#include <string>

namespace strata {

[[noreturn]] void throw_hdf5(const std::string& what);

inline hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw_hdf5(what);
  return id;
}

inline void check_status(herr_t rc, const std::string& what) {
  if (rc < 0) throw_hdf5(what);
}

// Owns any HDF5 identifier.
class H5Id {
 public:
  H5Id() = default;
  explicit H5Id(hid_t id) : id_(id) {}
  ~H5Id() { reset(); }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  H5Id& operator=(H5Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  hid_t get() const { return id_; }
  hid_t release() {
    hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }
  void reset() {
    if (id_ >= 0) H5Idec_ref(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

}  // namespace strata
