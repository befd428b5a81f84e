/* See src/backends/mpiio_timing.h. Linked into the strata program only (its CMake target): a
 * library must not interpose on the MPI-IO and file calls of every program that links it. */
#ifndef _GNU_SOURCE  // HDF5 1.14's CMake package puts it on the command line already
#define _GNU_SOURCE
#endif
// HDF5 1.14's CMake package also puts _FILE_OFFSET_BITS=64 there, which makes pread an alias of
// pread64: this file defines both names, so neither may be renamed.
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <mpi.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "backends/mpiio_timing.h"

static struct strata_mpiio_timing timing;

/* One clock for every process of a node (MPI_Wtime may count from each process's start). */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static _Thread_local int inside; /* this thread is in a collective MPI-IO call */

void strata_mpiio_timing_reset(void) {
  timing.calls = 0;
  timing.inside_s = 0;
  timing.io_s = 0;
  timing.io_calls = 0;
}

const struct strata_mpiio_timing* strata_mpiio_timing_get(void) { return &timing; }

static double enter(void) {
  const double t = now();
  if (timing.calls < sizeof timing.entries / sizeof timing.entries[0]) timing.entries[timing.calls] = t;
  ++timing.calls;
  ++inside;
  return t;
}

static void leave(double t0) {
  --inside;
  timing.inside_s += now() - t0;
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type,
                          MPI_Status* status) {
  const double t0 = enter();
  const int rc = PMPI_File_write_at_all(fh, offset, buf, count, type, status);
  leave(t0);
  return rc;
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  const double t0 = enter();
  const int rc = PMPI_File_read_at_all(fh, offset, buf, count, type, status);
  leave(t0);
  return rc;
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  const double t0 = enter();
  const int rc = PMPI_File_write_all(fh, buf, count, type, status);
  leave(t0);
  return rc;
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  const double t0 = enter();
  const int rc = PMPI_File_read_all(fh, buf, count, type, status);
  leave(t0);
  return rc;
}

/* File-system calls: counted only inside a collective call on this thread. */
#define TIMED(ret_t, name, params, args)                   \
  ret_t name params {                                      \
    static ret_t(*real) params;                            \
    if (!real) *(void**)(&real) = dlsym(RTLD_NEXT, #name); \
    if (!inside) return real args;                         \
    const double t0 = now();                               \
    ret_t rc = real args;                                  \
    timing.io_s += now() - t0;                             \
    ++timing.io_calls;                                     \
    return rc;                                             \
  }

TIMED(ssize_t, pwrite, (int fd, const void* buf, size_t n, off_t off), (fd, buf, n, off))
TIMED(ssize_t, pread, (int fd, void* buf, size_t n, off_t off), (fd, buf, n, off))
TIMED(ssize_t, pwrite64, (int fd, const void* buf, size_t n, off64_t off), (fd, buf, n, off))
TIMED(ssize_t, pread64, (int fd, void* buf, size_t n, off64_t off), (fd, buf, n, off))
TIMED(ssize_t, pwritev, (int fd, const struct iovec* iov, int n, off_t off), (fd, iov, n, off))
TIMED(ssize_t, preadv, (int fd, const struct iovec* iov, int n, off_t off), (fd, iov, n, off))
TIMED(ssize_t, pwritev64, (int fd, const struct iovec* iov, int n, off64_t off), (fd, iov, n, off))
TIMED(ssize_t, preadv64, (int fd, const struct iovec* iov, int n, off64_t off), (fd, iov, n, off))
