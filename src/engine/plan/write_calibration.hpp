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
// every rank keeps the same ratios. Pure: no MPI.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace strata::engine {

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

  // A write's write-and-close as the model priced it and as it took (the slowest rank's), into a
  // recycled file or not. False when not observed.
  bool observe(bool recycled, double model_s, double measured_s);
  // The ratio to predict the next write into such a file by: the median of the kept ratios (of
  // two, their mean; 1: none yet).
  double ratio(bool recycled) const;
  size_t observed(bool recycled) const { return recent_[recycled ? 1 : 0].size(); }

 private:
  std::array<std::vector<double>, 2> recent_;  // [new, recycled]: the last kKept ratios, oldest first
};

}  // namespace strata::engine
