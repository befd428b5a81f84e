// A background thread that writes or reads an aggregator's buffers, so the next round's
// one-sided transfers overlap this round's file I/O. Plain pwrite/pread: no MPI calls in the
// thread, so no MPI thread level is needed. Spans are in the phase's global byte space; the
// FileSet (opened before, read-only here) maps them to files.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include "arch/page_reporting.hpp"

#include "engine/move/file_set.hpp"

namespace strata::engine {

struct IoSpan {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  std::byte* memory = nullptr;
  // A write with pieces is a read-modify-write: the span is read, these pieces (offset within
  // the span, length) of `memory` laid over it, and the span written back whole.
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  // With `memory` null: the span's bytes lie in these pieces of memory, one after another, moved
  // by vectored calls (pwritev/preadv) without a copy.
  std::vector<std::pair<std::byte*, uint64_t>> gather;
};

// XXH3-64 of a piece of a written file (local offset, length), for the commit's index.
struct WrittenHash {
  size_t file = 0;
  uint64_t offset = 0, length = 0, hash = 0;
};

class IoWorker {
 public:
  // `hash_chunk` > 0: every write is also hashed while it is in memory, in pieces that never
  // cross a multiple of `hash_chunk` in their file (the index's checksum grid).
  // `threaded` false: no thread, every job runs at once on the caller's (a phase with nothing
  // to overlap: the hand-off to a thread would cost more than it hides).
  // `write_behind` > 0 (a write that will be synced): writes go in pieces of at most that many
  // bytes, and each piece's writeback to the disk starts at once (sync_file_range), so the
  // final fsync finds little left to write and the disk works while the rest is copied.
  explicit IoWorker(const FileSet& files, uint64_t hash_chunk = 0, bool threaded = true, uint64_t write_behind = 0);
  ~IoWorker();
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  // Queues a job; returns its number (0, 1, 2, ... in submission order).
  uint64_t submit_write(std::vector<IoSpan> spans);
  uint64_t submit_read(std::vector<IoSpan> spans);
  // Blocks until job `id` (and every earlier job) is done.
  void wait(uint64_t id);
  void wait_all();
  // The first failure, if any ("write to F at offset O failed: ...").
  std::optional<std::string> error() const;
  double io_seconds() const;
  uint64_t requests() const;
  // The hashes of everything written so far (call after wait_all).
  std::vector<WrittenHash> hashes() const;
  // Called after each piece written, with its file and the end of the piece in that file (a
  // drain that follows the write as it goes). Set before the first job.
  void on_written(std::function<void(size_t file, uint64_t end)> fn) { written_ = std::move(fn); }

 private:
  struct Job {
    bool write;
    std::vector<IoSpan> spans;
  };
  uint64_t submit(Job job);
  void run();
  void execute(const Job& job);
  // One span's bytes between the files and `memory`; a short read fills zeros when
  // `zero_past_end`, else fails. Returns the failure, if any; counts requests in `calls`.
  std::optional<std::string> move(bool write, const IoSpan& s, std::byte* memory, bool zero_past_end, uint64_t& calls);
  void hash(const IoSpan& s, const std::byte* memory);
  // The same for a span of gathered memory (IoSpan::gather).
  std::optional<std::string> move_gathered(bool write, const IoSpan& s, uint64_t& calls);
  void hash_gathered(const IoSpan& s);

  const FileSet& files_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  uint64_t submitted_ = 0, done_ = 0;
  bool stop_ = false;
  std::optional<std::string> error_;
  double io_s_ = 0;
  uint64_t requests_ = 0;
  uint64_t hash_chunk_ = 0;
  std::function<void(size_t, uint64_t)> written_;
  uint64_t write_behind_ = 0;
  // Writes into the page cache at most this long each (0: as long as asked): on a VM that
  // reports free pages, longer ones take their folios from memory the host took back
  // (arch/page_reporting.hpp).
  uint64_t piece_limit_ = page_cache_write_limit();
  std::vector<uint64_t> cached_;  // each file's size when the worker began (with a piece limit)
  // The longest write request to issue into file `f` up to its byte `end`: the write-behind's
  // piece, and the limit above where the write goes past what the file held (0: none).
  uint64_t write_piece(const SubFile& f, uint64_t end) const;
  // Whether bytes [at, at + n) of a part reach into a write-behind piece not begun before `at`
  // (each counts as a file request however the page cache cut it).
  bool starts_behind_piece(uint64_t at, uint64_t n) const;
  std::vector<WrittenHash> hashes_;  // the worker thread's until wait_all
  std::vector<std::byte> scratch_;   // read-modify-write
  std::thread thread_;
};

}  // namespace strata::engine
