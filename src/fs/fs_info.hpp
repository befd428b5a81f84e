// File-system detection from statfs(2): type (by magic number), block size, capacity.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

struct FsInfo {
  std::string path;         // the path examined (PATH, or its nearest existing parent)
  std::string type;         // "ext4", "xfs", "tmpfs", "lustre", "gpfs", "beegfs", ... or "unknown"
  uint64_t magic = 0;       // statfs f_type
  uint64_t block_size = 0;  // f_bsize, bytes
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;  // available to unprivileged users
};

// Examines `path`; when it does not exist, its nearest existing parent directory.
// Throws a runtime Error when nothing along the path can be examined.
FsInfo fs_info(const std::string& path);
// " (the file system holding PATH is full: N bytes free)" when the file system of `path` has
// less than 1 MiB free for unprivileged users, else "": added to a failed write's message, since
// MPI-IO, HDF5 and PnetCDF often report a full disk only as an input/output error.
std::string no_space_note(const std::string& path);
// The same finding as a plain clause — "the file system holding PATH is full: N bytes free" — or
// "": what the watchdog names as the likely cause of a write that hangs (common/watchdog.hpp).
std::string full_file_system(const std::string& path);
// Name of a statfs magic number.
std::string fs_type_name(uint64_t magic);

}  // namespace strata
