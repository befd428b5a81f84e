// One frame's field moved with one of Thakur's four levels of MPI-IO access (Thakur, Gropp,
// Lusk 2002, as recapitulated in section 2.1.1 of the mpiiotester paper):
//   0  independent, Unix-style: an MPI_File_write_at per row of the rank's box
//   1  collective, contiguous: an MPI_File_write_at_all per row
//   2  a file view of the box (a subarray datatype) and one independent MPI_File_write
//   3  the same view and one collective MPI_File_write_all (mpiiotester and PACE3D)
// Reading mirrors each level.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "fs/access.hpp"
#include "kernels/pace3d/pace3d_domain.hpp"

namespace strata::pace3d {

struct FieldTransfer {
  double call_s = 0;   // time inside the write (read) calls, as mpiiotester times them
  uint64_t calls = 0;  // write (read) calls made
};

// Moves the rank's block `buffer` (rows of the box one after another) to or from the field that
// starts at byte `field_offset` of `fh`. Collective over the file's communicator for levels 1
// and 3, and for the file view of level 2. Leaves the file's view at bytes from offset 0.
// Throws on an MPI error or a short read.
FieldTransfer transfer_field(MPI_File fh, Access access, uint64_t field_offset, const Domain& d, int level,
                             MPI_Datatype filetype, std::byte* buffer);

}  // namespace strata::pace3d
