#include "engine/move/io_worker.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace strata::engine {

IoWorker::IoWorker(const FileSet& files) : files_(files), thread_([this] { run(); }) {}

IoWorker::~IoWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

uint64_t IoWorker::submit_write(std::vector<IoSpan> spans) { return submit({true, std::move(spans)}); }
uint64_t IoWorker::submit_read(std::vector<IoSpan> spans) { return submit({false, std::move(spans)}); }

uint64_t IoWorker::submit(Job job) {
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
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<std::string> failure;
    uint64_t calls = 0;
    for (const IoSpan& s : job.spans) {
      try {
        files_.split(s.file_offset, s.length, [&](const SubFile& f, uint64_t local, uint64_t len, uint64_t at) {
          uint64_t done = 0;
          while (done < len && !failure) {
            if (f.fd < 0) {
              failure = "internal: \"" + f.path + "\" is not open";
              break;
            }
            std::byte* mem = s.memory + at + done;
            ssize_t n = job.write ? ::pwrite(f.fd, mem, len - done, static_cast<off_t>(local + done))
                                  : ::pread(f.fd, mem, len - done, static_cast<off_t>(local + done));
            ++calls;
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
              failure = std::string(job.write ? "write to \"" : "read from \"") + f.path + "\" at offset " +
                        std::to_string(local + done) + " failed: " + std::strerror(errno);
            } else if (n == 0) {
              failure = "read from \"" + f.path + "\" at offset " + std::to_string(local + done) +
                        " reached the end of the file (the file is shorter than the data declared)";
            } else {
              done += static_cast<uint64_t>(n);
            }
          }
        });
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
    cv_.notify_all();
  }
}

}  // namespace strata::engine
