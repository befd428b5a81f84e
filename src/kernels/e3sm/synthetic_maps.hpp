// Synthetic decompositions shaped like E3SM's, as PIO maps (so `strata decomp` can write them
// and the e3sm kernel treats them exactly like real ones).
//
// Columns are cut into runs of 1 to `max_run` neighbours, each run owned by a seeded random
// rank: the F case's spectral-element columns. A 2-D map (ncol) lists a rank's runs; a 3-D map
// (lev x ncol, Fortran dims "ncol lev") repeats them on every level, as E3SM's D3 does. The G
// case's cells-by-levels map (dims "nlev ncells") lists whole columns of cells, the cells of a
// rank in a shuffled order (MPAS meshes are permuted across ranks).
#pragma once

#include <cstdint>

#include "kernels/e3sm/pio_map.hpp"

namespace strata {

struct ColumnMapSpec {
  uint64_t columns = 0;  // ncol (F) or ncells (G)
  uint64_t levels = 0;   // 0: a 2-D map of columns only
  int npes = 1;
  uint64_t max_run = 16;  // longest run of neighbouring columns one rank owns
  uint64_t seed = 1;
  bool shuffled = false;        // a rank lists its runs in a shuffled order (else ascending)
  bool levels_fastest = false;  // G: each column's levels are contiguous in the file
};

PioMap column_map(const ColumnMapSpec& spec);

}  // namespace strata
