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

}  // namespace strata
