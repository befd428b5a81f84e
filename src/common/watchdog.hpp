// The watchdog: with STRATA_TIMEOUT=SECONDS, a rank that makes no progress inside a Strata
// collective operation for that long prints which operation it is in and what every peer is
// doing — the peers it waits for are those elsewhere or silent — then aborts the job with
// exit status 4 (ErrorKind::timeout). Off by default.
//
// Progress is entering or leaving a Scope. A rank answers its peers' questions only once it has
// itself made no progress for half the timeout (its thread calls MPI only then). Scopes nest ("write > transfer > collective step");
// the report shows the stack. Peers are asked over a private communicator by a thread in each
// rank, which needs MPI_THREAD_MULTIPLE (asked for when STRATA_TIMEOUT is set; without it the
// report has this rank's own operation only).
#pragma once

#include <mpi.h>

#include <string>

namespace strata::watchdog {

// The thread level to ask MPI_Init_thread for: MPI_THREAD_MULTIPLE when STRATA_TIMEOUT is set,
// else `wanted`.
int thread_level(int wanted);

// Starts the watchdog when STRATA_TIMEOUT is set. Collective over `world` (duplicates it).
// Throws a usage Error (on every rank alike) for a value that is not a positive number.
void start(MPI_Comm world, int provided_thread_level);
// Stops and joins the thread. Collective; call before MPI_Finalize.
void stop();
// Seconds, or 0 when off.
double timeout();

// Marks the calling (main) thread as inside operation `what` until destroyed.
class Scope {
 public:
  explicit Scope(std::string what);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// This rank's state as the report shows it: "in `a > b` for 1.2 s" or "outside any Strata
// collective operation". For tests.
std::string describe_state();

}  // namespace strata::watchdog
