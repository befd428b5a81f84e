// array1d: the aggregation paper's 1D-Array micro-benchmark (section 5.3). Each rank writes
// one contiguous chunk of a 1-D int32 array into a shared file; chunk sizes are the same for
// every rank (uniform), drawn in [0, size] (random), or normal around size (normal, with
// --stddev, clipped to [0, 2·size]). Sizes are drawn from --seed so every rank knows every
// chunk without communication.
#pragma once

#include <vector>

#include "kernels/kernel.hpp"

namespace strata {

class Array1dKernel final : public Kernel {
 public:
  std::string name() const override { return "array1d"; }
  std::string summary() const override { return "1-D int32 array, one chunk per rank, uniform/random/normal sizes"; }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

// Elements of each rank's chunk, for `ranks` ranks.
std::vector<uint64_t> array1d_counts(const std::string& dist, uint64_t size_elems, double stddev_elems, uint64_t seed,
                                     int ranks);

}  // namespace strata
