/* Strata's aggregation engine, C API (wraps the C++ API of strata.hpp; Fortran can bind to it).
 *
 *   strata_engine* engine;                       (once; collective)
 *   strata_engine_create(MPI_COMM_WORLD, &engine);
 *   strata_phase* ph;                             (per output step)
 *   strata_phase_open(engine, "out.dat", STRATA_WRITE, "cb_buffer_size=4M", &ph);
 *   int x;
 *   strata_define_variable(ph, "x", sizeof(double), 1, &n_global, 0, &x);
 *   strata_add_subarray(ph, x, &start, &count, xdata, 0);
 *   strata_plan(ph);
 *   strata_write(ph);
 *   strata_phase_close(ph, &stats);
 *   strata_engine_free(engine);                   (collective)
 *
 * Every function returns 0 on success or the strata exit status class (1 I/O, 2 bad input); the
 * collective ones return the same status on every rank. strata_last_error() describes the last
 * failure of the calling rank. */
#ifndef STRATA_H
#define STRATA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_engine strata_engine;
typedef struct strata_phase strata_phase;

typedef enum { STRATA_WRITE = 0, STRATA_READ = 1 } strata_mode;

typedef struct {
  double plan_s, aggregation_s, io_s, wait_s, close_s;
  uint64_t rounds, bytes, aggregators, fs_requests, buffer_bytes, buffers;
  int aggregator;
} strata_stats;

/* A burst-buffer write's two moments (hint strata_drain=PATH): seconds from the phase's plan to
 * close returning, and to the data durable on the target (the slowest rank's); bytes copied. */
typedef struct {
  int drained, fallback; /* fallback: node-local space was short, the target was written directly */
  double return_s, durable_s, copy_s;
  uint64_t bytes;
} strata_drain_stats;

int strata_engine_create(MPI_Comm comm, strata_engine** engine);
/* The same from a Fortran communicator handle: `use mpi`'s integer, or mpi_f08's comm%MPI_VAL
 * (MPI_Comm_f2c converts it). The Fortran module's strata_engine_create calls it. */
int strata_engine_create_f(MPI_Fint comm, strata_engine** engine);
int strata_engine_free(strata_engine* engine);
/* hints: "key=value,key=value" or NULL. */
int strata_phase_open(strata_engine* engine, const char* path, strata_mode mode, const char* hints,
                      strata_phase** phase);
int strata_define_variable(strata_phase* phase, const char* name, size_t element_size, int ndims,
                           const uint64_t* global_dims, uint64_t file_offset, int* var);
int strata_add_extent(strata_phase* phase, int var, uint64_t file_offset, uint64_t length, void* memory);
int strata_add_subarray(strata_phase* phase, int var, const uint64_t* start, const uint64_t* count, void* memory,
                        size_t memory_stride);
/* The same with the number of entries of start and count, checked against the variable's
 * dimensions (a mismatch fails strata_plan on every rank instead of reading past the arrays). */
int strata_add_subarray_nd(strata_phase* phase, int var, int ndims, const uint64_t* start, const uint64_t* count,
                           void* memory, size_t memory_stride);
/* Records a problem the caller found in its own declarations: strata_plan fails with it on every
 * rank (as it does for the engine's own checks), so no rank is left waiting in a collective. */
int strata_fail(strata_phase* phase, const char* message);
int strata_plan(strata_phase* phase);
int strata_write(strata_phase* phase);
int strata_read(strata_phase* phase);
/* Closes and frees the phase (also after an error). stats may be NULL; it receives the
 * phase-wide maxima of times and sums of bytes and requests. */
int strata_phase_close(strata_phase* phase, strata_stats* stats);
/* Collective, after strata_phase_close: waits for the drain that the engine's last write phase
 * of `path` (the phase's path, or its drain target) started with hint strata_drain, and fills
 * stats (may be NULL); a drain's failure is returned on every rank. No drain: stats zeroed. */
int strata_wait_drain(strata_engine* engine, const char* path, strata_drain_stats* stats);
const char* strata_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
