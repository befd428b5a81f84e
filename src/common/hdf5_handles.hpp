// HDF5 identifiers and errors, shared by the hdf5 backend, the engine's HDF5 container and the
// mslio kernel: an owning handle and checks that turn HDF5's error stack into a strata::Error.
// (The HDF5 types of Strata's element types are in datasets/hdf5_types.hpp.)
#pragma once

#include <hdf5.h>

#include <string>

namespace strata {

// Throws a runtime Error: `what` and the innermost message on HDF5's error stack.
[[noreturn]] void throw_hdf5(const std::string& what);
hid_t check_id(hid_t id, const std::string& what);
void check_status(herr_t rc, const std::string& what);
// Turns HDF5's automatic error printing off (errors become messages, not stack dumps).
void quiet_hdf5_errors();

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

// "1.10.8": the HDF5 library in use.
std::string hdf5_library_version();

}  // namespace strata
