// What a run asks of the I/O: --fsync of every backend (and application kernel), and the
// strategy switches of some backends (the multi-dataset comparison). Each is a run option
// (src/run/run_options.cpp); a backend-specific one is listed in its row's capabilities
// (BackendCapabilities::options), and a run refuses it for the other backends. Here, below
// backends and kernels, because application kernels (their own output routines) read it too.
#pragma once

#include <string>

namespace strata {

struct IoOptions {
  bool fsync = false;             // sync data to storage before close completes
  bool per_block = false;         // hdf5: one collective H5Dwrite per block (per dataset, max over ranks)
  bool independent = false;       // hdf5, pnetcdf: independent data transfers (IOR without -c)
  bool per_variable = false;      // mpiio-coll: one MPI_File_write_at_all per variable
  std::string container = "raw";  // strata: raw or hdf5
  bool fsync_per_write = false;   // posix: fsync after each write request (IOR -Y)
  bool direct = false;            // posix: O_DIRECT, the page cache bypassed (IOR --posix.odirect)
  std::string deadline;           // posix: seconds after which a transfer stops (IOR -D); "" none
  std::string drain;              // strata: the output, written on node-local storage and drained to it
};

}  // namespace strata
