// PIO's text decomposition maps (the `piodecomp*.dat` files E3SM writes): which global
// elements each rank holds, in the rank's memory order.
//
//   version 2001 npes N ndims D
//   d1 d2 ... dD              dimension sizes as PIO writes them (fastest first, Fortran order)
//   r count                   for each rank r = 0 .. N-1: its rank and number of entries,
//   o1 o2 ... o_count         then on the next line its 1-based linear offsets (0 = padding)
//
// Anything after the N-th rank (PIO appends a stack trace) is ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "decomp/decomposition.hpp"

namespace strata {

struct PioMap {
  int npes = 0;
  std::vector<uint64_t> dims;                  // as in the file: fastest first
  std::vector<std::vector<uint64_t>> offsets;  // per rank, 1-based, 0 = padding

  // Row-major (C order, slowest first) shape of the mapped array: dims reversed.
  std::vector<uint64_t> shape() const;
  uint64_t elements() const;
};

// Reads and checks a map: header, dimension line, each rank's count against its offsets, every
// offset within the dimensions. Throws a usage Error naming the file, the line and the problem.
PioMap read_pio_map(const std::string& path);
// Parses map text; `name` is used in messages.
PioMap parse_pio_map(const std::string& text, const std::string& name);
// E3SM-IO's own decomposition file (FILE.nc from its dat2nc, e.g. map_f_case_16p.nc): every
// decomposition it holds, as the PIO maps it was made from (pio_map_nc.cpp). A usage Error on a
// file of another kind.
std::vector<PioMap> read_e3sm_maps(const std::string& path);
// True for a name that read_e3sm_maps reads (.nc), not read_pio_map.
bool is_e3sm_map_file(const std::string& path);
// Writes a map in the same format.
void write_pio_map(const PioMap& map, const std::string& path);

// The blocks of variable `var` (row-major shape `lead` + map.shape()) that rank `rank` of
// `ranks` holds: map ranks r, r + ranks, r + 2·ranks, ... (all of them when ranks == npes), each
// run of offsets consecutive in the list, in the file and within one row becoming one block, in
// list order (the rank's memory order). `lead` are extra leading dimensions of size 1 (time).
std::vector<Block> pio_map_blocks(const PioMap& map, int var, int rank, int ranks, size_t lead = 0);

}  // namespace strata
