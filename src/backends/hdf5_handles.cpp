#include "backends/hdf5_handles.hpp"

#include "common/error.hpp"

namespace strata {

namespace {

// The innermost message on HDF5's error stack.
herr_t collect_error(unsigned, const H5E_error2_t* e, void* out) {
  auto* text = static_cast<std::string*>(out);
  if (e->desc != nullptr && *e->desc != '\0') *text = e->desc;
  return 0;
}

}  // namespace

void throw_hdf5(const std::string& what) {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &detail);
  H5Eclear2(H5E_DEFAULT);
  throw_runtime(what + (detail.empty() ? std::string() : ": " + detail));
}

}  // namespace strata
