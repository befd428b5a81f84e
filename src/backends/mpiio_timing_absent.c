/* The library's stand-ins for the MPI-IO timing hooks (mpiio_timing.h): weak, so that the strata
 * program's hooks (tools/strata/mpiio_timing_hooks.c) win when they are linked in. Without them
 * nothing is intercepted and nothing is measured. */
#include "backends/mpiio_timing.h"

#include <stddef.h>

__attribute__((weak)) void strata_mpiio_timing_reset(void) {}

__attribute__((weak)) const struct strata_mpiio_timing* strata_mpiio_timing_get(void) { return NULL; }
