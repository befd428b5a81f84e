// Agreeing that every rank can open a file before an I/O library opens it collectively.
//
// MPI_File_open (and HDF5's and PnetCDF's opens on top of it) is collective, and when the open
// fails on some ranks only, OMPIO waits forever in it (found with libstrata_fault.so,
// docs/reliability.md). Each rank first tries the same open itself; the outcome is agreed, so a
// rank that cannot open gives one clear error everywhere before the library is entered.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "fs/access.hpp"

namespace strata {

// Collective over `comm`. Opening for writing creates the file (as the library would). Returns
// the fewest bytes free for the file that any rank saw (statvfs of the open file; UINT64_MAX
// when not writing or not known), agreed in the same reduction as the outcome.
uint64_t check_openable_everywhere(MPI_Comm comm, const std::string& path, Access access);

// ext4 writes a file back when it is closed if it was truncated to length zero before
// (auto_da_alloc: it protects programs that rewrite a file in place without fsync). A library
// that truncates the file it creates — PnetCDF's NC_CLOBBER does, even an empty file, on its
// rank 0 — thus has the whole output written back at its close: measured 1.2–1.5 ms of close
// per 32 MiB here, with writeback competing with the next write. The flag is cleared by any
// close of the file: this opens and closes `path` once, so call it on the rank that truncated,
// after the library's create and before any data is written. Harmless elsewhere (other file
// systems, a file never truncated); errors are ignored (the library reports its own).
void forget_truncation(const std::string& path);

}  // namespace strata
