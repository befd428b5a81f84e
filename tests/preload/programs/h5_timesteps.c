/* A parallel HDF5 program as a user would write it (not in Strata's style): a 2-D field decomposed
 * over a process grid, each rank holding its block with one ghost cell on every side, written for
 * several time steps into three datasets with collective H5Dwrite of hyperslabs, plus a strided
 * per-rank series and attributes. Used by the preload tests (tests/python/test_preload.py): its
 * output must be the same with and without libstrata_preload.so.
 *
 *   h5_timesteps OUTPUT.h5 [STEPS] [NX] [NY]
 *
 * Exits non-zero (on every rank) when any HDF5 call fails. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    if ((call) < 0) {                                                          \
      fprintf(stderr, "h5_timesteps: %s failed (line %d)\n", #call, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

static double field_value(int step, long y, long x, int var) {
  return var * 1000.0 + step * 10.0 + y * 0.01 + x * 0.0001;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: h5_timesteps OUTPUT.h5 [STEPS] [NX] [NY]\n");
    MPI_Finalize();
    return 2;
  }
  const int steps = argc > 2 ? atoi(argv[2]) : 4;
  const hsize_t nx = argc > 3 ? strtoull(argv[3], NULL, 10) : 96;
  const hsize_t ny = argc > 4 ? strtoull(argv[4], NULL, 10) : 40;

  int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Dims_create(nprocs, 2, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Cart_coords(grid, rank, 2, coords);
  /* Uneven blocks: the first (n % p) ranks of a dimension get one more row or column. */
  const hsize_t cy = (hsize_t)coords[0], cx = (hsize_t)coords[1];
  const hsize_t ry = ny % (hsize_t)dims[0], rx = nx % (hsize_t)dims[1];
  hsize_t ly = ny / dims[0] + (cy < ry);
  hsize_t lx = nx / dims[1] + (cx < rx);
  hsize_t y0 = cy * (ny / dims[0]) + (cy < ry ? cy : ry);
  hsize_t x0 = cx * (nx / dims[1]) + (cx < rx ? cx : rx);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  CHECK(file);
  H5Pclose(fapl);

  /* temperature[step][y][x] (double), pressure[step][y][x] (float), series[step][nprocs*4] (int). */
  hsize_t fdims[3] = {(hsize_t)steps, ny, nx};
  hid_t fspace = H5Screate_simple(3, fdims, NULL);
  hid_t temp = H5Dcreate2(file, "temperature", H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t pres = H5Dcreate2(file, "pressure", H5T_NATIVE_FLOAT, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(temp);
  CHECK(pres);
  const hsize_t per_rank = 4;
  hsize_t sdims[2] = {(hsize_t)steps, nprocs * per_rank};
  hid_t sspace = H5Screate_simple(2, sdims, NULL);
  hid_t series = H5Dcreate2(file, "series", H5T_NATIVE_INT, sspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(series);

  hid_t ascalar = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(temp, "steps", H5T_NATIVE_INT, ascalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(H5Awrite(attr, H5T_NATIVE_INT, &steps));
  H5Aclose(attr);

  /* The local block with ghost cells: memory is (ly+2) x (lx+2), the interior is written. */
  hsize_t mdims[2] = {ly + 2, lx + 2};
  double* tbuf = malloc(mdims[0] * mdims[1] * sizeof(double));
  float* pbuf = malloc(mdims[0] * mdims[1] * sizeof(float));
  hid_t mspace = H5Screate_simple(2, mdims, NULL);
  hsize_t mstart[2] = {1, 1}, mcount[2] = {ly, lx};
  CHECK(H5Sselect_hyperslab(mspace, H5S_SELECT_SET, mstart, NULL, mcount, NULL));

  hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE));

  for (int step = 0; step < steps; ++step) {
    for (hsize_t j = 0; j < mdims[0]; ++j)
      for (hsize_t i = 0; i < mdims[1]; ++i) {
        /* ghost cells hold garbage a wrong selection would leak into the file */
        int ghost = j == 0 || i == 0 || j == mdims[0] - 1 || i == mdims[1] - 1;
        tbuf[j * mdims[1] + i] = ghost ? -1.0e300 : field_value(step, y0 + j - 1, x0 + i - 1, 1);
        pbuf[j * mdims[1] + i] = ghost ? -7.0f : (float)field_value(step, y0 + j - 1, x0 + i - 1, 2);
      }
    hsize_t fstart[3] = {(hsize_t)step, y0, x0}, fcount[3] = {1, ly, lx};
    hid_t fsel = H5Dget_space(temp);
    CHECK(H5Sselect_hyperslab(fsel, H5S_SELECT_SET, fstart, NULL, fcount, NULL));
    CHECK(H5Dwrite(temp, H5T_NATIVE_DOUBLE, mspace, fsel, xfer, tbuf));
    CHECK(H5Dwrite(pres, H5T_NATIVE_FLOAT, mspace, fsel, xfer, pbuf));
    H5Sclose(fsel);

    /* series: rank r owns columns r, r+nprocs, ... (a strided hyperslab); rank 0 writes nothing
     * at odd steps (a collective call with an empty selection). */
    int vals[4];
    for (hsize_t k = 0; k < per_rank; ++k) vals[k] = step * 100000 + rank * 100 + (int)k;
    hid_t ssel = H5Dget_space(series);
    hsize_t sstart[2] = {(hsize_t)step, (hsize_t)rank}, sstride[2] = {1, (hsize_t)nprocs};
    hsize_t scount[2] = {1, per_rank};
    hid_t smem = H5Screate_simple(1, &per_rank, NULL);
    if (rank == 0 && step % 2 == 1) {
      CHECK(H5Sselect_none(ssel));
      CHECK(H5Sselect_none(smem));
    } else {
      CHECK(H5Sselect_hyperslab(ssel, H5S_SELECT_SET, sstart, sstride, scount, NULL));
    }
    CHECK(H5Dwrite(series, H5T_NATIVE_INT, smem, ssel, xfer, vals));
    H5Sclose(smem);
    H5Sclose(ssel);
    CHECK(H5Fflush(file, H5F_SCOPE_GLOBAL));
  }

  H5Pclose(xfer);
  H5Sclose(mspace);
  H5Sclose(ascalar);
  H5Sclose(fspace);
  H5Sclose(sspace);
  H5Dclose(temp);
  H5Dclose(pres);
  H5Dclose(series);
  CHECK(H5Fclose(file));
  free(tbuf);
  free(pbuf);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
