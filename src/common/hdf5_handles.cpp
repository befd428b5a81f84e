#include "common/hdf5_handles.hpp"

#include "common/error.hpp"

namespace strata {

namespace {

// The outermost and the innermost messages on HDF5's error stack (walked upward: innermost
// first): "unable to open file" says what failed, "truncated file: eof = ..." why.
struct StackEnds {
  std::string inner, outer;
};

herr_t collect_error(unsigned, const H5E_error2_t* e, void* out) {
  auto* ends = static_cast<StackEnds*>(out);
  if (e->desc == nullptr || *e->desc == '\0') return 0;
  if (ends->inner.empty()) ends->inner = e->desc;
  ends->outer = e->desc;
  return 0;
}

}  // namespace

void throw_hdf5(const std::string& what) {
  StackEnds ends;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &ends);
  H5Eclear2(H5E_DEFAULT);
  const std::string detail = ends.inner == ends.outer ? ends.outer : ends.outer + " (" + ends.inner + ")";
  throw_runtime(what + (detail.empty() ? std::string() : ": " + detail));
}

hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw_hdf5(what);
  return id;
}

void check_status(herr_t rc, const std::string& what) {
  if (rc < 0) throw_hdf5(what);
}

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

void quiet_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

}  // namespace strata
