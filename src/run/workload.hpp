// What strata::run repeats (run.cpp): a decomposition kernel's outputs through a backend, or an
// application kernel's own output phase. Internal to src/run.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

#include "arch/node_map.hpp"
#include "common/hints.hpp"
#include "run/run_options.hpp"
#include "run/run_record.hpp"

namespace strata {

class Workload {
 public:
  virtual ~Workload() = default;
  // Collective: one repetition. Writes when the run writes (the previous output removed first,
  // unless the write replaces it on commit), reads back (untimed to verify, timed with --read)
  // and sets `failure` to the agreed first mismatch. `first`: the first repetition.
  virtual Repetition repeat(bool first, std::optional<std::string>& failure) = 0;
  // The hints in effect after the first repetition's open, as the I/O library reports them.
  virtual Hints hints_in_effect() const = 0;
  // The record's header entries that depend on the kind of kernel: params, output, layout,
  // files, fs_type, fs_block_size, bytes_per_rank, global_bytes, ...
  virtual nlohmann::json header() const = 0;
  // The output's path (the first file of its layout): where the watchdog looks for a cause.
  virtual std::string output_path() const = 0;
  // What the kernel reports for people, printed under the table.
  virtual std::string text() const { return {}; }
};

// Collective: prepares the run (builds the decomposition, resolves its files, asks the advisor,
// creates the backends; or prepares the application kernel). Usage and I/O Errors are agreed.
std::unique_ptr<Workload> decomposition_workload(const RunOptions& options, MPI_Comm comm, const NodeMap& nodes);
std::unique_ptr<Workload> application_workload(const RunOptions& options, MPI_Comm comm, const NodeMap& nodes);

}  // namespace strata
