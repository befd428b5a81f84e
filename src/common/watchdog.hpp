// The watchdog: a rank that makes no progress inside a Strata collective operation for too long
// prints which operation it is in and what every peer is doing — the peers it waits for are
// those elsewhere or silent — then aborts the job with exit status 4 (ErrorKind::timeout).
// On by default with a generous limit: kDefaultTimeout seconds, raised by allow_for_bytes() to
// what the run's data takes at kSlowestBytesPerSecond; STRATA_TIMEOUT=SECONDS sets the limit
// (and asks MPI for threads, so the report can say what every peer does), STRATA_TIMEOUT=0
// turns it off.
//
// A rank that holds an error waits in the agreement on it (strata::agree) for its peers. A peer
// that the error left inside a collective never joins (OMPIO's collective write on a full disk:
// the aggregator that fails returns, the others wait for it in the next exchange), so after a
// grace period, kDefaultErrorGrace seconds or STRATA_ERROR_GRACE=SECONDS (0: wait as long as the
// watchdog's limit allows), the rank ends the job itself: it prints its error and the likely cause
// ("strata: error: ... (rank R; ...)") and exits with the error's status, and the launcher ends
// the others. The grace is part of the watchdog: STRATA_TIMEOUT=0 turns both off.
//
// Progress is entering or leaving a Scope. A rank answers its peers' questions only once it has
// itself made no progress for half the timeout (its thread calls MPI only then). Scopes nest ("write > transfer >
// collective step"); the report shows the stack. Peers are asked over a private communicator by a thread in each rank,
// which needs MPI_THREAD_MULTIPLE (asked for when STRATA_TIMEOUT is set; without it the report has this rank's own
// operation only).
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

namespace strata::watchdog {

inline constexpr double kDefaultTimeout = 600;                        // seconds without progress
inline constexpr double kSlowestBytesPerSecond = 16.0 * 1024 * 1024;  // a slow shared file system
inline constexpr double kDefaultErrorGrace = 15;  // seconds a rank holding an error waits for its peers

// The thread level to ask MPI_Init_thread for: MPI_THREAD_MULTIPLE when STRATA_TIMEOUT sets a
// limit, else `wanted` (the default watchdog reports this rank's own operation only).
int thread_level(int wanted);

// Starts the watchdog unless STRATA_TIMEOUT=0. Collective over `world` (duplicates it when
// threads allow asking the peers). Throws a usage Error (on every rank alike) for a value that is
// not a number of seconds.
void start(MPI_Comm world, int provided_thread_level);
// The default limit (not one STRATA_TIMEOUT set) grows to kDefaultTimeout plus the time `bytes`
// take at kSlowestBytesPerSecond: a large write between two progress points is not a hang.
void allow_for_bytes(double bytes);
// "on: 600 s without progress (the default; ...)" or "off (STRATA_TIMEOUT=0)": for strata info.
std::string describe_setting();
// Stops and joins the thread. Collective; call before MPI_Finalize.
void stop();
// Seconds, or 0 when off.
double timeout();
// The grace a rank holding an error gives its peers, in seconds; 0 when off.
double error_grace();
// A probe of the likely cause that the report adds when the watchdog fires (for a run: whether the
// output's file system is full — OMPIO's collective writes hang on a full disk instead of failing).
// Called from the watchdog's thread; it must not call MPI. An empty answer adds nothing. Replaces
// the previous probe; an empty function removes it.
void set_diagnosis(std::function<std::string()> probe);

// The scope of an agreement (strata::agree): a collective every rank of the communicator must
// join, so a peer inside one while this rank is not waits for this rank.
inline constexpr const char* kAgreementScope = "agreeing on the outcome";

// Marks this rank as holding `message` (an error about to be agreed on, exit status `status`)
// until destroyed: held longer than the grace, it ends the job (above).
class HeldError {
 public:
  HeldError(const std::string& message, int status);
  ~HeldError();
  HeldError(const HeldError&) = delete;
  HeldError& operator=(const HeldError&) = delete;
};

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
