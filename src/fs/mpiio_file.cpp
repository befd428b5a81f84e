#include "fs/mpiio_file.hpp"

#include "common/error.hpp"
#include "common/log.hpp"
#include "fs/hints_in_effect.hpp"
#include "fs/open_check.hpp"

namespace strata {

Hints hints_for_open(const Hints& asked, const std::string& io_component) {
  Hints out;
  for (const auto& [k, v] : asked) {
    if (io_component == "ompio" && k == "collective_buffering") {
      log::warn(
          "hint collective_buffering dropped: OMPIO in Open MPI 4.1 inverts it (any value but \"false\" "
          "forces independent I/O); select the algorithm with --mca fcoll instead");
      continue;
    }
    out.emplace_back(k, v);
  }
  return out;
}

MpiioFile::~MpiioFile() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
}

std::string mpiio_path(const std::string& path) {
  return path.find('/') == std::string::npos && !path.empty() ? "./" + path : path;
}

void MpiioFile::open(MPI_Comm comm, const std::string& path, Access access, const Hints& hints,
                     const std::string& component) {
  path_ = path;
  access_ = access;
  MpiInfo info(hints);
  int amode = access == Access::write ? (MPI_MODE_CREATE | MPI_MODE_WRONLY) : MPI_MODE_RDONLY;
  check_openable_everywhere(comm, path, access);
  RomioHintCapture capture(component == "romio");
  int rc = MPI_File_open(comm, mpiio_path(path).c_str(), amode, info.get(), &fh_);
  Hints printed = capture.finish();
  if (rc != MPI_SUCCESS) {
    fh_ = MPI_FILE_NULL;
    throw_mpi(std::string("cannot open \"") + path + "\" for " + (access == Access::write ? "writing" : "reading"), rc);
  }
  Hints from_info;
  MPI_Info got = MPI_INFO_NULL;
  if (MPI_File_get_info(fh_, &got) == MPI_SUCCESS) from_info = MpiInfo(got).entries();
  in_effect_ = effective_hints(from_info, printed);
}

void MpiioFile::close(bool sync) {
  if (fh_ == MPI_FILE_NULL) return;
  if (sync && access_ == Access::write) {
    int rc = MPI_File_sync(fh_);
    if (rc != MPI_SUCCESS) {
      MPI_File_close(&fh_);
      fh_ = MPI_FILE_NULL;
      throw_mpi("MPI_File_sync of \"" + path_ + "\" failed", rc);
    }
  }
  int rc = MPI_File_close(&fh_);
  fh_ = MPI_FILE_NULL;
  if (rc != MPI_SUCCESS) throw_mpi("MPI_File_close of \"" + path_ + "\" failed", rc);
}

}  // namespace strata
