// strata run KERNEL for an application kernel (kernels/app_kernel.hpp): the kernel owns its
// output phase in the chosen mode; this driver parses the common run options, repeats the
// phase, reads back and verifies, and reports in the same table and JSON record as the
// Decomposition kernels (run_report.hpp), with the kernel's own measurements added.
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <optional>

#include "app_kernel.hpp"
#include "arch/node_map.hpp"
#include "fs/hints_in_effect.hpp"
#include "commands.hpp"
#include "help_table.hpp"
#include "common/error.hpp"
#include "common/hints.hpp"
#include "common/mpi_env.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "fs/fs_info.hpp"
#include "run_report.hpp"

namespace strata::cli {

namespace {

std::string modes_line(const AppKernel& k) {
  std::string names;
  for (const auto& [name, help] : k.modes()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

void add_app_run_options(OptionSet& o, const AppKernel& k) {
  o.section("run options");
  o.add(k.mode_option(), "NAME", modes_line(k) + " (see modes above)", k.modes().front().first);
  o.add("output", "PATH", "where the kernel writes (see its options)", k.default_output());
  o.add("hints", "K=V,K=V", "MPI-IO hints, applied over those of the file named by STRATA_HINTS");
  o.add_flag("write", "run the output phase (the default unless --read is given alone)");
  o.add_flag("read", "read the output back, timed; alone, read an existing output");
  o.add_flag("verify", "compare every value read back with the generator (after a write: read back first)");
  o.add_flag("fsync", "sync to storage before close completes (counted in close time)");
  o.add("repetitions", "N", "how many times to repeat; the output is removed before each write", "1");
  o.add("seed", "S", "seed of the value generator", "1");
  o.add("step", "K", "output step mixed into the generated values", "0");
  o.add("json", "FILE", "write a machine-readable record of the run (rank 0)");
  o.add_flag("quiet", "do not print the table");
}

std::string app_help(const AppKernel& k) {
  std::string text = "usage: mpirun -np N strata run " + k.name() + " [--" + k.mode_option() + " NAME] [options]\n\n" +
                     k.summary() + ".\nThe kernel writes its output itself, as its original does; strata times it, "
                     "reads it back\nwith --verify, prints a table and writes --json.\n\n";
  text += "modes (--" + k.mode_option() + "):\n";
  std::vector<std::pair<std::string, std::string>> modes;
  for (const auto& [name, help] : k.modes()) modes.emplace_back(name, help);
  text += help_table(modes);
  OptionSet o;
  add_app_run_options(o, k);
  k.add_options(o);
  text += "\n" + o.help_text();
  text += "\nexample:\n  " + k.example() + "\n";
  return text;
}

PhaseTiming timing_of(const AppPhase& a) {
  PhaseTiming p;
  p.bytes = a.bytes;
  p.time_s = a.time_s;
  p.open_s = a.open_s;
  p.xfer_s = a.xfer_s;
  p.close_s = a.close_s;
  p.requests = a.requests;
  p.rank_time_s = a.rank_time_s;
  if (a.details.contains("engine")) p.engine = a.details["engine"];
  p.kernel = a.details;
  return p;
}

}  // namespace

int run_app_command(const AppKernel& kernel, const std::vector<std::string>& args, const Environment& env) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  OptionSet options;
  AppContext ctx;
  ctx.comm = comm;
  ctx.rank = rank;
  ctx.size = size;
  bool do_write = true, do_read = false, verify = false, quiet = false;
  uint64_t repetitions = 1;
  std::string json_path, mode;
  collectively(comm, [&] {
    add_app_run_options(options, kernel);
    kernel.add_options(options);
    auto extra = options.parse({args.begin() + 1, args.end()});
    if (options.help_requested()) return;
    if (!extra.empty()) throw_usage("unexpected argument \"" + extra[0] + "\" (see strata run " + kernel.name() + " --help)");
    mode = options.get(kernel.mode_option());
    bool known = false;
    for (const auto& m : kernel.modes()) known = known || m.first == mode;
    if (!known) throw_usage("unknown --" + kernel.mode_option() + " \"" + mode + "\" (" + kernel.name() + " has " + modes_line(kernel) + ")");
    ctx.output = options.get("output");
    ctx.fsync = options.flag("fsync");
    ctx.values.seed = parse_count(options.get("seed"), "--seed");
    ctx.values.step = parse_count(options.get("step"), "--step");
    ctx.hints = hints_from_environment_and(options.get("hints"));
    ctx.io_component = io_component();
    do_read = options.flag("read");
    do_write = options.flag("write") || !do_read;
    verify = options.flag("verify");
    quiet = options.flag("quiet");
    repetitions = parse_count(options.get("repetitions"), "--repetitions");
    if (repetitions == 0) throw_usage("--repetitions must be at least 1");
    json_path = options.get("json");
  });
  if (options.help_requested()) {
    if (rank == 0) std::fputs(app_help(kernel).c_str(), stdout);
    return 0;
  }

  NodeMap nodes = node_map(comm);
  FsInfo fs;
  collectively(comm, [&] { fs = fs_info(ctx.output); });
  std::unique_ptr<AppRun> run = kernel.prepare(options, ctx, do_write);

  RunRecord record;
  record.verify_requested = verify;
  record.fsync = ctx.fsync;
  std::optional<std::string> failure;
  std::string texts;
  Hints in_effect;
  for (uint64_t rep = 0; rep < repetitions && !failure; ++rep) {
    Repetition r;
    if (do_write) {
      run->remove_output();
      AppPhase w = run->write();
      r.write = timing_of(w);
      texts += w.text;
      if (rep == 0) in_effect = run->hints_in_effect();
      if (verify && !do_read) run->read(true, failure);  // untimed read-back
    }
    if (do_read && !failure) {
      AppPhase rd = run->read(verify, failure);
      r.read = timing_of(rd);
      texts += rd.text;
      if (rep == 0 && !do_write) in_effect = run->hints_in_effect();
    }
    record.repetitions.push_back(r);
  }
  record.verified = verify && !failure;
  if (ctx.io_component == "ompio" && !in_effect.empty()) in_effect = merge_hints(in_effect, ompio_settings());

  int thread_level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&thread_level);
  MpiLibrary lib = mpi_library();
  nlohmann::json hints_json = nlohmann::json::object(), asked_json = nlohmann::json::object();
  for (const auto& [k, v] : in_effect) hints_json[k] = v;
  for (const auto& [k, v] : ctx.hints) asked_json[k] = v;
  nlohmann::json params = run->params();
  params["seed"] = ctx.values.seed;
  params["step"] = ctx.values.step;
  const std::string layout = run->layout();
  record.header = {
      {"strata_version", STRATA_VERSION},
      {"git_rev", STRATA_GIT_REV},
      {"timestamp", now_iso8601()},
      {"host", hostname()},
      {"kernel", kernel.name()},
      {"kernel_kind", "application"},
      {"backend", mode},
      {"mode", mode},
      {"mode_option", kernel.mode_option()},
      {"params", params},
      {"ranks", size},
      {"nodes", nodes.node_count},
      {"node_map", {{"virtual", nodes.is_virtual}, {"source", nodes.source}, {"node_of_rank", nodes.node_of_rank}}},
      {"hints", hints_json},
      {"hints_requested", asked_json},
      {"mpi", {{"library", lib.name}, {"version", lib.version}, {"full", lib.full},
               {"standard", std::to_string(lib.standard_major) + "." + std::to_string(lib.standard_minor)},
               {"thread_level", thread_level}}},
      {"io_component", ctx.io_component},
      {"mpi_workarounds", env.mpi_workarounds},
      {"fs_type", fs.type},
      {"fs_block_size", fs.block_size},
      {"output", ctx.output},
      {"layout", layout},
      {"file_per_process", false},
      {"files", run->files()},
      {"node_local", false},
      {"operations", nlohmann::json::array()},
      {"bytes_per_rank", {{"local", run->local_bytes()}}},
      {"global_bytes", run->global_bytes()},
  };
  if (do_write) record.header["operations"].push_back("write");
  if (do_read) record.header["operations"].push_back("read");
  if (failure) record.header["error"] = *failure;

  collectively(comm, [&] {
    if (rank != 0 || json_path.empty()) return;
    std::ofstream out(json_path);
    if (!out) throw_system("cannot write the JSON record \"" + json_path + "\"", errno);
    out << to_json(record).dump(2) << "\n";
    if (!out) throw_system("cannot write the JSON record \"" + json_path + "\"", errno);
  });
  if (rank == 0 && !quiet) {
    std::fputs(to_table(record).c_str(), stdout);
    std::fputs(("\n" + texts).c_str(), stdout);
  }
  if (failure) throw Error(ErrorKind::verification, "verification failed: " + *failure);
  return 0;
}

}  // namespace strata::cli
