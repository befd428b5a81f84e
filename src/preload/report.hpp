// What the drop-in layer did, counted per rank and summed over the job at MPI_Finalize; with
// STRATA_PRELOAD_REPORT=PATH rank 0 writes it as JSON (keys in docs/preload.md).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>

namespace strata::preload {

// Why a call went to MPI-IO instead of the engine.
enum class Reason : int {
  independent = 0,   // an independent (non-collective) access
  read,              // a read (the engine's read path is not used)
  nonblocking,       // a nonblocking collective (iwrite_all, iwrite_at_all)
  split,             // a split collective (write_all_begin/end)
  shared_pointer,    // the shared file pointer (write_shared, write_ordered)
  atomic,            // atomic mode
  datarep,           // a data representation other than native
  sequential,        // MPI_MODE_SEQUENTIAL
  view_not_decoded,  // a file type the layer cannot decode
  view_not_monotonic,
  disabled,   // STRATA_PRELOAD=off
  cost,       // the cost model predicted MPI-IO faster
  error,      // the engine failed before it wrote: the call went to MPI-IO
  alone,      // gathered, then written by each rank alone (pwrite) before an independent access
  read_only,  // a file opened MPI_MODE_RDONLY (MPI-IO reports the write as an error)
  count_
};
const char* reason_name(Reason r);
Reason reason_from_name(const std::string& name);

struct Counters {
  uint64_t calls = 0;              // every read and write call on a file
  uint64_t engine_calls = 0;       // collective writes the engine wrote
  uint64_t passthrough_calls = 0;  // calls MPI-IO served
  uint64_t engine_bytes = 0;       // bytes the engine wrote
  uint64_t passthrough_bytes = 0;  // bytes of the passed-through calls
  uint64_t alone_bytes = 0;        // gathered bytes a rank wrote alone before an independent access
  uint64_t files_opened = 0;
  uint64_t errors = 0;  // errors reported to the program
  std::array<uint64_t, static_cast<size_t>(Reason::count_)> reasons{};
  // The same on every rank of a group (rank 0's figures are reported):
  uint64_t engine_phases = 0;      // engine phases executed (one per flush of gathered writes)
  uint64_t plans_reused = 0;       // of which reused an earlier plan
  uint64_t budget_flushes = 0;     // flushes because the gathered bytes reached the budget
  uint64_t cost_passthroughs = 0;  // flushes the cost model sent to MPI-IO
  double engine_predicted_s = 0;   // sum of the engine's predictions for its phases
  double mpiio_predicted_s = 0;    // sum of MPI-IO's predictions for the same phases (when known)
  double engine_s = 0;             // time in engine phases (max over ranks in the report)
  double gather_s = 0;             // time gathering collective writes (max over ranks in the report)
  double view_s = 0;               // time decoding file views (max over ranks in the report)
};

Counters& counters();
void count_passthrough(Reason r, uint64_t bytes);

// Collective over MPI_COMM_WORLD: sums the counters, and rank 0 writes the JSON to `path`.
void write_report(const std::string& path);

}  // namespace strata::preload
