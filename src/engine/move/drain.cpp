#include "engine/move/drain.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "common/error.hpp"

namespace strata::engine {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void drain_file(const std::string& from, const std::string& to, uint64_t offset, uint64_t length) {
  Fd in, out;
  in.fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in.fd < 0) throw_system("drain: cannot open the node-local copy \"" + from + "\"", errno);
  out.fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (out.fd < 0) throw_system("drain: cannot open the shared file \"" + to + "\"", errno);
  std::vector<char> buf(std::min<uint64_t>(length, uint64_t{8} << 20));
  for (uint64_t done = 0; done < length;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), length - done));
    const ssize_t got = ::pread(in.fd, buf.data(), want, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_system("drain: cannot read \"" + from + "\"", errno);
    if (got == 0) break;  // the rest of the partition is holes
    for (ssize_t put = 0; put < got;) {
      const ssize_t w = ::pwrite(out.fd, buf.data() + put, static_cast<size_t>(got - put),
                                 static_cast<off_t>(offset + done + static_cast<uint64_t>(put)));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw_system("drain: cannot write \"" + to + "\"", errno);
      put += w;
    }
    done += static_cast<uint64_t>(got);
  }
}

}  // namespace strata::engine
