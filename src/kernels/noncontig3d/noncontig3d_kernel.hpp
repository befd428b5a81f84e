// noncontig3d: the multi-dataset paper's 3-D non-contiguous benchmark (from h5bench): D datasets,
// each a 3-D grid cut into cubes of edge B (paper: 400 datasets, 200 K blocks of 8^3 each,
// 42 GB); every cube goes to a seeded random rank, and each rank holds its cubes in a random
// order in memory (--memory-order file: in file order instead).
#pragma once

#include "kernels/kernel.hpp"

namespace strata {

class Noncontig3dKernel final : public Kernel {
 public:
  std::string name() const override { return "noncontig3d"; }
  std::string summary() const override { return "D datasets of random 8^3 blocks spread over ranks (h5bench)"; }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
