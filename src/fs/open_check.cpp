#include "fs/open_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.hpp"

namespace strata {

void check_openable_everywhere(MPI_Comm comm, const std::string& path, Access access) {
  collectively(comm, "checking that every rank can open the file", [&] {
    const bool write = access == Access::write;
    const int fd = ::open(path.c_str(), write ? (O_WRONLY | O_CREAT | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC), 0644);
    if (fd < 0) throw_system("cannot open \"" + path + "\" for " + (write ? "writing" : "reading"), errno);
    ::close(fd);
  });
}

}  // namespace strata
