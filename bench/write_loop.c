/* The plainest writer of IOR's pattern, for bench/peers.py: each rank writes -s segments of its
 * -b block in -t transfers into a shared file (or a file per process with -F), with pwrite
 * (--api posix), MPI_File_write_at_all at explicit offsets (--api mpiio-coll, as IOR -a MPIIO
 * -c) or a collective H5Dwrite of a hyperslab per transfer (--api hdf5, a shared file only: one
 * dataset of bytes made as strata's hdf5 backend makes it — newest format, metadata written
 * collectively, contiguous, allocated early, never filled) or a collective ncmpi_put_vara_all per
 * transfer (--api pnetcdf, a shared file only: one CDF-5 variable of unsigned bytes, no fill, as
 * strata's pnetcdf backend makes it), timed as strata run times a write: a barrier, open, the writes, close, one
 * agreement (MPI_Allreduce of the outcome), the slowest rank's time. The data is either one transfer-sized buffer
 * written again and again (--reuse: what IOR writes) or the rank's whole distinct data
 * (--distinct: what Strata writes, each byte known so it can be verified). The two figures side
 * by side show how much of a gap to IOR is the data's.
 *
 * usage: mpirun -n N write_loop --api posix|mpiio-coll|hdf5|pnetcdf --reuse|--distinct -b BYTES -t BYTES
 *        -s SEGMENTS [-F] -i REPS -o PATH [--keep]
 * prints on rank 0 one JSON object: {"seconds": [...], "bytes": total bytes per write}. The file
 * (PATH, or PATH.RRRRRRRR per rank with -F) is removed at the end unless --keep: then it holds the
 * last repetition's bytes (tests/python/test_write_loop.py reads them back). */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <pnetcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char* what, const char* path) {
  fprintf(stderr, "write_loop: %s %s: %s\n", what, path, strerror(errno));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_mpi(int rc, const char* what, const char* path) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fprintf(stderr, "write_loop: %s %s: %s\n", what, path, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_h5(long long rc, const char* what, const char* path) {
  if (rc >= 0) return;
  fprintf(stderr, "write_loop: %s %s failed\n", what, path);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* --api hdf5: the file and its one dataset (every rank's segments, in IOR's order). */
static hid_t h5_create(const char* path, uint64_t total, hid_t* dataset) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  check_h5(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio", path);
  check_h5(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds", path);
  check_h5(H5Pset_coll_metadata_write(fapl, 1), "H5Pset_coll_metadata_write", path);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  check_h5(file, "H5Fcreate", path);
  H5Pclose(fapl);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  check_h5(H5Pset_layout(dcpl, H5D_CONTIGUOUS), "H5Pset_layout", path);
  check_h5(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time", path);
  check_h5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time", path);
  hsize_t dims = total;
  hid_t space = H5Screate_simple(1, &dims, NULL);
  *dataset = H5Dcreate2(file, "data", H5T_NATIVE_UCHAR, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check_h5(*dataset, "H5Dcreate2", path);
  H5Sclose(space);
  H5Pclose(dcpl);
  return file;
}

static void check_nc(int rc, const char* what, const char* path) {
  if (rc == NC_NOERR) return;
  fprintf(stderr, "write_loop: %s %s: %s\n", what, path, ncmpi_strerror(rc));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static uint64_t size_arg(const char* s) {
  char* end = NULL;
  uint64_t v = strtoull(s, &end, 10);
  switch (*end) {
    case 'k':
    case 'K': return v << 10;
    case 'm':
    case 'M': return v << 20;
    case 'g':
    case 'G': return v << 30;
    default: return v;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reuse = -1, fpp = 0, keep = 0, reps = 1, api = -1; /* 0 posix, 1 mpiio-coll, 2 hdf5, 3 pnetcdf */
  uint64_t block = 0, transfer = 0, segments = 1;
  const char* out = NULL;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--api")) {
      ++i;
      api = !strcmp(argv[i], "pnetcdf")      ? 3
            : !strcmp(argv[i], "hdf5")       ? 2
            : !strcmp(argv[i], "mpiio-coll") ? 1
            : !strcmp(argv[i], "posix")      ? 0
                                             : -1;
    } else if (!strcmp(argv[i], "--reuse")) reuse = 1;
    else if (!strcmp(argv[i], "--distinct")) reuse = 0;
    else if (!strcmp(argv[i], "-F")) fpp = 1;
    else if (!strcmp(argv[i], "--keep")) keep = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "-b")) block = size_arg(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "-t")) transfer = size_arg(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "-s")) segments = size_arg(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "-i")) reps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "-o")) out = argv[++i];
    else {
      if (rank == 0) fprintf(stderr, "write_loop: unknown argument %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (reuse < 0 || api < 0 || (api >= 2 && fpp) || !out || !block || !transfer || block % transfer || reps < 1 ||
      transfer > (1u << 30)) {
    if (rank == 0)
      fprintf(stderr,
              "usage: write_loop --api posix|mpiio-coll|hdf5|pnetcdf --reuse|--distinct -b B -t T -s S [-F: posix, "
              "mpiio-coll] -i REPS "
              "-o PATH [--keep]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[4096];
  if (fpp) snprintf(path, sizeof path, "%s.%08d", out, rank);
  else snprintf(path, sizeof path, "%s", out);
  const uint64_t local = block * segments;
  unsigned char* buf = malloc(reuse ? transfer : local);
  if (!buf) fail("cannot allocate for", path);
  double* seconds = malloc(sizeof(double) * (size_t)reps);
  for (int r = 0; r < reps; ++r) {
    /* Fresh values every repetition, made before the clock starts, as strata run does. */
    const uint64_t n = reuse ? transfer : local;
    for (uint64_t k = 0; k < n; k += 8) {
      const uint64_t v = ((uint64_t)rank << 40) ^ ((uint64_t)r << 32) ^ k;
      memcpy(buf + k, &v, n - k < 8 ? n - k : 8);
    }
    if (fpp || rank == 0) unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    int fd = -1;
    MPI_File fh = MPI_FILE_NULL;
    hid_t file = -1, dataset = -1, filespace = -1, memspace = -1, dxpl = -1;
    int ncid = -1, varid = -1;
    if (api == 3) {
      check_nc(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid), "ncmpi_create",
               path);
      int old = 0, dim = -1;
      check_nc(ncmpi_set_fill(ncid, NC_NOFILL, &old), "ncmpi_set_fill", path);
      check_nc(ncmpi_def_dim(ncid, "n", (MPI_Offset)(local * (uint64_t)size), &dim), "ncmpi_def_dim", path);
      check_nc(ncmpi_def_var(ncid, "data", NC_UBYTE, 1, &dim, &varid), "ncmpi_def_var", path);
      check_nc(ncmpi_enddef(ncid), "ncmpi_enddef", path);
    } else if (api == 2) {
      file = h5_create(path, local * (uint64_t)size, &dataset);
      filespace = H5Dget_space(dataset);
      hsize_t t = transfer;
      memspace = H5Screate_simple(1, &t, NULL);
      dxpl = H5Pcreate(H5P_DATASET_XFER);
      check_h5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio", path);
    } else if (api == 1) {
      check_mpi(MPI_File_open(fpp ? MPI_COMM_SELF : MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                              MPI_INFO_NULL, &fh),
                "cannot open", path);
    } else if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
      fail("cannot open", path);
    }
    for (uint64_t s = 0; s < segments; ++s) {
      for (uint64_t k = 0; k < block; k += transfer) {
        const uint64_t off = fpp ? s * block + k : (s * (uint64_t)size + (uint64_t)rank) * block + k;
        const unsigned char* p = reuse ? buf : buf + s * block + k;
        if (api == 3) {
          const MPI_Offset start = (MPI_Offset)off, count = (MPI_Offset)transfer;
          check_nc(ncmpi_put_vara_uchar_all(ncid, varid, &start, &count, p), "ncmpi_put_vara_all", path);
          continue;
        }
        if (api == 2) {
          hsize_t start = off, count = transfer;
          check_h5(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &start, NULL, &count, NULL), "H5Sselect_hyperslab",
                   path);
          check_h5(H5Dwrite(dataset, H5T_NATIVE_UCHAR, memspace, filespace, dxpl, p), "H5Dwrite", path);
          continue;
        }
        if (api == 1) {
          check_mpi(MPI_File_write_at_all(fh, (MPI_Offset)off, p, (int)transfer, MPI_BYTE, MPI_STATUS_IGNORE),
                    "cannot write", path);
          continue;
        }
        uint64_t done = 0;
        while (done < transfer) {
          const ssize_t w = pwrite(fd, p + done, transfer - done, (off_t)(off + done));
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) fail("cannot write", path);
          done += (uint64_t)w;
        }
      }
    }
    if (api == 3) {
      check_nc(ncmpi_close(ncid), "ncmpi_close", path);
    } else if (api == 2) {
      H5Pclose(dxpl);
      H5Sclose(memspace);
      H5Sclose(filespace);
      H5Dclose(dataset);
      check_h5(H5Fclose(file), "H5Fclose", path);
    } else if (api == 1) check_mpi(MPI_File_close(&fh), "cannot close", path);
    else if (close(fd) != 0) fail("cannot close", path);
    int ok = 1, all_ok = 0; /* the one agreement a careful writer makes, as strata's at close */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const double mine = MPI_Wtime() - t0;
    MPI_Reduce(&mine, &seconds[r], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  if (rank == 0) {
    printf("{\"bytes\": %llu, \"seconds\": [", (unsigned long long)(local * (uint64_t)size));
    for (int r = 0; r < reps; ++r) printf("%s%.9f", r ? ", " : "", seconds[r]);
    printf("]}\n");
  }
  if (!keep && (fpp || rank == 0)) unlink(path);
  free(seconds);
  free(buf);
  MPI_Finalize();
  return 0;
}
