// How many contiguous intervals the ranks' runs make once put side by side — what an aggregator
// writes when it holds every rank's runs of a partition — estimated without moving the runs.
//
// The ranks' runs are disjoint and each rank's own are coalesced, so two runs touch exactly when
// one's end is another's start. Of the 2R boundaries of R runs, U are distinct: U = 2R - C with
// C the touching pairs, and the intervals are R - C = U - R. Each rank adds its boundaries to a
// HyperLogLog sketch (2^11 one-byte registers); the sketches merge by an element-wise maximum (one
// MPI_Allreduce), and U is estimated within about 2 % of 2R. A decomposition whose runs tile a
// variable (E3SM's maps: millions of runs, a few intervals) is told apart from scattered runs
// (as many intervals as runs), which is what the strategy needs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::engine {

class RunSketch {
 public:
  static constexpr int kBits = 11;
  static constexpr size_t kRegisters = size_t{1} << kBits;

  // Adds the two boundaries of the run [offset, offset + length).
  void add_run(uint64_t offset, uint64_t length);
  // Merges another sketch (what MPI_MAX on the registers does).
  void merge(const RunSketch& other);
  // Estimated distinct boundaries.
  double distinct() const;
  // Estimated intervals of `runs` disjoint runs whose boundaries this sketch holds: U - R,
  // at least 1 and at most `runs`.
  uint64_t intervals(uint64_t runs) const;

  std::array<uint8_t, kRegisters>& registers() { return registers_; }

 private:
  void add(uint64_t value);
  std::array<uint8_t, kRegisters> registers_{};
};

}  // namespace strata::engine
