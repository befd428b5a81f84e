/* Calls the drop-in layer must pass through to the real MPI-IO, each beside one ordinary collective
 * write (which it may take): atomic mode, the shared file pointer (MPI_File_write_ordered and its
 * split form), the external32 data representation, nonblocking collectives
 * (MPI_File_iwrite_all, MPI_File_iwrite_at_all). Also (f90, not ineligible) a view that odd ranks tile
 * with a Fortran 90 integer type (MPI_COMBINER_F90_INTEGER, a predefined type the layer must decode
 * and never free). Used by the preload tests: the output must be the
 * same with and without the preload, and the preload's report must count each passed-through call
 * with its reason.
 *
 *   ineligible MODES OUTPUT     MODES: a comma-separated list of atomic, shared, external32,
 *                               nonblocking, f90; or all
 *
 * Every rank writes N ints in each of several regions, rank-interleaved through a vector view. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000 };

static int failed;

static void check(int err, const char* what) {
  if (err != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "ineligible: %s: %s\n", what, msg);
    failed = 1;
  }
}

/* Region `region` of the file: ranks interleaved in blocks of 10 ints. */
static void view_of(MPI_File fh, int region, int rank, int nprocs, const char* datarep, MPI_Datatype element) {
  MPI_Datatype blocks, tiled;
  MPI_Type_vector(N / 10, 10, 10 * nprocs, element, &blocks);
  MPI_Type_create_resized(blocks, 0, (MPI_Aint)N * nprocs * sizeof(int), &tiled);
  MPI_Type_commit(&tiled);
  MPI_Offset disp = (MPI_Offset)region * N * nprocs * sizeof(int) + (MPI_Offset)rank * 10 * sizeof(int);
  check(MPI_File_set_view(fh, disp, MPI_INT, tiled, datarep, MPI_INFO_NULL), "MPI_File_set_view");
  MPI_Type_free(&blocks);
  MPI_Type_free(&tiled);
}

static void view(MPI_File fh, int region, int rank, int nprocs, const char* datarep) {
  view_of(fh, region, rank, nprocs, datarep, MPI_INT);
}

/* Whether `mode` (a comma-separated list, or "all") names `what`. */
static int wants(const char* mode, const char* what) {
  if (strcmp(mode, "all") == 0) return 1;
  size_t n = strlen(what);
  for (const char* p = mode; (p = strstr(p, what)) != NULL; p += n)
    if ((p == mode || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
  return 0;
}

static void fill(int* buf, int region, int rank) {
  for (int i = 0; i < N; ++i) buf[i] = region * 10000000 + rank * 10000 + i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc != 3) {
    if (rank == 0) fprintf(stderr, "usage: ineligible atomic,shared,external32,nonblocking|all OUTPUT\n");
    MPI_Finalize();
    return 2;
  }
  const char* mode = argv[1];
  MPI_File fh;
  check(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "MPI_File_open");
  int* buf = malloc(N * sizeof(int));
  MPI_Status st;
  int region = 0;

  /* the ordinary collective write the layer may take */
  view(fh, region, rank, nprocs, "native");
  fill(buf, region++, rank);
  check(MPI_File_write_all(fh, buf, N, MPI_INT, &st), "MPI_File_write_all");

  if (wants(mode, "atomic")) {
    check(MPI_File_set_atomicity(fh, 1), "MPI_File_set_atomicity(1)");
    view(fh, region, rank, nprocs, "native");
    fill(buf, region++, rank);
    check(MPI_File_write_all(fh, buf, N, MPI_INT, &st), "MPI_File_write_all (atomic)");
    fill(buf, region, rank);
    check(MPI_File_write_at_all(fh, N, buf, N, MPI_INT, &st), "MPI_File_write_at_all (atomic)");
    ++region;
    check(MPI_File_set_atomicity(fh, 0), "MPI_File_set_atomicity(0)");
  }
  if (wants(mode, "shared")) {
    /* the shared pointer: rank order, contiguous pieces, from the start of a new region */
    check(
        MPI_File_set_view(fh, (MPI_Offset)region * N * nprocs * sizeof(int), MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
        "MPI_File_set_view (shared)");
    fill(buf, region++, rank);
    check(MPI_File_write_ordered(fh, buf, N / 2, MPI_INT, &st), "MPI_File_write_ordered");
    check(MPI_File_write_ordered_begin(fh, buf + N / 2, N - N / 2, MPI_INT), "MPI_File_write_ordered_begin");
    check(MPI_File_write_ordered_end(fh, buf + N / 2, &st), "MPI_File_write_ordered_end");
  }
  if (wants(mode, "external32")) {
    view(fh, region, rank, nprocs, "external32");
    fill(buf, region++, rank);
    check(MPI_File_write_all(fh, buf, N, MPI_INT, &st), "MPI_File_write_all (external32)");
  }
  if (wants(mode, "nonblocking")) {
    MPI_Request req;
    view(fh, region, rank, nprocs, "native");
    fill(buf, region++, rank);
    check(MPI_File_iwrite_all(fh, buf, N, MPI_INT, &req), "MPI_File_iwrite_all");
    check(MPI_Wait(&req, &st), "MPI_Wait (iwrite_all)");
    int* more = malloc(N * sizeof(int));
    fill(more, region, rank);
    check(MPI_File_iwrite_at_all(fh, N, more, N, MPI_INT, &req), "MPI_File_iwrite_at_all");
    check(MPI_Wait(&req, &st), "MPI_Wait (iwrite_at_all)");
    ++region;
    free(more);
  }
  if (wants(mode, "f90")) {
    MPI_Datatype f90 = MPI_INT; /* a 4-byte integer either way */
    if (rank % 2 == 1) check(MPI_Type_create_f90_integer(9, &f90), "MPI_Type_create_f90_integer");
    int size = 0;
    MPI_Type_size(f90, &size);
    if (size != (int)sizeof(int)) f90 = MPI_INT;
    view_of(fh, region, rank, nprocs, "native", f90);
    fill(buf, region++, rank);
    check(MPI_File_write_all(fh, buf, N, MPI_INT, &st), "MPI_File_write_all (f90)");
    fill(buf, region, rank);
    check(MPI_File_write_at_all(fh, N, buf, N, MPI_INT, &st), "MPI_File_write_at_all (f90)");
    ++region;
  }
  /* an ordinary collective write again after the ineligible ones */
  view(fh, region, rank, nprocs, "native");
  fill(buf, region, rank);
  check(MPI_File_write_at_all(fh, 0, buf, N, MPI_INT, &st), "MPI_File_write_at_all");
  check(MPI_File_close(&fh), "MPI_File_close");
  free(buf);
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
