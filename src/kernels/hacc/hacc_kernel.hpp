// hacc: HACC-IO, the I/O kernel of the HACC cosmology code (aggregation paper, section 5.4).
// Every rank holds --particles particles of nine fields: the position XX, YY, ZZ, the velocity
// VX, VY, VZ and the potential phi (float32), the particle id pid (int64) and mask (uint16):
// 38 bytes per particle; 25 000 particles make about 1 MB per rank.
//
// Rank r holds the particles [r·n, (r+1)·n) of the N = ranks·n in the output.
//   --layout soa  structure of arrays: nine variables XX[N] ... mask[N]; a shared file holds the
//                 nine global arrays one after another, a rank's memory (and its file per process)
//                 its nine arrays one after another.
//   --layout aos  array of structures: one variable particles[N][38] of uint8 records, each
//                 particle's nine fields together in the order above, packed. HDF5 and PnetCDF
//                 see a [N, 38] byte array; the record's fields carry the same values as the
//                 SoA variables of the same names.
#pragma once

#include "kernels/kernel.hpp"

namespace strata {

// The nine fields of a HACC particle, in file order.
const std::vector<RecordField>& hacc_particle_fields();

class HaccKernel final : public Kernel {
 public:
  std::string name() const override { return "hacc"; }
  std::string summary() const override { return "HACC-IO: 9 particle fields, 38 B/particle, --layout aos|soa"; }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
  std::vector<KernelTest> tests() const override;
};

}  // namespace strata
