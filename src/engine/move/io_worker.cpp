#include "engine/move/io_worker.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>

#include "common/xxh3.hpp"

namespace strata::engine {

namespace {
constexpr uint64_t kFollowedPiece = uint64_t{8} << 20;  // what a follower (on_written) sees at a time
}  // namespace

IoWorker::IoWorker(const FileSet& files, uint64_t hash_chunk, bool threaded, uint64_t write_behind)
    : files_(files), hash_chunk_(hash_chunk), write_behind_(write_behind) {
  // What the files hold already (a recycled output's pages are cached): writes below it are
  // not cut for the page cache's sake (piece_limit_).
  if (piece_limit_ > 0) {
    for (const SubFile& f : files_.files()) {
      struct stat st {};
      cached_.push_back(f.fd >= 0 && ::fstat(f.fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0);
    }
  }
  if (threaded) thread_ = std::thread([this] { run(); });
}

IoWorker::~IoWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t IoWorker::submit_write(std::vector<IoSpan> spans) { return submit({true, std::move(spans)}); }
uint64_t IoWorker::submit_read(std::vector<IoSpan> spans) { return submit({false, std::move(spans)}); }

uint64_t IoWorker::submit(Job job) {
  if (!thread_.joinable()) {  // unthreaded: at once, on the caller's thread
    execute(job);
    std::lock_guard<std::mutex> lock(mu_);
    return submitted_++;
  }
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(job));
  cv_.notify_all();
  return submitted_++;
}

void IoWorker::wait(uint64_t id) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_ > id; });
}

void IoWorker::wait_all() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_ == submitted_; });
}

std::optional<std::string> IoWorker::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

double IoWorker::io_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return io_s_;
}

uint64_t IoWorker::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<WrittenHash> IoWorker::hashes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hashes_;
}

bool IoWorker::starts_behind_piece(uint64_t at, uint64_t n) const {
  return write_behind_ > 0 && n > 0 && (at == 0 || (at + n - 1) / write_behind_ != (at - 1) / write_behind_);
}

uint64_t IoWorker::write_piece(const SubFile& f, uint64_t end) const {
  const size_t i = files_.index_of(f.begin);
  const bool cut = piece_limit_ > 0 && (i >= cached_.size() || end > cached_[i]);
  if (!cut || write_behind_ == 0) return cut ? piece_limit_ : write_behind_;
  return std::min(write_behind_, piece_limit_);
}

std::optional<std::string> IoWorker::move(bool write, const IoSpan& s, std::byte* memory, bool zero_past_end,
                                          uint64_t& calls) {
  std::optional<std::string> failure;
  files_.split(s.file_offset, s.length, [&](const SubFile& f, uint64_t local, uint64_t len, uint64_t at) {
    uint64_t done = 0, synced = 0;  // bytes of this part written, and handed to writeback
    while (done < len && !failure) {
      if (f.fd < 0) {
        failure = "internal: \"" + f.path + "\" is not open";
        break;
      }
      std::byte* mem = memory + at + done;
      // Pieces: for the write-behind, or so that a follower sees the write advance.
      uint64_t step = write_piece(f, local + len);
      if (written_ && write_behind_ == 0) step = std::min(step > 0 ? step : kFollowedPiece, kFollowedPiece);
      const uint64_t piece = write && step > 0 ? std::min(len - done, step) : len - done;
      ssize_t n = write ? ::pwrite(f.fd, mem, piece, static_cast<off_t>(local + done))
                        : ::pread(f.fd, mem, piece, static_cast<off_t>(local + done));
      // A request cut only for the page cache's sake (piece_limit_) counts once.
      if (done == 0 || !write || step != piece_limit_ || starts_behind_piece(done, piece)) ++calls;
#ifdef __linux__
      // Start the writeback of each write-behind piece now (of pieces cut shorter for the page
      // cache, once they make one); its errors, if any, surface at the fsync.
      if (write && write_behind_ > 0 && n > 0) {
        const uint64_t upto = done + static_cast<uint64_t>(n);
        if (upto - synced >= write_behind_ || upto == len) {
          ::sync_file_range(f.fd, static_cast<off_t>(local + synced), static_cast<off_t>(upto - synced),
                            SYNC_FILE_RANGE_WRITE);
          synced = upto;
        }
      }
#endif
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        failure = std::string(write ? "write to \"" : "read from \"") + f.path + "\" at offset " +
                  std::to_string(local + done) + " failed: " + std::strerror(errno);
      } else if (n == 0 && zero_past_end) {
        std::memset(mem, 0, len - done);  // read-modify-write past the end: the file grows
        done = len;
      } else if (n == 0) {
        failure = "read from \"" + f.path + "\" at offset " + std::to_string(local + done) +
                  " reached the end of the file (the file is shorter than the data declared)";
      } else {
        done += static_cast<uint64_t>(n);
        if (write && written_) written_(files_.index_of(f.begin), local + done);
      }
    }
  });
  return failure;
}

namespace {

// fn(pointer, length) for the memory of span-relative bytes [at, at + len) of a gathered span.
template <class F>
void for_each_memory(const IoSpan& s, uint64_t at, uint64_t len, F&& fn) {
  uint64_t pos = 0;  // span-relative start of the current piece
  for (const auto& [memory, n] : s.gather) {
    if (pos >= at + len) break;
    if (pos + n > at) {
      const uint64_t from = std::max(at, pos), to = std::min(at + len, pos + n);
      fn(memory + (from - pos), to - from);
    }
    pos += n;
  }
}

}  // namespace

std::optional<std::string> IoWorker::move_gathered(bool write, const IoSpan& s, uint64_t& calls) {
  std::optional<std::string> failure;
  files_.split(s.file_offset, s.length, [&](const SubFile& f, uint64_t local, uint64_t len, uint64_t at) {
    if (failure) return;
    if (f.fd < 0) {
      failure = "internal: \"" + f.path + "\" is not open";
      return;
    }
    std::vector<iovec> iov;
    uint64_t batch = 0, done = 0, synced = 0;  // bytes in iov; of this file's part moved; handed to writeback
    const uint64_t piece = write ? write_piece(f, local + len) : 0;
    auto flush = [&] {
      size_t first = 0;
      while (batch > 0 && !failure) {
        const int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
        const off_t where = static_cast<off_t>(local + done);
        const ssize_t n = write ? ::pwritev(f.fd, iov.data() + first, count, where)
                                : ::preadv(f.fd, iov.data() + first, count, where);
        // (cut for the page cache: once, or once a write-behind piece)
        if (done == 0 || !write || piece != piece_limit_ || starts_behind_piece(done, batch)) ++calls;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          failure = n < 0 ? std::string(write ? "write to \"" : "read from \"") + f.path + "\" at offset " +
                                std::to_string(local + done) + " failed: " + std::strerror(errno)
                          : "read from \"" + f.path + "\" at offset " + std::to_string(local + done) +
                                " reached the end of the file (the file is shorter than the data declared)";
          break;
        }
#ifdef __linux__
        if (write && write_behind_ > 0 && done + static_cast<uint64_t>(n) - synced >= write_behind_) {
          ::sync_file_range(f.fd, static_cast<off_t>(local + synced),
                            static_cast<off_t>(done + static_cast<uint64_t>(n) - synced), SYNC_FILE_RANGE_WRITE);
          synced = done + static_cast<uint64_t>(n);
        }
#endif
        done += static_cast<uint64_t>(n);
        batch -= static_cast<uint64_t>(n);
        for (uint64_t k = static_cast<uint64_t>(n); k > 0 && first < iov.size();) {  // past what moved
          if (iov[first].iov_len <= k) {
            k -= iov[first].iov_len;
            ++first;
          } else {
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + k;
            iov[first].iov_len -= k;
            k = 0;
          }
        }
      }
      iov.clear();
      batch = 0;
    };
    for_each_memory(s, at, len, [&](std::byte* memory, uint64_t n) {
      while (n > 0 && !failure) {
        const uint64_t take = piece > 0 ? std::min(n, piece - batch) : n;
        iov.push_back({memory, take});
        batch += take;
        memory += take;
        n -= take;
        if (iov.size() == IOV_MAX || (piece > 0 && batch >= piece)) flush();
      }
    });
    if (!failure && batch > 0) flush();
#ifdef __linux__
    if (!failure && write && write_behind_ > 0 && done > synced) {
      ::sync_file_range(f.fd, static_cast<off_t>(local + synced), static_cast<off_t>(done - synced),
                        SYNC_FILE_RANGE_WRITE);
    }
#endif
  });
  return failure;
}

void IoWorker::hash_gathered(const IoSpan& s) {
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> owned(XXH3_createState(), &XXH3_freeState);
  XXH3_state_t* state = owned.get();
  if (state == nullptr) throw std::bad_alloc();
  files_.split(s.file_offset, s.length, [&](const SubFile& f, uint64_t local, uint64_t len, uint64_t at) {
    const size_t file = files_.index_of(f.begin);
    for (uint64_t done = 0; done < len;) {
      const uint64_t here = local + done;
      const uint64_t n = std::min(len - done, (here / hash_chunk_ + 1) * hash_chunk_ - here);
      XXH3_64bits_reset(state);
      for_each_memory(s, at + done, n,
                      [&](const std::byte* memory, uint64_t k) { XXH3_64bits_update(state, memory, k); });
      const uint64_t h = XXH3_64bits_digest(state);
      std::lock_guard<std::mutex> lock(mu_);
      hashes_.push_back({file, here, n, h});
      done += n;
    }
  });
}

// Hashes the span's bytes per file, cut at the checksum grid of each file.
void IoWorker::hash(const IoSpan& s, const std::byte* memory) {
  files_.split(s.file_offset, s.length, [&](const SubFile& f, uint64_t local, uint64_t len, uint64_t at) {
    const size_t file = files_.index_of(f.begin);
    for (uint64_t done = 0; done < len;) {
      const uint64_t here = local + done;
      const uint64_t n = std::min(len - done, (here / hash_chunk_ + 1) * hash_chunk_ - here);
      const uint64_t h = XXH3_64bits(memory + at + done, n);
      std::lock_guard<std::mutex> lock(mu_);
      hashes_.push_back({file, here, n, h});
      done += n;
    }
  });
}

void IoWorker::run() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    execute(job);
    cv_.notify_all();
  }
}

void IoWorker::execute(const Job& job) {
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<std::string> failure;
  uint64_t calls = 0;
  for (const IoSpan& s : job.spans) {
    try {
      if (job.write && !s.pieces.empty()) {
        // Read-modify-write (data sieving): the holes keep what the file holds.
        scratch_.resize(s.length);
        failure = move(false, s, scratch_.data(), true, calls);
        for (const auto& [at, len] : s.pieces) std::memcpy(scratch_.data() + at, s.memory + at, len);
        if (!failure) failure = move(true, s, scratch_.data(), false, calls);
        if (!failure && hash_chunk_ > 0) hash(s, scratch_.data());
      } else if (s.memory == nullptr && !s.gather.empty()) {
        failure = move_gathered(job.write, s, calls);
        if (!failure && job.write && hash_chunk_ > 0) hash_gathered(s);
      } else {
        failure = move(job.write, s, s.memory, false, calls);
        if (!failure && job.write && hash_chunk_ > 0) hash(s, s.memory);
      }
    } catch (const std::exception& e) {
      if (!failure) failure = e.what();
    }
    if (failure) break;
  }
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    io_s_ += dt;
    requests_ += calls;
    if (failure && !error_) error_ = failure;
    ++done_;
  }
}

}  // namespace strata::engine
