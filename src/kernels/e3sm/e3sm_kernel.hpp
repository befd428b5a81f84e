// e3sm: E3SM's history output pattern (the multi-dataset paper's F and G cases): hundreds of
// variables, each rank holding many short non-contiguous runs of each.
//
// --case f: about 400 float32 variables (most (time, ncol) on decomposition D2, one on D1,
//   about 16 % (time, lev, ncol) on D3 with lev = 72, a few small fixed arrays written whole by
//   rank 0); runs of 1 to --max-run columns scattered over ranks.
// --case g: about 50 float64 variables on an unstructured mesh (most (time, ncells, nlev) with
//   columns of nlev = 100 levels, some (time, ncells)); cells permuted across ranks.
// --maps A.dat,B.dat --map-vars 1,323: real PIO decomposition maps instead (piodecomp*.dat),
//   N float32 variables on each map, a leading time dimension of 1.
#pragma once

#include "kernels/kernel.hpp"

namespace strata {

class E3smKernel final : public Kernel {
 public:
  std::string name() const override { return "e3sm"; }
  std::string summary() const override { return "E3SM F/G-case history output: many variables, short scattered runs"; }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
