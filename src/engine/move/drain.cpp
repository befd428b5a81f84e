#include "engine/move/drain.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
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

constexpr uint64_t kPiece = uint64_t{8} << 20;

}  // namespace

std::vector<DrainedRange> drain_file(const std::string& from, const std::string& to, uint64_t offset, uint64_t length,
                                     uint64_t hash_chunk, const std::function<void()>& after_piece) {
  Fd in, out;
  std::vector<DrainedRange> ranges;
  if (length > 0) {
    in.fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in.fd < 0) throw_system("drain: cannot open the node-local copy \"" + from + "\"", errno);
  }
  out.fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (out.fd < 0) throw_system("drain: cannot open \"" + to + "\" on the target", errno);
  std::vector<char> buf(static_cast<size_t>(std::min(length, kPiece)));
  for (uint64_t done = 0; done < length;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), length - done));
    const ssize_t got = ::pread(in.fd, buf.data(), want, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_system("drain: cannot read \"" + from + "\"", errno);
    if (got == 0) break;  // the rest of the partition is holes: zeros in the target
    const uint64_t at = offset + done;
    for (ssize_t put = 0; put < got;) {
      const ssize_t w = ::pwrite(out.fd, buf.data() + put, static_cast<size_t>(got - put),
                                 static_cast<off_t>(at + static_cast<uint64_t>(put)));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw_system("drain: cannot write \"" + to + "\"", errno);
      put += w;
    }
    // The disk starts on this piece while the next one is read: the final fsync finds little.
    ::sync_file_range(out.fd, static_cast<off_t>(at), got, SYNC_FILE_RANGE_WRITE);
    for (uint64_t h = 0; h < static_cast<uint64_t>(got);) {
      const uint64_t here = at + h;
      const uint64_t n = hash_chunk > 0 ? std::min<uint64_t>(static_cast<uint64_t>(got) - h,
                                                             (here / hash_chunk + 1) * hash_chunk - here)
                                        : static_cast<uint64_t>(got) - h;
      ranges.push_back({here, n, XXH3_64bits(buf.data() + h, static_cast<size_t>(n))});
      h += n;
    }
    done += static_cast<uint64_t>(got);
    if (after_piece) after_piece();
  }
  if (::fsync(out.fd) != 0) throw_system("drain: fsync of \"" + to + "\" failed", errno);
  return ranges;
}

}  // namespace strata::engine
