/* Where the time inside MPI-IO's collective calls goes, for the multi-dataset paper's
 * Equation 1 (total = I/O + communication + collective overhead + library overhead).
 *
 * tools/strata/mpiio_timing_hooks.c wraps MPI_File_{write,read}{_at,}_all through the MPI profiling
 * interface (PMPI_*) and pread/pwrite (and their v/64 forms) by symbol interposition, so the
 * calls that HDF5, PnetCDF and Strata's own MPI-IO backend make are all seen: per collective
 * call, its entry time and duration; inside those calls, the time in file-system reads and
 * writes. The state is process-wide by necessity (the hooks have no context to carry it); it is
 * reset before and read after each transfer by the backend driver, on the calling thread.
 * The interposed file calls are only counted on a thread that is inside a collective call, so
 * the engine's own I/O thread is never mixed in.
 *
 * The hooks are part of the strata program, not of the library. In any other program that links
 * libstrata.a, mpiio_timing_absent.c's weak definitions apply: strata_mpiio_timing_get() returns
 * NULL and the backends report no collective-call breakdown (CollectiveStats::valid is false). A
 * program that wants the breakdown compiles tools/strata/mpiio_timing_hooks.c in. */
#ifndef STRATA_MPIIO_TIMING_H
#define STRATA_MPIIO_TIMING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct strata_mpiio_timing {
  uint64_t calls;       /* collective data calls (MPI_File_*_all) */
  double inside_s;      /* time inside them */
  double io_s;          /* of which in pread/pwrite and friends */
  uint64_t io_calls;    /* file-system calls inside them */
  double entries[4096]; /* MPI_Wtime at entry of the first 4096 calls */
};

void strata_mpiio_timing_reset(void);
/* NULL when the hooks are not linked into the program. */
const struct strata_mpiio_timing* strata_mpiio_timing_get(void);

#ifdef __cplusplus
}
#endif

#endif
