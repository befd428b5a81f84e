/* The C API of a burst-buffer write (docs/drain.md): a phase with hint strata_drain=true returns
 * from strata_phase_close once on node-local storage; strata_wait_drain gives both moments once
 * the output is durable; a read of the output then finds every rank's values there.
 * Usage: drain_c_api OUTPUT (STRATA_LOCAL_DIR: the node-local storage). Exit 0 when all holds. */
#include <mpi.h>
#include <stdio.h>

#include "strata/strata.h"

#define N 1000

static int fail(int rank, const char* what) {
  fprintf(stderr, "drain_c_api: rank %d: %s: %s\n", rank, what, strata_last_error());
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* out = argc > 1 ? argv[1] : "drain_c_api.dat";
  double x[N], back[N];
  for (int i = 0; i < N; ++i) x[i] = rank * N + i;
  uint64_t dims = (uint64_t)N * (uint64_t)size, start = (uint64_t)rank * N, count = N;
  strata_engine* engine = NULL;
  strata_phase* ph = NULL;
  int v = -1;
  strata_drain_stats d = {0};
  if (strata_engine_create(MPI_COMM_WORLD, &engine) != 0) return fail(rank, "engine");
  if (strata_phase_open(engine, out, STRATA_WRITE, "strata_drain=true", &ph) != 0 ||
      strata_define_variable(ph, "x", sizeof(double), 1, &dims, 0, &v) != 0 ||
      strata_add_subarray(ph, v, &start, &count, x, 0) != 0 || strata_write(ph) != 0) {
    bad = fail(rank, "write");
  }
  if (strata_phase_close(ph, NULL) != 0) bad = fail(rank, "close");
  if (!bad && strata_wait_drain(engine, out, &d) != 0) bad = fail(rank, "wait");
  if (!bad && (d.drained != 1 || d.fallback != 0 || d.bytes != dims * sizeof(double) || d.return_s <= 0 ||
               d.durable_s < d.return_s)) {
    fprintf(stderr, "drain_c_api: rank %d: drained %d, fallback %d, %llu bytes, return %g s, durable %g s\n", rank,
            d.drained, d.fallback, (unsigned long long)d.bytes, d.return_s, d.durable_s);
    bad = 1;
  }
  /* A second wait finds no drain left to wait for: zeros. */
  strata_drain_stats again = {0};
  if (!bad && (strata_wait_drain(engine, out, &again) != 0 || again.durable_s != 0)) bad = fail(rank, "second wait");
  /* Another rank's block, read back from the output itself (no hint: the shared file). */
  uint64_t other = (uint64_t)((rank + 1) % size) * N;
  if (!bad && (strata_phase_open(engine, out, STRATA_READ, NULL, &ph) != 0 ||
               strata_define_variable(ph, "x", sizeof(double), 1, &dims, 0, &v) != 0 ||
               strata_add_subarray(ph, v, &other, &count, back, 0) != 0 || strata_read(ph) != 0 ||
               strata_phase_close(ph, NULL) != 0)) {
    bad = fail(rank, "read");
  }
  for (int i = 0; !bad && i < N; ++i) {
    if (back[i] != (double)(other + (uint64_t)i)) {
      fprintf(stderr, "drain_c_api: rank %d: element %llu is %g\n", rank, (unsigned long long)(other + i), back[i]);
      bad = 1;
    }
  }
  strata_engine_free(engine);
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any) printf("drain_c_api: %d rank(s): drained, waited, read back\n", size);
  MPI_Finalize();
  return any;
}
