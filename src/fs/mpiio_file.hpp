// An MPI-IO file opened with Strata's hints: shared by the mpiio-ind and mpiio-coll backends and
// by the application kernels that do their own MPI-IO (mslio, pace3d).
#pragma once

#include <mpi.h>

#include <string>

#include "common/hints.hpp"
#include "fs/access.hpp"

namespace strata {

// The name to hand MPI-IO (MPI_File_open, or HDF5 and PnetCDF over it) for `path`: a bare file
// name gets "./" in front, since Open MPI 4.1's OMPIO fails to open one ("x": MPI_ERR_OTHER,
// "./x": fine). Messages keep the user's spelling.
std::string mpiio_path(const std::string& path);

// Hints to pass to MPI_File_open, with the known-defect adjustments (MPI-IO-NOTES.md):
// under OMPIO in Open MPI 4.1.x the collective_buffering key is inverted (any value but
// "false" forces independent I/O), so it is dropped with a warning.
Hints hints_for_open(const Hints& asked, const std::string& io_component);

class MpiioFile {
 public:
  MpiioFile() = default;
  ~MpiioFile();
  MpiioFile(const MpiioFile&) = delete;
  MpiioFile& operator=(const MpiioFile&) = delete;

  // Opens `path` on `comm` (create + write-only, or read-only). Throws on failure.
  // `component` ("ompio"/"romio") decides how the hints in effect are learnt.
  void open(MPI_Comm comm, const std::string& path, Access access, const Hints& hints, const std::string& component);
  // MPI_File_sync when `sync`, then MPI_File_close. Throws on failure.
  void close(bool sync);
  MPI_File get() const { return fh_; }
  const std::string& path() const { return path_; }
  // Hints in effect after open (see hints_in_effect.hpp).
  const Hints& hints_in_effect() const { return in_effect_; }

 private:
  MPI_File fh_ = MPI_FILE_NULL;
  std::string path_;
  Access access_ = Access::read;
  Hints in_effect_;
};

}  // namespace strata
