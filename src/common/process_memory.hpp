// How the strata program's allocator treats freed memory. MPI-IO's collective buffers, HDF5's
// and PnetCDF's staging and a kernel's own buffers are allocated and freed on every call; with
// glibc's defaults a free of a few MiB goes back to the kernel (heap trimmed, mapping unmapped)
// and the next call faults the same amount in again, zeroed page by page. On the development VM
// that was half of a collective write (docs/backends.md). The program keeps freed memory instead,
// as IOR happens to by its allocation pattern. Only the strata program does this: a library
// linked into an application leaves the application's allocator alone.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

struct AllocatorSettings {
  bool applied = false;         // the thresholds below are in effect (set by this program)
  uint64_t trim_threshold = 0;  // free memory at the heap's top kept up to this (bytes)
  uint64_t mmap_threshold = 0;  // allocations below this come from the heap, not from mmap
  std::string reason;           // why not applied, when not ("" when applied)
  // The same settings for another program, as a GLIBC_TUNABLES value ("" when not applied).
  std::string glibc_tunables() const;
  // One line for people.
  std::string describe() const;
};

// Sets glibc's trim and mmap thresholds (mallopt) so that freed memory stays in the process,
// unless STRATA_KEEP_FREED_MEMORY=0, or the user set the allocator through GLIBC_TUNABLES or
// MALLOC_TRIM_THRESHOLD_ / MALLOC_MMAP_THRESHOLD_ (theirs is kept), or the C library is not
// glibc. Call once, early in main.
AllocatorSettings keep_freed_memory();

}  // namespace strata
