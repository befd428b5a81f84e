#include "kernels/pace3d/field_io.hpp"

#include <string>

#include "common/error.hpp"

namespace strata::pace3d {

namespace {

void check_count(const MPI_Status& status, uint64_t want, Access access) {
  if (access != Access::read) return;
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  if (static_cast<uint64_t>(got) != want) {
    throw_runtime("the voxel file is too short: read " + std::to_string(got) + " of " + std::to_string(want) +
                  " bytes of a field");
  }
}

}  // namespace

FieldTransfer transfer_field(MPI_File fh, Access access, uint64_t field_offset, const Domain& d, int level,
                             MPI_Datatype filetype, std::byte* buffer) {
  FieldTransfer t;
  const bool write = access == Access::write;
  MPI_Status status;
  if (level == 0 || level == 1) {
    const int n = static_cast<int>(d.row_bytes());
    const double t0 = MPI_Wtime();
    for (uint64_t z = 0; z < d.local[0]; ++z) {
      for (uint64_t y = 0; y < d.local[1]; ++y) {
        const auto at = static_cast<MPI_Offset>(field_offset + d.row_file_offset(z, y));
        std::byte* mem = buffer + d.row_memory_offset(z, y);
        int rc;
        if (level == 0) {
          rc = write ? MPI_File_write_at(fh, at, mem, n, MPI_BYTE, &status)
                     : MPI_File_read_at(fh, at, mem, n, MPI_BYTE, &status);
        } else {
          rc = write ? MPI_File_write_at_all(fh, at, mem, n, MPI_BYTE, &status)
                     : MPI_File_read_at_all(fh, at, mem, n, MPI_BYTE, &status);
        }
        check_mpi(rc, write ? "writing a row of the field" : "reading a row of the field");
        check_count(status, d.row_bytes(), access);
        ++t.calls;
      }
    }
    t.call_s = MPI_Wtime() - t0;
    return t;
  }
  char native[] = "native";
  check_mpi(MPI_File_set_view(fh, static_cast<MPI_Offset>(field_offset), MPI_BYTE, filetype, native, MPI_INFO_NULL),
            "MPI_File_set_view of the field");
  const int n = static_cast<int>(d.local_bytes());
  const double t0 = MPI_Wtime();
  int rc;
  if (level == 2) {
    rc = write ? MPI_File_write(fh, buffer, n, MPI_BYTE, &status) : MPI_File_read(fh, buffer, n, MPI_BYTE, &status);
  } else {
    rc = write ? MPI_File_write_all(fh, buffer, n, MPI_BYTE, &status)
               : MPI_File_read_all(fh, buffer, n, MPI_BYTE, &status);
  }
  t.call_s = MPI_Wtime() - t0;
  t.calls = 1;
  check_mpi(rc, write ? "writing the field" : "reading the field");
  check_count(status, d.local_bytes(), access);
  check_mpi(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, native, MPI_INFO_NULL), "MPI_File_set_view back to bytes");
  return t;
}

}  // namespace strata::pace3d
