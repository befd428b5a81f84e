// RAII owners for MPI handles: communicators, datatypes, files.
#pragma once

#include <mpi.h>

#include <utility>

namespace strata {

template <class Handle, Handle Null, int (*Free)(Handle*)>
class MpiHandle {
 public:
  MpiHandle() = default;
  explicit MpiHandle(Handle h) : h_(h) {}
  ~MpiHandle() { reset(); }
  MpiHandle(const MpiHandle&) = delete;
  MpiHandle& operator=(const MpiHandle&) = delete;
  MpiHandle(MpiHandle&& o) noexcept : h_(std::exchange(o.h_, Null)) {}
  MpiHandle& operator=(MpiHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Null);
    }
    return *this;
  }
  Handle get() const { return h_; }
  Handle* out() {
    reset();
    return &h_;
  }
  Handle* address() { return &h_; }
  explicit operator bool() const { return h_ != Null; }
  void reset() {
    if (h_ != Null) Free(&h_);
    h_ = Null;
  }

 private:
  Handle h_ = Null;
};

inline int free_comm(MPI_Comm* c) {
  if (*c == MPI_COMM_WORLD || *c == MPI_COMM_SELF) return MPI_SUCCESS;
  return MPI_Comm_free(c);
}
inline int free_type(MPI_Datatype* t) { return MPI_Type_free(t); }
inline int close_file(MPI_File* f) { return MPI_File_close(f); }

using Comm = MpiHandle<MPI_Comm, MPI_COMM_NULL, free_comm>;
using Datatype = MpiHandle<MPI_Datatype, MPI_DATATYPE_NULL, free_type>;

}  // namespace strata
