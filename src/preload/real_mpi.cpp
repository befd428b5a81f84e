#include "preload/real_mpi.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace strata::preload {

namespace {

void* resolve(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "libstrata_preload: the MPI library has no %s (%s)\n", name, dlerror());
    std::abort();
  }
  return f;
}

RealMpi load() {
  RealMpi r;
#define STRATA_PRELOAD_RESOLVE(name, params, args) r.name = reinterpret_cast<decltype(r.name)>(resolve("PMPI_" #name));
  STRATA_PRELOAD_FILE_CALLS(STRATA_PRELOAD_RESOLVE)
#undef STRATA_PRELOAD_RESOLVE
  return r;
}

}  // namespace

const RealMpi& real() {
  static const RealMpi r = load();
  return r;
}

}  // namespace strata::preload
