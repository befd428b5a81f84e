// MSLIO's output routine in each of its modes, and reading the output back. Each function is
// this rank's part; those that open a shared file are collective over `comm`. Each returns the
// calls it made and their cumulative time, summed over the rank's OpenMP threads.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "common/hints.hpp"
#include "kernels/app_kernel.hpp"
#include "strata/strata.hpp"

namespace strata::mslio {

struct Setup {
  unsigned ccross = 3;
  uint64_t subelements = 64;
  unsigned dims = 2;
  std::string mode = "original";
  uint64_t buffer_bytes = 0;  // buffered: per file; shared: per local problem (0: one write per value)
  int threads = 1;            // OpenMP threads of this rank
  uint64_t align = 0;         // strata: each local problem's chunk starts at a multiple of this
  uint64_t problems = 0;      // 4^ccross
  uint64_t points = 0;        // points per local problem
  uint64_t first = 0;         // this rank's local problems: [first, first + count)
  uint64_t count = 0;
  std::string folder;  // --output

  uint64_t values() const { return points * dims; }  // values per local problem
  uint64_t file_bytes() const;                       // bytes of one solution file
  uint64_t chunk_stride() const;                     // shared file: distance between chunks
  std::string problem_folder(uint64_t problem) const;
  std::string problem_file(uint64_t problem) const;
  std::string shared_path() const;  // shared, strata
  std::string hdf5_path() const;
};

// Memory of local problem `k` (global index) in the rank's point-by-point array.
inline const double* problem_memory(const Setup& s, const double* memory, uint64_t k) {
  return memory + (k - s.first) * s.values();
}

// Seconds since an arbitrary origin (thread-safe, unlike MPI_Wtime's formal guarantee).
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The first error of a parallel region, raised after it (exceptions may not leave a thread).
class FirstError {
 public:
  void set(const std::string& message) {
    std::lock_guard<std::mutex> lock(m_);
    if (message_.empty()) message_ = message;
    failed_ = true;
  }
  bool any() const { return failed_; }
  // After the parallel region.
  const std::string& message() const { return message_; }
  void raise() const;

 private:
  std::mutex m_;
  std::string message_;
  std::atomic<bool> failed_{false};
};

// Creates the folder of each of this rank's local problems (before the timed phase).
void create_folders(const Setup& s);
// Removes this rank's solution files (original, buffered).
void remove_files(const Setup& s);

// original: fopen, one fprintf per value, fclose, per local problem; buffered: the same with the
// values formatted into a buffer of s.buffer_bytes written with one fwrite whenever it is full.
CallTotals write_files(const Setup& s, const double* memory, bool fsync);
CallTotals read_files(const Setup& s, const double* memory, bool compare, std::optional<std::string>& mismatch);

// shared: one file, each local problem's text a contiguous chunk, MPI-IO independent writes
// from the threads (one per value, or one per buffer of s.buffer_bytes).
CallTotals write_shared(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints,
                        const std::string& io_component, bool fsync, Hints& in_effect);
CallTotals read_shared(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints,
                       const std::string& io_component, bool compare, std::optional<std::string>& mismatch);

// strata: the threads format the rank's text, the engine writes every chunk (aligned to
// s.align) in one planned phase. The engine's statistics go to `engine_stats`.
CallTotals write_engine(const Setup& s, const double* memory, Engine& engine, const Hints& hints, bool fsync,
                        nlohmann::json& engine_stats);
CallTotals read_engine(const Setup& s, const double* memory, Engine& engine, const Hints& hints, bool compare,
                       std::optional<std::string>& mismatch, nlohmann::json& engine_stats);

// hdf5: one file, one float64 dataset per dimension (all points of all local problems), written
// collectively from the point-by-point memory through a strided memory selection.
bool have_hdf5();
CallTotals write_hdf5(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints, bool fsync);
CallTotals read_hdf5(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints, bool compare,
                     std::optional<std::string>& mismatch);

}  // namespace strata::mslio
