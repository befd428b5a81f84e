// s3d: S3D-IO, the I/O kernel of the S3D combustion DNS code (aggregation paper, section 5.5;
// the variables and the file layout follow the public kernel github.com/wkliao/S3D-IO).
//
// A global grid X×Y×Z is split block-block-block over PX×PY×PZ ranks (rank r at
// px = r mod PX, py = (r / PX) mod PY, pz = r / (PX·PY), as the original's topology module).
// Each checkpoint writes four float64 arrays to a new shared file, one after another, each
// row-major with X fastest (the original's Fortran order):
//   yspecies[11][Z][Y][X]  mass fractions of 11 species (the 4th dimension is not split)
//   u[3][Z][Y][X]          velocity
//   pressure[Z][Y][X], temp[Z][Y][X]
// A rank's memory holds its four sub-arrays one after another, each one block.
// --steps N --interval K: a checkpoint at steps K, 2K, ... up to N, each its own file.
#pragma once

#include <array>

#include "kernels/kernel.hpp"

namespace strata {

// Factors `ranks` into three near-equal counts, largest first (what MPI_Dims_create answers).
std::array<uint64_t, 3> balanced_dims(uint64_t ranks);

class S3dKernel final : public Kernel {
 public:
  std::string name() const override { return "s3d"; }
  std::string summary() const override {
    return "S3D-IO: 3-D block decomposition, 4 float64 fields, a file per checkpoint";
  }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
