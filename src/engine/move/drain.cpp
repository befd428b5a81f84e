#include "engine/move/drain.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/xxh3.hpp"

namespace strata::engine {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

struct Mapping {
  void* at = MAP_FAILED;
  size_t length = 0;
  ~Mapping() {
    if (at != MAP_FAILED) ::munmap(at, length);
  }
};

constexpr uint64_t kPiece = uint64_t{8} << 20;
// Direct I/O moves whole blocks of this size at offsets that are multiples of it (the page
// size, a multiple of every usual logical block size).
constexpr uint64_t kDirectBlock = 4096;
constexpr int kDirectWriters = 2;

void write_all(int fd, const char* data, uint64_t n, uint64_t at, const std::string& to) {
  for (uint64_t put = 0; put < n;) {
    const ssize_t w = ::pwrite(fd, data + put, static_cast<size_t>(n - put), static_cast<off_t>(at + put));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw_system("drain: cannot write \"" + to + "\"", errno);
    put += static_cast<uint64_t>(w);
  }
}

// Hashes [at, at + n) of `to` held at `data`, cut on the hash_chunk grid.
void hash_into(std::vector<DrainedRange>& ranges, const char* data, uint64_t n, uint64_t at, uint64_t hash_chunk) {
  for (uint64_t h = 0; h < n;) {
    const uint64_t here = at + h;
    const uint64_t len = hash_chunk > 0 ? std::min(n - h, (here / hash_chunk + 1) * hash_chunk - here) : n - h;
    ranges.push_back({here, len, XXH3_64bits(data + h, static_cast<size_t>(len))});
    h += len;
  }
}

// Writes [from_offset, bulk) of the mapping to `fd` (opened with O_DIRECT) at `offset` + the
// same, kPiece at a time, with kDirectWriters writes in flight (the calling thread and
// helpers): a device works on several requests at once. Throws the first failure.
void write_direct(int fd, const char* map, uint64_t from_offset, uint64_t bulk, uint64_t offset, const std::string& to,
                  const std::function<void()>& after_piece, const std::function<void(uint64_t)>& ready) {
  std::atomic<uint64_t> next{from_offset};
  std::atomic<bool> stop{false};
  std::mutex failed;
  int error = 0;
  std::exception_ptr abandoned;
  auto writer = [&] {
    for (uint64_t at = next.fetch_add(kPiece); at < bulk && !stop; at = next.fetch_add(kPiece)) {
      const uint64_t n = std::min(kPiece, bulk - at);
      if (ready) {
        try {
          ready(at + n);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(failed);
          if (!abandoned) abandoned = std::current_exception();
          stop = true;
          return;
        }
      }
      for (uint64_t put = 0; put < n;) {
        const ssize_t w =
            ::pwrite(fd, map + at + put, static_cast<size_t>(n - put), static_cast<off_t>(offset + at + put));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          const std::lock_guard<std::mutex> lock(failed);
          if (error == 0) error = w < 0 ? errno : EIO;
          stop = true;
          return;
        }
        put += static_cast<uint64_t>(w);
      }
      if (after_piece) after_piece();
    }
  };
  std::vector<std::thread> helpers;
  for (int i = 1; i < kDirectWriters; ++i) helpers.emplace_back(writer);
  writer();
  for (std::thread& t : helpers) t.join();
  if (abandoned) std::rethrow_exception(abandoned);
  if (error != 0) throw_system("drain: cannot write \"" + to + "\"", error);
}

}  // namespace

std::vector<DrainedRange> drain_file(const std::string& from, const std::string& to, uint64_t offset, uint64_t length,
                                     uint64_t hash_chunk, const std::function<void()>& after_piece,
                                     const std::function<void(uint64_t)>& ready) {
  Fd in, out, direct;
  std::vector<DrainedRange> ranges;
  if (length > 0) {
    in.fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in.fd < 0) throw_system("drain: cannot open the node-local copy \"" + from + "\"", errno);
  }
  out.fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (out.fd < 0) throw_system("drain: cannot open \"" + to + "\" on the target", errno);
  // The node file is read where it lies (mapped), and its whole blocks go to the target by
  // direct I/O: no copy through this process and no page cache on the target's side to flush
  // at the end. Where the target refuses direct I/O (tmpfs, some network file systems) or the
  // offset is not block-aligned, each piece is written through the page cache.
  Mapping map;
  struct stat st {};
  if (length > 0 && ::fstat(in.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) >= length) {
    map.at = ::mmap(nullptr, static_cast<size_t>(length), PROT_READ, MAP_SHARED, in.fd, 0);
    map.length = static_cast<size_t>(length);
  }
  const char* mapped = map.at != MAP_FAILED ? static_cast<const char*>(map.at) : nullptr;
  // A mapped node file is hashed whole on a thread of its own while the writes wait for the
  // device (direct I/O costs this process no copy, so the hashing is what is left to do).
  std::thread hasher;
  std::atomic<bool> quit{false};  // the copy failed: the hasher stops waiting
  if (mapped != nullptr) {
    hasher = std::thread([&] {
      // Once the node-local write is done: the hashing would slow it down (the writes do not).
      if (ready) {
        try {
          ready(length);
        } catch (...) {
          return;  // the copy is abandoned: its own wait says why
        }
      }
      hash_into(ranges, mapped, length, offset, hash_chunk);
    });
  }
  struct Join {
    std::thread& t;
    std::atomic<bool>& quit;
    ~Join() {
      quit = true;
      if (t.joinable()) t.join();
    }
  } join{hasher, quit};
  uint64_t done = 0;
  const uint64_t bulk = mapped != nullptr && offset % kDirectBlock == 0 ? length / kDirectBlock * kDirectBlock : 0;
  if (bulk > 0) direct.fd = ::open(to.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_DIRECT);
  if (direct.fd >= 0) {
    // The first piece here tells whether the target takes direct I/O at all.
    const uint64_t n = std::min(kPiece, bulk);
    if (ready) ready(n);
    ssize_t w = -1;
    do {
      w = ::pwrite(direct.fd, mapped, static_cast<size_t>(n), static_cast<off_t>(offset));
    } while (w < 0 && errno == EINTR);
    if (w < 0 && errno != EINVAL && errno != EOPNOTSUPP) throw_system("drain: cannot write \"" + to + "\"", errno);
    if (w == static_cast<ssize_t>(n)) {
      if (after_piece) after_piece();
      write_direct(direct.fd, mapped, n, bulk, offset, to, after_piece, ready);
      done = bulk;
    }  // refused, or cut short: the page cache from the start
  }
  std::vector<char> buf;
  while (done < length) {
    const uint64_t at = offset + done;
    const char* data = nullptr;
    uint64_t got = 0;
    if (mapped != nullptr) {
      got = std::min(kPiece, length - done);
      if (ready) ready(done + got);
      data = mapped + done;
    } else {
      // The node file is shorter than its record says (or cannot be mapped): what it holds,
      // once the node-local write is done.
      if (ready) ready(length);
      if (buf.empty()) buf.resize(static_cast<size_t>(std::min(length, kPiece)));
      const ssize_t n = ::pread(in.fd, buf.data(), static_cast<size_t>(std::min<uint64_t>(buf.size(), length - done)),
                                static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw_system("drain: cannot read \"" + from + "\"", errno);
      if (n == 0) break;  // the rest of the partition is holes: zeros in the target
      got = static_cast<uint64_t>(n);
      data = buf.data();
      hash_into(ranges, data, got, at, hash_chunk);
    }
    write_all(out.fd, data, got, at, to);
    ::sync_file_range(out.fd, static_cast<off_t>(at), static_cast<off_t>(got), SYNC_FILE_RANGE_WRITE);
    done += got;
    if (after_piece) after_piece();
  }
  if (hasher.joinable()) hasher.join();
  if (::fsync(out.fd) != 0) throw_system("drain: fsync of \"" + to + "\" failed", errno);
  return ranges;
}

}  // namespace strata::engine
