// A rank's selection flattened into extents: runs of elements contiguous both in the
// variable's row-major global order and in the rank's memory buffer. Backends that speak in
// bytes (posix, MPI-IO) use extents; those that speak in boxes (HDF5 hyperslabs, PnetCDF
// vara) turn a linear run back into a few rectangles.
#pragma once

#include <cstdint>
#include <vector>

#include "decomp/decomposition.hpp"

namespace strata {

struct Extent {
  int var = 0;
  uint64_t elem_begin = 0;  // linear index of the first element in the variable
  uint64_t elems = 0;
  uint64_t mem_offset = 0;  // byte offset in the rank's buffer
};

// Extents in memory order; neighbours contiguous in both file and memory are merged (not across
// blocks when the decomposition keeps its blocks apart).
std::vector<Extent> flatten(const Decomposition& d);

// True when memory order equals the variables' file order (variables in declaration order,
// elements ascending), so a selection iterated in file order reads memory front to back.
bool memory_in_file_order(const std::vector<Extent>& extents);

// The extents restricted to memory bytes [mem_begin, mem_end): one transfer step.
std::vector<Extent> clip_to_memory(const Decomposition& d, const std::vector<Extent>& extents, uint64_t mem_begin,
                                   uint64_t mem_end);

// Splits extents so none exceeds `max_bytes` (0: no limit); for independent requests of
// IOR's transfer size.
std::vector<Extent> split_extents(const Decomposition& d, const std::vector<Extent>& extents, uint64_t max_bytes);

struct Box {
  std::vector<uint64_t> start;
  std::vector<uint64_t> count;
};

// The fewest row-major-aligned rectangles covering linear elements [begin, begin+n) of an
// array of `shape` (at most 2·ndims−1 boxes), in file order.
std::vector<Box> linear_range_to_boxes(const std::vector<uint64_t>& shape, uint64_t begin, uint64_t n);

// Rank `rank` of `ranks` readers' share of every variable: an even split of each variable's
// elements in row-major order, as boxes. Used to read data written by another rank count.
Decomposition even_share(const std::vector<Variable>& variables, int rank, int ranks);

// The elements a set of writers covered: per variable, sorted disjoint linear intervals
// [begin, end). Elements in none (a PIO map's holes, cells no rank owns) were never written.
using Coverage = std::vector<std::vector<std::pair<uint64_t, uint64_t>>>;
// Adds decomposition `d`'s elements to `into` (sized to d's variables when empty), merged.
void add_coverage(const Decomposition& d, Coverage& into);
// Adds linear element interval [begin, end) of variable `var` (unmerged: merge_coverage after).
void add_coverage(Coverage& into, size_t var, uint64_t begin, uint64_t end);
// Sorts and merges every variable's intervals.
void merge_coverage(Coverage& c);
// The even share of the covered elements (merged) only: a reader never checks an element nobody
// wrote.
Decomposition even_share(const std::vector<Variable>& variables, const Coverage& covered, int rank, int ranks);

}  // namespace strata
