// The options of one run (`strata run KERNEL ...`, or strata::run called as a library): one typed
// struct, each field bound once to its command-line option and help text in run_option_specs()
// (run_options.cpp). The CLI's help, the parser, the checks and the catalogue (strata info
// --catalogue) all read that table.
//
// A new run option: a field here (or in IoOptions, backends/backend.hpp, when a backend or an
// application kernel reads it), its row in run_option_specs(), and the code that uses it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "backends/backend.hpp"
#include "common/hints.hpp"
#include "common/options.hpp"

namespace strata {

class Kernel;
class AppKernel;
struct RunSwitch;  // run/run_record.hpp

// The two kinds of kernel a run drives: a Decomposition written through a backend
// (kernels/kernel.hpp), or an application kernel that owns its output phase (kernels/app_kernel.hpp).
enum class KernelKind { decomposition, application };
std::string kernel_kind_name(KernelKind k);

struct RunOptions {
  std::string kernel;   // KERNEL, the first word
  std::string backend;  // decomposition kernels: the backend table's row
  std::string mode;     // application kernels: the mode (--mode, or the kernel's name for it)
  std::string output;   // empty: strata-KERNEL<the backend's file extension>, or the kernel's default
  Hints hints;          // STRATA_HINTS's file, then --hints over it
  bool no_advice = false;
  bool file_per_process = false;
  bool file_per_node = false;
  bool node_local = false;
  bool write = false;  // neither write nor read: write
  bool read = false;
  uint64_t writer_ranks = 0;  // > 0: read a file written by this many ranks
  bool verify = false;
  uint64_t reorder_tasks = 0;    // > 0: rank r reads back what rank r + N wrote (IOR -C/-Q)
  bool reorder_by_node = false;  // -C: read back what the ranks reorder_nodes nodes on wrote
  uint64_t reorder_nodes = 1;    // -Q
  bool drop_caches = false;      // as root: drop the page cache before each read (one node)
  IoOptions io;                  // --fsync and the backend-specific switches
  uint64_t repetitions = 1;
  uint64_t seed = 1;
  uint64_t step = 0;
  std::string json;  // the record's file (written by the caller: the CLI)
  bool quiet = false;
  bool help = false;  // --help was given: nothing else was read or checked
  OptionSet parsed;   // every option as given; the kernel reads its own from it

  bool writes() const { return write || !read; }
  Layout layout() const;
  KernelKind kind() const;  // of `kernel` (a usage Error when there is no such kernel)

  // Parses `strata run` arguments: KERNEL first, then the run options of its kind and its own
  // options; then check(). Local (reads the STRATA_HINTS file); a usage Error on bad input.
  static RunOptions parse(const std::vector<std::string>& args);
  // Checks that the options fit together and fit the backend's row (usage Errors). Local.
  void check() const;
};

// A flag that is also a campaign-wide switch (like --fsync): the run's record carries its state under
// the option's name (JSON) and prints one of its report lines; the catalogue marks the row, so the
// harness makes it a key of [campaign], passes it to every launch and names it in its statistics
// with one of its labels. Declared only in its row (docs/extending.md, "A campaign-wide switch").
struct CampaignSwitch {
  const char* report_on;   // the run's table: "fsync: included in close time"
  const char* report_off;  // "fsync: not included (add --fsync)"
  const char* label_on;    // the harness's conditions: "fsync included"
  const char* label_off;   // "fsync not included"
};

// A run option's row: the field it sets, its command-line name and help, and which kernels take it.
struct RunOptionSpec {
  using Field = std::variant<bool RunOptions::*, uint64_t RunOptions::*, std::string RunOptions::*, Hints RunOptions::*,
                             bool IoOptions::*, std::string IoOptions::*>;
  const char* name;
  const char* metavar;  // nullptr: a flag
  const char* help;
  const char* default_value;  // "" for none
  bool for_decomposition;     // taken by decomposition kernels
  bool for_application;       // taken by application kernels
  Field field;
  std::optional<CampaignSwitch> campaign_switch = {};  // a flag that is a campaign-wide switch
};
const std::vector<RunOptionSpec>& run_option_specs();

// The state of every campaign-wide switch of `specs` in `options`, in the table's order (for the
// record).
std::vector<RunSwitch> run_switches(const RunOptions& options,
                                    const std::vector<RunOptionSpec>& specs = run_option_specs());

// Declares the run options `kernel` takes (its kind's rows, then, for an application kernel, its
// mode option), then the kernel's own; no kernel: the decomposition kernels' run options.
void declare_run_options(OptionSet& options, const std::string& kernel);

// "strata-KERNEL<extension>": the default output of a decomposition kernel through `backend`.
std::string default_output(const std::string& kernel, const std::string& backend, const IoOptions& io);

// Every kernel's name, the decomposition kernels first ("a, b, c").
std::string kernel_names();

}  // namespace strata
