// PACE3D's voxel-file output as mpiiotester reproduces it (Seiz et al., "Lustre I/O performance
// investigations on Hazel Hen: experiments and heuristics", J. Supercomput. 2021, sections 2.1,
// 4.1-4.3 and the appendix): every rank converts its double-precision block to float into an
// output buffer and the frames of a voxel file are written with one of Thakur's I/O levels, in
// one file (sf) or a file per frame (mf, mf-wo); write times are taken per rank and per frame
// around the write call, the first frame is reported apart, and the write rate uses the median
// over ranks.
#pragma once

#include "kernels/app_kernel.hpp"

namespace strata {

class Pace3dKernel final : public AppKernel {
 public:
  Pace3dKernel();
  void add_options(OptionSet& options) const override;
  std::unique_ptr<AppRun> prepare(const OptionSet& options, const AppContext& ctx, bool will_write) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
