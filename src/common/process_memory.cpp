#include "common/process_memory.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace strata {

namespace {

// Kept free memory at the heap's top, per process: the largest buffers the backends allocate
// per call (an OMPIO aggregator's cycle buffer, a staging copy of a rank's data) fit well inside.
constexpr uint64_t kTrimThreshold = uint64_t{256} << 20;
// glibc's largest mmap threshold on 64-bit systems (4 MiB × sizeof(long)); larger allocations
// are still mapped, and unmapped when freed.
constexpr uint64_t kMmapThreshold = uint64_t{32} << 20;

bool user_set_allocator() {
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr || std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

}  // namespace

std::string AllocatorSettings::glibc_tunables() const {
  if (!applied) return "";
  return "glibc.malloc.trim_threshold=" + std::to_string(trim_threshold) +
         ":glibc.malloc.mmap_threshold=" + std::to_string(mmap_threshold);
}

std::string AllocatorSettings::describe() const {
  if (!applied) return "allocator defaults (" + reason + ")";
  return "freed memory kept: malloc trim threshold " + std::to_string(trim_threshold >> 20) + " MiB, mmap threshold " +
         std::to_string(mmap_threshold >> 20) + " MiB";
}

AllocatorSettings keep_freed_memory() {
  AllocatorSettings s;
  const char* keep = std::getenv("STRATA_KEEP_FREED_MEMORY");
  if (keep != nullptr && std::strcmp(keep, "0") == 0) {
    s.reason = "STRATA_KEEP_FREED_MEMORY=0";
    return s;
  }
  if (user_set_allocator()) {
    s.reason = "the user's malloc settings (GLIBC_TUNABLES or MALLOC_*_THRESHOLD_)";
    return s;
  }
#if defined(__GLIBC__)
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) == 1 &&
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThreshold)) == 1) {
    s.applied = true;
    s.trim_threshold = kTrimThreshold;
    s.mmap_threshold = kMmapThreshold;
  } else {
    s.reason = "mallopt refused the thresholds";
  }
#else
  s.reason = "not the GNU C library";
#endif
  return s;
}

}  // namespace strata
