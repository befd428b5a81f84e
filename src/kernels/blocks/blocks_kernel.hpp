// blocks: random N-D decompositions of several variables — the stress pattern for backends.
// Each variable (element types cycling through float64, int32, float32, int64, uint8, uint64)
// is cut into a grid of tiles at seeded random positions; tiles go to ranks in a seeded
// shuffle (some ranks may get none), and with --memory-order shuffled each rank holds its
// tiles in a random order, so memory is not in file order. Every element of every variable
// is written exactly once.
#pragma once

#include "kernels/kernel.hpp"

namespace strata {

class BlocksKernel final : public Kernel {
 public:
  std::string name() const override { return "blocks"; }
  std::string summary() const override { return "random N-D tiles of several variables, shuffled in memory"; }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
