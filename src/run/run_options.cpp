#include "run/run_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "common/error.hpp"
#include "common/suggest.hpp"
#include "common/units.hpp"
#include "kernels/app_kernel.hpp"
#include "kernels/kernel.hpp"
#include "run/run_record.hpp"

namespace strata {

const std::vector<RunOptionSpec>& run_option_specs() {
  using R = RunOptions;
  using I = IoOptions;
  static const std::vector<RunOptionSpec> specs = {
      {"backend", "NAME", "the backend (see backends above; required)", "", true, false, &R::backend},
      {"output", "PATH",
       "where to write or read: a file, or with --file-per-process / --file-per-node the prefix of the files (an "
       "application kernel documents its own); default strata-KERNEL and the backend's file extension",
       "", true, true, &R::output},
      {"container", "raw|hdf5", "backend strata: raw file with an index, or an HDF5 container (h5py/h5dump read it)",
       "raw", true, false, &I::container},
      {"per-block", nullptr, "backend hdf5: one collective H5Dwrite per block instead of one per dataset", "", true,
       false, &I::per_block},
      {"independent", nullptr,
       "backends hdf5, pnetcdf: independent data transfers (IOR's default; without it collective, IOR -c)", "", true,
       false, &I::independent},
      {"per-variable", nullptr, "backend mpiio-coll: one MPI_File_write_at_all per variable instead of one in all", "",
       true, false, &I::per_variable},
      {"hints", "K=V,K=V", "MPI-IO hints, applied over those of the file named by STRATA_HINTS", "", true, true,
       &R::hints},
      {"no-advice", nullptr, "do not apply strata advise's hints (explicit hints win over them key by key anyway)", "",
       true, false, &R::no_advice},
      {"file-per-process", nullptr, "each rank its own file PATH.<rank, 8 digits> (IOR -F)", "", true, false,
       &R::file_per_process},
      {"file-per-node", nullptr, "the ranks of each node share a file PATH.node<node, 5 digits>, in rank order", "",
       true, false, &R::file_per_node},
      {"node-local", nullptr, "put the files in node-local storage: STRATA_LOCAL_DIR/<node>/<file name of PATH>", "",
       true, false, &R::node_local},
      {"drain", "PATH",
       "backend strata: the output PATH, written on node-local storage first (the write returns then) and drained to "
       "PATH in the background; the record's engine entry \"drain\" has both moments (docs/drain.md)",
       "", true, false, &I::drain},
      {"write", nullptr, "write the data (the default unless --read is given alone)", "", true, true, &R::write},
      {"read", nullptr, "read the data back, timed; alone, read an existing output without writing it", "", true, true,
       &R::read},
      {"writer-ranks", "N", "with --read: the file was written by N ranks; each reader checks an even share of it", "",
       true, false, &R::writer_ranks},
      {"verify", nullptr, "compare every element read back with the generator (after a write: read back first)", "",
       true, true, &R::verify},
      {"fsync", nullptr, "sync to storage before close completes (counted in close time)", "", true, true, &I::fsync,
       CampaignSwitch{"fsync: included in close time", "fsync: not included (add --fsync)", "fsync included",
                      "fsync not included"}},
      {"fsync-per-write", nullptr, "backend posix: fsync after each write request, timed (IOR -Y)", "", true, false,
       &I::fsync_per_write},
      {"direct", nullptr,
       "backend posix: O_DIRECT, bypassing the page cache (IOR --posix.odirect); offsets and transfers must be "
       "multiples of 4 KiB",
       "", true, false, &I::direct},
      {"deadline", "SECONDS",
       "backends posix, mpiio-ind, mpiio-coll, hdf5, pnetcdf: stop each write and read after this many seconds "
       "and report what was moved (IOR -D, stonewalling; collective calls stop together, as rank 0 decides; not "
       "with --verify: part of the data is not moved)",
       "", true, false, &I::deadline},
      {"reorder-tasks", "N",
       "read back what rank r+N wrote (mod ranks), not what this rank wrote, so a read is not served from this "
       "rank's page cache (IOR -C with -Q in ranks)",
       "", true, false, &R::reorder_tasks},
      {"reorder-by-node", nullptr,
       "IOR -C: read back what the ranks --reorder-nodes node(s) on wrote (on a single node: rank r+1)", "", true,
       false, &R::reorder_by_node},
      {"reorder-nodes", "N", "IOR -Q: nodes to shift by with -C", "1", true, false, &R::reorder_nodes},
      {"drop-caches", nullptr,
       "as root: sync and drop the page cache (/proc/sys/vm/drop_caches) before each read, on each node (a "
       "single-node measure: other nodes' and the file server's caches are not touched)",
       "", true, false, &R::drop_caches},
      {"repetitions", "N",
       "how many times to repeat; the output is removed before each write (backend strata: replaced when the write "
       "commits)",
       "1", true, true, &R::repetitions},
      {"seed", "S", "seed of the value generator and of random kernel parameters", "1", true, true, &R::seed},
      {"step", "K", "output step mixed into the generated values", "0", true, true, &R::step},
      {"json", "FILE", "write a machine-readable record of the run (rank 0)", "", true, true, &R::json},
      {"quiet", nullptr, "do not print the table", "", true, true, &R::quiet},
  };
  return specs;
}

std::vector<RunSwitch> run_switches(const RunOptions& o, const std::vector<RunOptionSpec>& specs) {
  std::vector<RunSwitch> out;
  for (const RunOptionSpec& s : specs) {
    if (!s.campaign_switch) continue;
    const bool on = std::visit(
        [&](auto field) -> bool {
          using F = decltype(field);
          if constexpr (std::is_same_v<F, bool RunOptions::*>) {
            return o.*field;
          } else if constexpr (std::is_same_v<F, bool IoOptions::*>) {
            return o.io.*field;
          } else {
            throw std::logic_error(std::string("run option --") + s.name + " is a campaign switch but not a flag");
          }
        },
        s.field);
    const CampaignSwitch& c = *s.campaign_switch;
    out.push_back({s.name, on, on ? c.report_on : c.report_off});
  }
  return out;
}

std::string kernel_kind_name(KernelKind k) { return k == KernelKind::application ? "application" : "decomposition"; }

std::string kernel_names() {
  std::string all;
  for (const Kernel* k : kernel_list()) all += (all.empty() ? "" : ", ") + k->name();
  for (const AppKernel* k : app_kernel_list()) all += (all.empty() ? "" : ", ") + k->name();
  return all;
}

KernelKind RunOptions::kind() const {
  if (find_app_kernel(kernel) != nullptr) return KernelKind::application;
  const auto& list = kernel_list();
  if (std::none_of(list.begin(), list.end(), [&](const Kernel* k) { return k->name() == kernel; })) {
    std::vector<std::string> names;
    for (const Kernel* k : kernel_list()) names.push_back(k->name());
    for (const AppKernel* k : app_kernel_list()) names.push_back(k->name());
    throw_usage("unknown kernel \"" + kernel + "\"" + did_you_mean(kernel, names) + " (available: " + kernel_names() +
                ")");
  }
  return KernelKind::decomposition;
}

Layout RunOptions::layout() const {
  return file_per_process ? Layout::file_per_process : file_per_node ? Layout::file_per_node : Layout::shared;
}

std::string default_output(const std::string& kernel, const std::string& backend, const IoOptions& io) {
  // The engine's HDF5 container is an HDF5 file whatever the backend's usual extension.
  return "strata-" + kernel + (io.container == "hdf5" ? ".h5" : backend_row(backend).can.file_extension);
}

namespace {

std::string modes_line(const AppKernel& k) {
  std::string names;
  for (const auto& [name, help] : k.modes()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

void declare_run_options(OptionSet& o, const std::string& kernel) {
  const AppKernel* app = kernel.empty() ? nullptr : find_app_kernel(kernel);
  o.section("run options");
  if (app != nullptr) {
    o.add(app->mode_option(), "NAME", modes_line(*app) + " (see modes above)", app->modes().front().first);
  }
  for (const RunOptionSpec& s : run_option_specs()) {
    if (!(app != nullptr ? s.for_application : s.for_decomposition)) continue;
    // An application kernel's output defaults to what the kernel writes.
    const std::string default_value =
        app != nullptr && std::string(s.name) == "output" ? app->default_output() : s.default_value;
    if (s.metavar == nullptr) {
      o.add_flag(s.name, s.help);
    } else {
      o.add(s.name, s.metavar, s.help, default_value);
    }
  }
  // IOR's letters for the run options it has (-b -t -s and -z are the ior kernel's own).
  for (const auto& [letter, name] : {std::pair<char, const char*>{'F', "file-per-process"},
                                     {'C', "reorder-by-node"},
                                     {'Q', "reorder-nodes"},
                                     {'Y', "fsync-per-write"},
                                     {'D', "deadline"}}) {
    if (o.declared(name)) o.alias(letter, name);
  }
  if (app != nullptr) {
    app->add_options(o);
  } else if (!kernel.empty()) {
    find_kernel(kernel).add_options(o);
  }
}

namespace {

// Sets the field of row `s` from the parsed options.
void read_field(RunOptions& r, const RunOptionSpec& s, const OptionSet& o) {
  const std::string name = s.name;
  std::visit(
      [&](auto field) {
        using F = decltype(field);
        if constexpr (std::is_same_v<F, bool RunOptions::*>) {
          r.*field = o.flag(name);
        } else if constexpr (std::is_same_v<F, bool IoOptions::*>) {
          r.io.*field = o.flag(name);
        } else if constexpr (std::is_same_v<F, uint64_t RunOptions::*>) {
          if (o.given(name) || !o.get(name).empty()) r.*field = parse_count(o.get(name), "--" + name);
        } else if constexpr (std::is_same_v<F, std::string RunOptions::*>) {
          r.*field = o.get(name);
        } else if constexpr (std::is_same_v<F, std::string IoOptions::*>) {
          r.io.*field = o.get(name);
        } else {
          static_assert(std::is_same_v<F, Hints RunOptions::*>);
          r.*field = hints_from_environment_and(o.get(name));
        }
      },
      s.field);
}

// True when the row's field differs from its default (a backend-specific switch in use).
bool differs_from_default(const RunOptions& r, const RunOptionSpec& s) {
  return std::visit(
      [&](auto field) -> bool {
        using F = decltype(field);
        if constexpr (std::is_same_v<F, bool RunOptions::*>) {
          return r.*field;
        } else if constexpr (std::is_same_v<F, bool IoOptions::*>) {
          return r.io.*field;
        } else if constexpr (std::is_same_v<F, std::string IoOptions::*>) {
          return r.io.*field != s.default_value;
        } else if constexpr (std::is_same_v<F, std::string RunOptions::*>) {
          return r.*field != s.default_value;
        } else if constexpr (std::is_same_v<F, uint64_t RunOptions::*>) {
          return std::to_string(r.*field) != s.default_value;
        } else {
          return !(r.*field).empty();
        }
      },
      s.field);
}

}  // namespace

RunOptions RunOptions::parse(const std::vector<std::string>& args) {
  RunOptions r;
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    r.help = true;
    return r;
  }
  if (args[0].rfind("-", 0) == 0) throw_usage("strata run needs a KERNEL first (see strata run --help)");
  r.kernel = args[0];
  const KernelKind kind = r.kind();
  declare_run_options(r.parsed, r.kernel);
  const auto extra = r.parsed.parse({args.begin() + 1, args.end()});
  if (r.parsed.help_requested()) {
    r.help = true;
    return r;
  }
  if (!extra.empty()) throw_usage("unexpected argument \"" + extra[0] + "\" (see strata run " + r.kernel + " --help)");
  for (const RunOptionSpec& s : run_option_specs()) {
    if (r.parsed.declared(s.name)) read_field(r, s, r.parsed);
  }
  if (kind == KernelKind::application) {
    r.mode = r.parsed.get(find_app_kernel(r.kernel)->mode_option());
  } else if (!r.parsed.given("backend")) {
    throw_usage("strata run needs --backend NAME (see strata run --help)");
  }
  if (r.parsed.given("output") && r.output.empty()) throw_usage("--output must not be empty");
  if (r.parsed.given("writer-ranks") && r.writer_ranks == 0) throw_usage("--writer-ranks must be at least 1");
  if (r.parsed.given("reorder-tasks") && r.reorder_tasks == 0) throw_usage("--reorder-tasks must be at least 1");
  if (r.parsed.given("reorder-nodes") && r.reorder_nodes == 0) throw_usage("--reorder-nodes must be at least 1");
  r.check();
  return r;
}

void RunOptions::check() const {
  if (repetitions == 0) throw_usage("--repetitions must be at least 1");
  if (kind() == KernelKind::application) {
    const AppKernel& k = *find_app_kernel(kernel);
    const auto& modes = k.modes();
    if (std::none_of(modes.begin(), modes.end(), [&](const auto& m) { return m.first == mode; })) {
      throw_usage("unknown --" + k.mode_option() + " \"" + mode + "\" (" + kernel + " has " + modes_line(k) + ")");
    }
    return;
  }
  const BackendRow& row = backend_row(backend);
  if (file_per_process && file_per_node) throw_usage("choose one of --file-per-process and --file-per-node");
  if (!io.drain.empty()) {
    if (!output.empty() && output != io.drain) {
      throw_usage("--drain PATH names the output: give --output " + output + " or --drain " + io.drain + ", not both");
    }
    if (layout() != Layout::shared || node_local) {
      throw_usage(
          "--drain writes one output (a shared file, or subfiles with --hints strata_subfiling): not with "
          "--file-per-process, --file-per-node or --node-local");
    }
  }
  if (writer_ranks > 0) {
    if (writes()) throw_usage("--writer-ranks applies to reading an existing file: use it with --read alone");
    if (layout() != Layout::shared) throw_usage("--writer-ranks needs a shared file (not per process or node)");
  }
  // A backend-specific switch (a row's capabilities list it) only for the backends that take it.
  for (const RunOptionSpec& s : run_option_specs()) {
    const std::string name = s.name;
    const auto& table = backend_table();
    const bool specific =
        std::any_of(table.begin(), table.end(), [&](const BackendRow& b) { return b.can.takes(name); });
    if (specific && !row.can.takes(name) && differs_from_default(*this, s)) {
      for (const auto& [option, why] : row.can.refuses) {
        if (option == name) throw_usage("--" + name + " cannot apply to backend " + row.name + ": " + why);
      }
      throw_usage("--" + name + " applies to backend " +
                  backends_that([&](const BackendRow& b) { return b.can.takes(name); }) + " only");
    }
  }
  if (reorder_tasks > 0 || reorder_by_node) {
    if (reorder_tasks > 0 && reorder_by_node) throw_usage("choose one of --reorder-tasks and --reorder-by-node (-C)");
    if (!read && !verify)
      throw_usage("--reorder-tasks and -C change what each rank reads back: add --read or --verify");
    if (layout() != Layout::shared) {
      throw_usage(
          "--reorder-tasks and -C read another rank's part of a shared file (not with --file-per-process or "
          "--file-per-node)");
    }
    if (writer_ranks > 0)
      throw_usage("--reorder-tasks and -C read what the ranks of this run write, not --writer-ranks");
  }
  if (!io.deadline.empty()) {
    char* end = nullptr;
    const double s = std::strtod(io.deadline.c_str(), &end);
    if (end == io.deadline.c_str() || *end != '\0' || !(s > 0)) {
      throw_usage("--deadline must be a positive number of seconds (got \"" + io.deadline + "\")");
    }
    if (verify)
      throw_usage("--deadline stops a phase before all the data has moved: it cannot be combined with --verify");
  }
  if (drop_caches && !read) throw_usage("--drop-caches applies before a timed read: add --read");
  if (drop_caches && ::geteuid() != 0) {
    throw_usage("--drop-caches writes /proc/sys/vm/drop_caches, which needs root (this process is not)");
  }
  if (io.container != "raw" && io.container != "hdf5") {
    throw_usage("unknown container \"" + io.container + "\" (available: raw, hdf5)");
  }
}

}  // namespace strata
