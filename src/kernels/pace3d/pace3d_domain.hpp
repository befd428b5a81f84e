// PACE3D's domain decomposition as mpiiotester runs it: every rank a box of the same shape
// (its block), stacked along the outermost coordinate (1-D) or on a 3-D process grid, and the
// file access of each of Thakur's four I/O levels for that box.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>

#include "common/mpi_handles.hpp"
#include "decomp/decomposition.hpp"

namespace strata::pace3d {

struct Domain {
  uint32_t element_bytes = 4;        // 4 float, 12 float vector, 64 phase-field block
  uint32_t components = 1;           // floats per voxel
  std::array<uint64_t, 3> local{};   // the rank's box: z, y, x (x fastest)
  std::array<int, 3> procs{};        // process grid
  std::array<int, 3> coords{};       // this rank's place in it
  std::array<uint64_t, 3> global{};  // the field
  std::string decomp;                // "1d" or "3d"

  uint64_t local_voxels() const { return local[0] * local[1] * local[2]; }
  uint64_t local_bytes() const { return local_voxels() * element_bytes; }  // the rank's block
  uint64_t global_bytes() const { return global[0] * global[1] * global[2] * element_bytes; }
  uint64_t start(int axis) const { return static_cast<uint64_t>(coords[axis]) * local[axis]; }
  uint64_t rows() const { return local[0] * local[1]; }
  uint64_t row_bytes() const { return local[2] * element_bytes; }
  // Offset in the field of local row (z, y), and of the row in the rank's buffer.
  uint64_t row_file_offset(uint64_t z, uint64_t y) const;
  uint64_t row_memory_offset(uint64_t z, uint64_t y) const { return (z * local[1] + y) * row_bytes(); }
  // The rank's values as a Decomposition of variable "field" (float32, shape z, y, x, components):
  // the common generator fills and checks it.
  Decomposition decomposition() const;
};

// The rank's box for a block of about `block_bytes` (a near-cube of voxels of `element_bytes`).
// Pure: the same on every rank. Throws a usage Error for a block smaller than one voxel.
Domain make_domain(uint64_t block_bytes, uint32_t element_bytes, const std::string& decomp, int rank, int size);

// A balanced 3-D grid of `ranks` processes, largest extent first (as MPI_Dims_create, but
// pure: usable before MPI_Init).
std::array<int, 3> process_grid(int ranks);

// The rank's box in the field as an MPI subarray of bytes (levels 2 and 3).
Datatype field_filetype(const Domain& d);

}  // namespace strata::pace3d
