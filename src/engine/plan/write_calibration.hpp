// The job's own writes against the model. The model prices a write from the machine's figures,
// probed once; on a shared host the same writes take, from one launch to the next, anywhere from
// one to three times as long (the memory bandwidth the neighbours take, which pages the guest
// holds: 60 to 215 us a MiB for four processes rewriting 16 MiB of cached pages on this project's
// 2-core VM, steady within a launch), and a node's cores shared by more ranks add waits the
// figures cannot hold. So the engine compares each write's measured write-and-close (the slowest
// rank's execute + close) with the model's price for that part, and predicts the next writes into
// the same kind of file (new pages, or the recycled file's) at the model's price times the median
// of the last few of those ratios. The plan's part (or its reuse) stays the model's alone, and so
// does the choice of strategy. Every rank sees the same reduced times and the same prices, so
// every rank keeps the same ratios. Pure: no MPI, no files.
//
// Earlier jobs' ratios (engine/write_history.hpp) seed a job's first writes: a plan's key (the
// declarations, engine/plan_cache.hpp) and the kind of file name the ratios that the last jobs on
// these figures measured for the same writes. A launch's first writes into new pages take what
// the guest happens to hold (on this project's VM, 32 MiB in 4 MiB requests by four processes:
// 0.2-0.5 ms a MiB into pages just freed, 2.5-3.2 into pages the host took back); the same
// writes' last launches say more about that than the figures do.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace strata::engine {

// Ratios of one plan's writes into one kind of file, oldest first, and when they were last added
// to (Unix seconds).
struct WriteRecord {
  uint64_t key = 0;
  bool recycled = false;
  std::vector<double> ratios;
  int64_t time = 0;
};

class WriteCalibration {
 public:
  // Ratios kept per kind of file: enough for a median that one odd write cannot move.
  static constexpr size_t kKept = 3;
  // A ratio never goes beyond these: a write that met something else (a stopped process, a
  // flush of the whole cache) must not make the engine predict every later write a hundred
  // times over.
  static constexpr double kLowest = 0.1, kHighest = 10;
  // Writes the model priced shorter than this say more about the clock than about the machine:
  // not observed.
  static constexpr double kShortest_s = 50e-6;

  // Earlier jobs' records (their ratios clamped, at most kKept of each kept).
  void seed(const std::vector<WriteRecord>& earlier);
  // A write's write-and-close as the model priced it and as it took (the slowest rank's), into a
  // recycled file or not, by the plan of key `key`. False when not observed.
  bool observe(bool recycled, uint64_t key, double model_s, double measured_s);
  // The ratio to predict the next such write by: of the earlier jobs' ratios for this plan and
  // kind of file followed by this job's for the kind, the last kKept; their median (of two, their
  // mean; 1: none).
  double ratio(bool recycled, uint64_t key) const;
  size_t observed(bool recycled) const { return recent_[recycled ? 1 : 0].size(); }
  // What the next job should start from: for each plan and kind of file this job observed, the
  // earlier ratios followed by this job's for that plan, the last kKept, dated `now`.
  std::vector<WriteRecord> learned(int64_t now) const;

 private:
  using Key = std::pair<uint64_t, bool>;
  std::array<std::vector<double>, 2> recent_;   // [new, recycled]: the last kKept ratios, oldest first
  std::map<Key, std::vector<double>> earlier_;  // earlier jobs', oldest first
  std::map<Key, std::vector<double>> mine_;     // this job's, by plan, oldest first (the last kKept)
};

}  // namespace strata::engine
