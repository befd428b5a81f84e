// MSLIO (Boito, Gomes, Peyrondet, Teylo, WAMCA 2022): the output phase of a multiscale finite
// element simulation (the MHM library). 4^ccross local problems, split among the ranks in
// contiguous chunks and among each rank's OpenMP threads; each writes a text solution file,
// values formatted one by one, dimension by dimension, from point-by-point memory.
// Modes: original, buffered, shared (MPI-IO), strata (the engine, stripe-aligned chunks), hdf5.
#pragma once

#include "kernels/app_kernel.hpp"

namespace strata {

class MslioKernel final : public AppKernel {
 public:
  MslioKernel();
  void add_options(OptionSet& options) const override;
  std::unique_ptr<AppRun> prepare(const OptionSet& options, const AppContext& ctx, bool will_write) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
