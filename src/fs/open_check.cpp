#include "fs/open_check.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "common/error.hpp"

namespace strata {

uint64_t check_openable_everywhere(MPI_Comm comm, const std::string& path, Access access) {
  watchdog::Scope scope("checking that every rank can open the file");
  uint64_t free = UINT64_MAX;
  const std::optional<Error> local = caught([&] {
    const bool write = access == Access::write;
    const int fd = ::open(path.c_str(), write ? (O_WRONLY | O_CREAT | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC), 0644);
    if (fd < 0) throw_system("cannot open \"" + path + "\" for " + (write ? "writing" : "reading"), errno);
    struct statvfs st {};
    if (write && ::fstatvfs(fd, &st) == 0) free = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
    ::close(fd);
  });
  // One reduction: the lowest failing rank (as size - rank, maximised) and the least free space.
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  uint64_t mine[2] = {local ? static_cast<uint64_t>(size - rank) : 0, UINT64_MAX - free}, all[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
  if (all[0] > 0) raise_from(comm, size - static_cast<int>(all[0]), local ? &*local : nullptr);
  return UINT64_MAX - all[1];
}

void forget_truncation(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
}

}  // namespace strata
