/* Collective writes larger than the file system holds (the preload tests mount a small tmpfs):
 * every rank must get an MPI error back, as MPI-IO would return it, and the program must end.
 * Each rank writes MIB MiB in 256 KiB pieces, rank-interleaved through a resized vector view, with
 * MPI_File_write_all, then MPI_File_sync and MPI_File_close; every call's error is reported and
 * the program keeps making the same collective calls as the other ranks (a failed call is not a
 * reason to leave the collective sequence).
 *
 *   fill_disk OUTPUT [MIB]
 *
 * Prints "rank R: CALL: error class C (STRING)" for each failed call, and "rank R: errors E" at the
 * end; exits 1 on a rank that saw an error, 0 on one that did not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PIECE = 256 * 1024 };

static int errors;

static void check(int err, int rank, const char* what) {
  if (err != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len, cls;
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    printf("rank %d: %s: error class %d (%s)\n", rank, what, cls, msg);
    fflush(stdout);
    ++errors;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: fill_disk OUTPUT [MIB]\n");
    MPI_Finalize();
    return 2;
  }
  int mib = argc > 2 ? atoi(argv[2]) : 4;
  MPI_File fh;
  int err = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  check(err, rank, "MPI_File_open");
  if (err == MPI_SUCCESS) {
    MPI_Datatype piece, tiled;
    MPI_Type_contiguous(PIECE, MPI_BYTE, &piece);
    MPI_Type_create_resized(piece, 0, (MPI_Aint)PIECE * nprocs, &tiled);
    MPI_Type_commit(&tiled);
    check(MPI_File_set_view(fh, (MPI_Offset)rank * PIECE, MPI_BYTE, tiled, "native", MPI_INFO_NULL), rank,
          "MPI_File_set_view");
    char* buf = malloc(PIECE);
    for (int k = 0; k < mib * 4; ++k) {
      memset(buf, 'a' + (rank + k) % 26, PIECE);
      check(MPI_File_write_all(fh, buf, PIECE, MPI_BYTE, MPI_STATUS_IGNORE), rank, "MPI_File_write_all");
    }
    check(MPI_File_sync(fh), rank, "MPI_File_sync");
    check(MPI_File_close(&fh), rank, "MPI_File_close");
    MPI_Type_free(&piece);
    MPI_Type_free(&tiled);
    free(buf);
  }
  printf("rank %d: errors %d\n", rank, errors);
  MPI_Finalize();
  return errors ? 1 : 0;
}
