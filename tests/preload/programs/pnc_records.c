/* A PnetCDF program as a user would write it: record variables over an unlimited time dimension,
 * a fixed-size variable, global and variable attributes; each record written with
 * ncmpi_put_vara_all (one variable) and with ncmpi_iput_vara + ncmpi_wait_all (several variables
 * at once), a strided ncmpi_put_vars_all, and ranks that write nothing (the time variable). Used by the preload
 * tests (tests/python/test_preload.py): the output must be the same with and without
 * libstrata_preload.so.
 *
 *   pnc_records OUTPUT.nc [RECORDS] [NX] [NY] [--sync]
 *
 * --sync: ncmpi_sync after every record (a program that makes each time step durable), so the
 * drop-in layer writes each record in a phase of its own: the same layout a record further on.
 *
 * Exits non-zero (on every rank) when any PnetCDF call fails. */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    int err_ = (call);                                                                           \
    if (err_ != NC_NOERR) {                                                                      \
      fprintf(stderr, "pnc_records: %s: %s (line %d)\n", #call, ncmpi_strerror(err_), __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    }                                                                                            \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  int sync = 0;
  if (argc > 2 && strcmp(argv[argc - 1], "--sync") == 0) {
    sync = 1;
    --argc;
  }
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: pnc_records OUTPUT.nc [RECORDS] [NX] [NY] [--sync]\n");
    MPI_Finalize();
    return 2;
  }
  const int records = argc > 2 ? atoi(argv[2]) : 5;
  const MPI_Offset nx = argc > 3 ? atoll(argv[3]) : 50;
  const MPI_Offset ny = argc > 4 ? atoll(argv[4]) : 6 * nprocs;

  int ncid, dim_t, dim_y, dim_x, dim_s;
  CHECK(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid));
  CHECK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dim_t));
  CHECK(ncmpi_def_dim(ncid, "y", ny, &dim_y));
  CHECK(ncmpi_def_dim(ncid, "x", nx, &dim_x));
  CHECK(ncmpi_def_dim(ncid, "station", 3 * nprocs, &dim_s));
  int d3[3] = {dim_t, dim_y, dim_x}, d2[2] = {dim_y, dim_x}, ds[2] = {dim_t, dim_s};
  int v_temp, v_wind, v_mask, v_obs, v_time;
  CHECK(ncmpi_def_var(ncid, "temp", NC_FLOAT, 3, d3, &v_temp));
  CHECK(ncmpi_def_var(ncid, "wind", NC_DOUBLE, 3, d3, &v_wind));
  CHECK(ncmpi_def_var(ncid, "mask", NC_INT, 2, d2, &v_mask));
  CHECK(ncmpi_def_var(ncid, "obs", NC_SHORT, 2, ds, &v_obs));
  CHECK(ncmpi_def_var(ncid, "time", NC_DOUBLE, 1, &dim_t, &v_time));
  CHECK(ncmpi_put_att_text(ncid, NC_GLOBAL, "title", 21, "preload proof program"));
  CHECK(ncmpi_put_att_text(ncid, v_temp, "units", 1, "K"));
  CHECK(ncmpi_enddef(ncid));

  /* Rows split over ranks, unevenly: rank r gets rows [y0, y0+ly). */
  MPI_Offset ly = ny / nprocs + (rank < ny % nprocs);
  MPI_Offset y0 = rank * (ny / nprocs) + (rank < ny % nprocs ? rank : ny % nprocs);
  size_t n = (size_t)(ly * nx);
  float* temp = malloc((n + 1) * sizeof(float));
  double* wind = malloc((n + 1) * sizeof(double));
  int* mask = malloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; ++i) mask[i] = (int)((y0 * nx + (MPI_Offset)i) % 7);
  MPI_Offset start2[2] = {y0, 0}, count2[2] = {ly, nx};
  CHECK(ncmpi_put_vara_int_all(ncid, v_mask, start2, count2, mask));

  for (int t = 0; t < records; ++t) {
    for (size_t i = 0; i < n; ++i) {
      temp[i] = 250.0f + t + (float)(y0 * nx + (MPI_Offset)i) * 0.001f;
      wind[i] = -t - (double)(y0 * nx + (MPI_Offset)i) * 1e-6;
    }
    MPI_Offset start3[3] = {t, y0, 0}, count3[3] = {1, ly, nx};
    if (t % 2 == 0) {
      /* blocking collective, one variable at a time */
      CHECK(ncmpi_put_vara_float_all(ncid, v_temp, start3, count3, temp));
      CHECK(ncmpi_put_vara_double_all(ncid, v_wind, start3, count3, wind));
    } else {
      /* nonblocking requests, flushed together */
      int req[2], st[2];
      CHECK(ncmpi_iput_vara_float(ncid, v_temp, start3, count3, temp, &req[0]));
      CHECK(ncmpi_iput_vara_double(ncid, v_wind, start3, count3, wind, &req[1]));
      CHECK(ncmpi_wait_all(ncid, 2, req, st));
      CHECK(st[0]);
      CHECK(st[1]);
    }
    /* obs: rank r owns stations r, r+nprocs, r+2*nprocs (a strided put). (No rank skips a record:
     * PnetCDF does not fill, and ROMIO's read-modify-write leaves stale memory in a hole past the end
     * of the file, so a hole's bytes would differ between runs through different paths.) */
    short obs[3] = {(short)(t * 100 + rank), (short)(t * 100 + rank + 30), (short)(t * 100 + rank + 60)};
    MPI_Offset ostart[2] = {t, rank}, ocount[2] = {1, 3}, ostride[2] = {1, nprocs};
    CHECK(ncmpi_put_vars_short_all(ncid, v_obs, ostart, ocount, ostride, obs));
    double when = 3600.0 * t;
    MPI_Offset tstart = t, tcount = rank == 0 ? 1 : 0;
    CHECK(ncmpi_put_vara_double_all(ncid, v_time, &tstart, &tcount, &when));
    if (sync) CHECK(ncmpi_sync(ncid));
  }
  CHECK(ncmpi_close(ncid));
  free(temp);
  free(wind);
  free(mask);
  MPI_Finalize();
  return 0;
}
