// ior: IOR's access pattern. Each rank writes `segments` blocks of `block-size` bytes, in
// requests of `transfer-size` bytes. Strided (IOR's layout): block of rank r in segment s at
// (s·N + r)·b. Sequential: a rank's segments are contiguous, at (r·S + s)·b. With
// --file-per-process each rank's blocks go one after another into its own file, as IOR -F.
#pragma once

#include "kernels/kernel.hpp"

namespace strata {

class IorKernel final : public Kernel {
 public:
  std::string name() const override { return "ior"; }
  std::string summary() const override {
    return "IOR's pattern: -b block, -t transfer, -s segments, strided or sequential";
  }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
