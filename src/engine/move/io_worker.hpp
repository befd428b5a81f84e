// A background thread that writes or reads an aggregator's buffers, so the next round's
// one-sided transfers overlap this round's file I/O. Plain pwrite/pread: no MPI calls in the
// thread, so no MPI thread level is needed. Spans are in the phase's global byte space; the
// FileSet (opened before, read-only here) maps them to files.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/move/file_set.hpp"

namespace strata::engine {

struct IoSpan {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  std::byte* memory = nullptr;
};

class IoWorker {
 public:
  explicit IoWorker(const FileSet& files);
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

 private:
  struct Job {
    bool write;
    std::vector<IoSpan> spans;
  };
  uint64_t submit(Job job);
  void run();

  const FileSet& files_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  uint64_t submitted_ = 0, done_ = 0;
  bool stop_ = false;
  std::optional<std::string> error_;
  double io_s_ = 0;
  uint64_t requests_ = 0;
  std::thread thread_;
};

}  // namespace strata::engine
