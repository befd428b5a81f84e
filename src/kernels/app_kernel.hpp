// The application-kernel interface: a kernel whose original's own I/O routine is the thing
// being reproduced (MSLIO's per-value fprintf, PACE3D's voxel-file writer), so it owns its
// output phase — it opens, writes and closes files itself in the chosen mode — and reports what
// it measured. strata::run (src/run/run.hpp) gives it the run options application kernels take
// (output, repetitions, write/read, verify, fsync, seed, JSON) and turns its AppPhase results
// into the same record as the Decomposition kernels' (src/run/application_workload.cpp).
//
// Every call below that is marked collective agrees on failure (strata::collectively), so a bad
// parameter or an I/O error gives every rank the same Error.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/hints.hpp"
#include "common/options.hpp"
#include "decomp/values.hpp"
#include "fs/io_options.hpp"
#include "kernels/kernel_test.hpp"

namespace strata {

// What `strata run` hands an application kernel.
struct AppContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  std::string output;        // --output: a file, a file prefix or a folder, as the kernel documents
  Hints hints;               // MPI-IO hints asked for (--hints and STRATA_HINTS)
  IoOptions io;              // io.fsync: sync data before close completes (counted in close time)
  ValueStream values;        // seed and step of the value generator
  std::string io_component;  // "ompio" or "romio"
};

// One timed phase (the output phase, or reading it back) as the kernel measured it.
struct AppPhase {
  uint64_t bytes = 0;  // bytes the phase moved, over all ranks (what the bandwidth divides)
  double time_s = 0;   // the phase's time (the kernel says how it is taken)
  double open_s = 0;   // time in open, write/read and close calls (the kernel says whether
  double xfer_s = 0;   //   these are maxima over ranks or sums over threads and ranks)
  double close_s = 0;
  uint64_t requests = 0;            // write (or read) calls, over all ranks
  std::vector<double> rank_time_s;  // per-rank times, when the kernel has them
  nlohmann::json details;           // the kernel's own measurements (JSON "kernel" of the phase)
  std::string text;                 // the same for people, printed under the run's table
};

// One configured run of an application kernel on a communicator.
class AppRun {
 public:
  virtual ~AppRun() = default;
  virtual std::string mode() const = 0;
  virtual nlohmann::json params() const = 0;  // every parameter as resolved
  virtual uint64_t files() const = 0;         // files the output phase writes
  virtual std::string layout() const = 0;     // "file per local problem", "shared", ...
  virtual uint64_t global_bytes() const = 0;  // bytes of one output phase
  virtual uint64_t local_bytes() const = 0;   // of which this rank's
  // Collective: removes a previous output (not what the original creates before its timed
  // phase, like MSLIO's folders).
  virtual void remove_output() = 0;
  // Collective: the timed output phase.
  virtual AppPhase write() = 0;
  // Collective: reads the output back; with `compare`, checks every byte against the generator
  // and sets `mismatch` to the first difference found (the same text on every rank).
  virtual AppPhase read(bool compare, std::optional<std::string>& mismatch) = 0;
  // MPI-IO hints in effect after the last open, when the kernel uses MPI-IO.
  virtual Hints hints_in_effect() const { return {}; }
};

// What help and the catalogue say of an application kernel.
struct AppKernelInfo {
  std::string name;
  std::string summary;
  // The kernel's modes, each with a line of help; the first is the default.
  std::vector<std::pair<std::string, std::string>> modes;
  // The option that chooses the mode: --mode, unless the original names it otherwise.
  std::string mode_option = "mode";
  std::string default_output;
  std::string example;  // a command line for --help
};

class AppKernel {
 public:
  explicit AppKernel(AppKernelInfo info) : info_(std::move(info)) {}
  virtual ~AppKernel() = default;
  std::string name() const { return info_.name; }
  std::string summary() const { return info_.summary; }
  std::vector<std::pair<std::string, std::string>> modes() const { return info_.modes; }
  std::string mode_option() const { return info_.mode_option; }
  std::string default_output() const { return info_.default_output; }
  std::string example() const { return info_.example; }
  virtual void add_options(OptionSet& options) const = 0;
  // Collective: checks the options (usage Errors), then prepares what the original prepares
  // before its timed phase when `will_write` (MSLIO's folders), and the data in memory.
  virtual std::unique_ptr<AppRun> prepare(const OptionSet& options, const AppContext& ctx, bool will_write) const = 0;
  // The MPI tests of the kernel (kernels/kernel_test.hpp), on its own I/O: none unless it declares them.
  virtual std::vector<KernelTest> tests() const { return {}; }

 private:
  AppKernelInfo info_;
};

const std::vector<const AppKernel*>& app_kernel_list();
// The application kernel called `name`, or null.
const AppKernel* find_app_kernel(const std::string& name);

// Sums of per-call times and counts, over threads and then ranks: what MSLIO reports (the
// paper's cumulative open / write / close time, Figure 3).
struct CallTotals {
  double open_s = 0, write_s = 0, close_s = 0, format_s = 0;
  uint64_t opens = 0, writes = 0, closes = 0, bytes = 0;
  CallTotals& operator+=(const CallTotals& o);
  // Collective: the sums over the ranks of `comm`.
  CallTotals summed(MPI_Comm comm) const;
};

// Collective: agrees on a verification result; every rank gets the lowest failing rank's text.
std::optional<std::string> agree_mismatch(MPI_Comm comm, const std::optional<std::string>& local);

// Median of the values (0 for none).
double median_of(std::vector<double> values);

}  // namespace strata
