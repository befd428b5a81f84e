// strata run KERNEL: build the kernel's decomposition, then for each repetition write (and/or
// read) it through a backend, time open / transfer / close, verify, and report.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "advise/run_advice.hpp"
#include <algorithm>

#include "arch/node_local.hpp"
#include "arch/node_map.hpp"
#include "backends/backend.hpp"
#include "fs/hints_in_effect.hpp"
#include "commands.hpp"
#include "help_table.hpp"
#include "common/error.hpp"
#include "common/hints.hpp"
#include "common/log.hpp"
#include "common/mpi_env.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "decomp/selection.hpp"
#include "decomp/values.hpp"
#include "fs/fs_info.hpp"
#include "app_kernel.hpp"
#include "kernel.hpp"
#include "run_outputs.hpp"
#include "run_report.hpp"
#include "strata/strata.hpp"

namespace strata::cli {

namespace {

void add_run_options(OptionSet& o) {
  o.section("run options");
  o.add("backend", "NAME", "posix, mpiio-ind, mpiio-coll, strata, hdf5 or pnetcdf (required)");
  o.add("output", "PATH", "file to write or read; with --file-per-process, the prefix of PATH.<rank>",
        "strata-KERNEL.dat in the current directory");
  o.add("container", "raw|hdf5", "backend strata: raw file with an index, or an HDF5 container (h5py/h5dump read it)", "raw");
  o.add_flag("per-block", "backend hdf5: one collective H5Dwrite per block instead of one per dataset");
  o.add_flag("per-variable", "backend mpiio-coll: one MPI_File_write_at_all per variable instead of one in all");
  o.add("hints", "K=V,K=V", "MPI-IO hints, applied over those of the file named by STRATA_HINTS");
  o.add_flag("no-advice", "do not apply strata advise's hints (explicit hints win over them key by key anyway)");
  o.add_flag("file-per-process", "each rank its own file PATH.<rank, 8 digits> (IOR -F)");
  o.add_flag("file-per-node", "the ranks of each node share a file PATH.node<node, 5 digits>, in rank order");
  o.add_flag("node-local", "put the files in node-local storage: STRATA_LOCAL_DIR/<node>/<file name of PATH>");
  o.add_flag("write", "write the data (the default unless --read is given alone)");
  o.add_flag("read", "read the data; alone, read an existing file without writing it");
  o.add("writer-ranks", "N", "with --read: the file was written by N ranks; each reader checks an even share of it");
  o.add_flag("verify", "compare every element read back with the generator (after a write: read back first)");
  o.add_flag("fsync", "sync to storage before close completes (counted in close time)");
  o.add("repetitions", "N", "how many times to repeat; the output is removed before each write (backend strata: replaced when the write commits)", "1");
  o.add("seed", "S", "seed of the value generator and of random kernel parameters", "1");
  o.add("step", "K", "output step mixed into the generated values", "0");
  o.add("json", "FILE", "write a machine-readable record of the run (rank 0)");
  o.add_flag("quiet", "do not print the table");
}

std::string run_help(const Kernel* k) {
  std::string text =
      "usage: mpirun -np N strata run KERNEL --backend NAME [options]\n\n"
      "Writes (and/or reads) KERNEL's data through a backend, times open / transfer / close per\n"
      "repetition, verifies every element with --verify, prints a table and writes --json.\n\n"
      "kernels:\n";
  text += kernels_help_table(true);
  text += "\nbackends:\n";
  std::vector<std::pair<std::string, std::string>> backends;
  for (const auto& b : backend_list()) backends.emplace_back(b.name, b.summary);
  text += help_table(backends);
  OptionSet o;
  add_run_options(o);
  if (k != nullptr) k->add_options(o);
  text += o.help_text();
  if (k == nullptr) text += "\n`strata run KERNEL --help` adds the kernel's own options.\n";
  text += "\nexample:\n  mpirun -np 4 strata run array1d --dist random --backend mpiio-coll --verify --json r.json\n";
  return text;
}

std::string default_output(const std::string& kernel, const std::string& backend, const std::string& container) {
  std::string ext = backend == "hdf5" || container == "hdf5" ? ".h5" : backend == "pnetcdf" ? ".nc" : ".dat";
  return "strata-" + kernel + ext;
}

struct Settings {
  const Kernel* kernel = nullptr;
  OptionSet options;
  std::string backend;
  Target target;
  bool do_write = true;
  bool do_read = false;
  bool verify = false;
  bool fsync = false;
  bool quiet = false;
  uint64_t repetitions = 1;
  ValueStream values;
  std::string json_path;
  Hints hints;
  int writer_ranks = 0;  // > 0: read a file written by this many ranks
  BackendOptions backend_options;
};

Settings parse(const std::vector<std::string>& args) {
  Settings s;
  if (args.empty() || args[0].rfind("-", 0) == 0) {
    throw_usage("strata run needs a KERNEL first (see strata run --help)");
  }
  if (std::none_of(kernel_list().begin(), kernel_list().end(), [&](const Kernel* k) { return k->name() == args[0]; })) {
    std::string all;  // the Decomposition kernels, then the application kernels
    for (const Kernel* k : kernel_list()) all += (all.empty() ? "" : ", ") + k->name();
    for (const AppKernel* k : app_kernel_list()) all += ", " + k->name();
    throw_usage("unknown kernel \"" + args[0] + "\" (available: " + all + ")");
  }
  s.kernel = &find_kernel(args[0]);
  add_run_options(s.options);
  s.kernel->add_options(s.options);
  auto extra = s.options.parse({args.begin() + 1, args.end()});
  if (s.options.help_requested()) return s;
  if (!extra.empty()) throw_usage("unexpected argument \"" + extra[0] + "\" (see strata run " + args[0] + " --help)");
  if (!s.options.given("backend")) throw_usage("strata run needs --backend NAME (see strata run --help)");
  s.backend = s.options.get("backend");
  check_backend_name(s.backend);
  s.target.path = s.options.given("output") ? s.options.get("output") : default_output(s.kernel->name(), s.backend, s.options.get("container"));
  if (s.target.path.empty()) throw_usage("--output must not be empty");
  if (s.options.flag("file-per-process") && s.options.flag("file-per-node")) {
    throw_usage("choose one of --file-per-process and --file-per-node");
  }
  s.target.layout = s.options.flag("file-per-process") ? Layout::file_per_process
                    : s.options.flag("file-per-node")  ? Layout::file_per_node
                                                       : Layout::shared;
  s.target.node_local = s.options.flag("node-local");
  s.do_read = s.options.flag("read");
  s.do_write = s.options.flag("write") || !s.do_read;
  s.verify = s.options.flag("verify");
  s.fsync = s.options.flag("fsync");
  s.quiet = s.options.flag("quiet");
  s.repetitions = parse_count(s.options.get("repetitions"), "--repetitions");
  if (s.repetitions == 0) throw_usage("--repetitions must be at least 1");
  s.values.seed = parse_count(s.options.get("seed"), "--seed");
  s.values.step = parse_count(s.options.get("step"), "--step");
  s.json_path = s.options.get("json");
  if (s.options.given("writer-ranks")) {
    s.writer_ranks = static_cast<int>(parse_count(s.options.get("writer-ranks"), "--writer-ranks"));
    if (s.writer_ranks < 1) throw_usage("--writer-ranks must be at least 1");
    if (s.do_write) throw_usage("--writer-ranks applies to reading an existing file: use it with --read alone");
    if (s.target.layout != Layout::shared) throw_usage("--writer-ranks needs a shared file (not per process or node)");
  }
  s.hints = hints_from_environment_and(s.options.get("hints"));
  s.backend_options.per_block = s.options.flag("per-block");
  s.backend_options.per_variable = s.options.flag("per-variable");
  s.backend_options.container = s.options.get("container");
  check_backend_options(s.backend, s.backend_options);
  return s;
}

// Times one access of the target: open, transfer, close, each agreed collectively.
PhaseTiming timed_access(Backend& backend, MPI_Comm comm, Access access, std::byte* buffer, uint64_t local_bytes) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  const std::string what = backend.name() + (access == Access::write ? " write: " : " read: ");
  collectively(comm, what + "open", [&] { backend.open(access); });
  const double t1 = MPI_Wtime();
  collectively(comm, what + "transfer", [&] { backend.transfer(access, buffer); });
  const double t2 = MPI_Wtime();
  end_collective_timing();
  collectively(comm, what + "close", [&] { backend.close(); });
  const double t3 = MPI_Wtime();
  const CollectiveStats collective = backend.collective_calls(t2 - t1);
  double local[4] = {t1 - t0, t2 - t1, t3 - t2, t3 - t0}, worst[4];
  MPI_Allreduce(local, worst, 4, MPI_DOUBLE, MPI_MAX, comm);
  unsigned long long counts[2] = {local_bytes, backend.requests()}, sums[2];
  MPI_Allreduce(counts, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  PhaseTiming p;
  p.open_s = worst[0];
  p.xfer_s = worst[1];
  p.close_s = worst[2];
  p.time_s = worst[3];
  p.bytes = sums[0];
  p.requests = sums[1];
  p.engine = backend.details();
  if (collective.valid) p.collective = collective.to_json();
  return p;
}

// Agrees on the verification of `buffer`; returns the first mismatch's description (lowest
// failing rank) or nothing.
std::optional<std::string> verify_everywhere(MPI_Comm comm, const Decomposition& d, const ValueStream& vs,
                                             const std::byte* buffer) {
  auto mismatch = verify(d, vs, buffer);
  std::optional<Error> local;
  if (mismatch) local = Error(ErrorKind::verification, mismatch->describe());
  try {
    agree(comm, local ? &*local : nullptr);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace

int run_command(const std::vector<std::string>& args, const Environment& env) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // Application kernels own their output phase (kernels/app_kernel.hpp, app_run.cpp).
  if (!args.empty()) {
    if (const AppKernel* app = find_app_kernel(args[0])) return run_app_command(*app, args, env);
  }

  Settings s;
  collectively(comm, [&] {
    bool want_help = args.empty() || args[0] == "--help" || args[0] == "-h";
    if (want_help) {
      s.options.parse({"--help"});
      return;
    }
    s = parse(args);
  });
  if (s.options.help_requested()) {
    if (rank == 0) std::fputs(run_help(s.kernel).c_str(), stdout);
    return 0;
  }

  NodeMap nodes = node_map(comm);
  KernelSetup setup;
  collectively(comm, [&] {
    setup = s.kernel->build(s.options, rank, size);
    std::optional<OutputIndex> index;
    if (!s.do_write && s.writer_ranks == 0 && s.target.layout == Layout::shared) index = read_output_index(s.target.path);
    if (index) {
      // The output's index gives the global layout; the kernel gives each variable's type.
      std::vector<Variable> vars;
      for (const IndexedVariable& iv : index->variables) {
        auto it = std::find_if(setup.decomposition.variables.begin(), setup.decomposition.variables.end(),
                               [&](const Variable& v) { return v.name == iv.name; });
        if (it == setup.decomposition.variables.end() || elem_size(it->type) != iv.element_size) {
          throw_usage("the index of \"" + s.target.path + "\" holds variable \"" + iv.name +
                      "\", which kernel " + s.kernel->name() + " does not define with that element size");
        }
        Variable v = *it;  // keeps a record variable's fields
        v.shape = iv.dims;
        vars.push_back(v);
      }
      const uint64_t t = setup.decomposition.transfer_bytes;
      setup.decomposition = even_share(vars, rank, size);
      setup.decomposition.transfer_bytes = t;
      setup.params["writer_ranks"] = index->writer_ranks;
      setup.params["layout_from"] = "index";
    } else if (s.writer_ranks > 0) {
      // The global layout is the writers'; this rank reads and checks an even share of it.
      KernelSetup writers = s.kernel->build(s.options, 0, s.writer_ranks);
      const uint64_t t = writers.decomposition.transfer_bytes;
      setup.decomposition = even_share(writers.decomposition.variables, rank, size);
      setup.decomposition.transfer_bytes = t;
      setup.params = writers.params;
      setup.params["writer_ranks"] = s.writer_ranks;
    }
    setup.decomposition.validate();
  });
  const Decomposition& d = setup.decomposition;

  BackendContext ctx;
  ctx.comm = comm;
  ctx.rank = rank;
  ctx.size = size;
  ctx.hints = s.hints;
  ctx.fsync = s.fsync;
  ctx.io_component = io_component();
  ctx.options = s.backend_options;
  std::vector<RunOutput> outputs =  // one, or a kernel's checkpoints (run_outputs.hpp)
      plan_outputs(comm, nodes, s.target, d, setup.checkpoint_steps, s.values, ctx);
  ctx.file = outputs.front().ctx.file;
  FsInfo fs;
  collectively(comm, [&] { fs = fs_info(ctx.file.path); });
  advise::RunAdvice advice;  // strata advise's hints under the explicit ones (src/advise/run_advice.hpp)
  collectively(comm, [&] {
    uint64_t dataset = 0;  // the largest variable of a shared file; derived from the blocks otherwise
    for (const auto& v : d.variables) dataset = ctx.file.files == 1 ? std::max(dataset, v.bytes()) : 0;
    advice = advise::advice_for_run(
        advise::run_facts(ctx.file.comm, nodes, d.local_bytes(), d.transfer_bytes,
                          static_cast<int64_t>(d.variables.size()), dataset, s.backend, ctx.io_component, fs.type,
                          ctx.file.files),
        s.hints, !s.options.flag("no-advice"));
  });
  ctx.hints = advice.hints;
  for (RunOutput& out : outputs) {
    out.ctx.hints = advice.hints;
    collectively(comm, [&] { out.backend = make_backend(s.backend, out.ctx, d, out.target); });
  }

  const uint64_t local = d.local_bytes();
  std::vector<std::byte> data(local), back;
  fill(d, s.values, data.data());
  if (s.do_read || s.verify) back.resize(local);

  RunRecord record;
  record.verify_requested = s.verify;
  record.fsync = s.fsync;
  bool verified_everything = s.verify;
  std::optional<std::string> failure;
  Hints in_effect;

  const double started = MPI_Wtime();
  for (uint64_t rep = 0; rep < s.repetitions && !failure; ++rep) {
    Repetition r;
    for (RunOutput& out : outputs) {
      if (failure) break;
      Backend& backend = *out.backend;
      std::optional<PhaseTiming> written, read;
      if (outputs.size() > 1 && s.do_write) fill(d, out.values, data.data());  // this checkpoint's values
      if (s.do_write) {
        // The engine replaces its own output only when the new one commits (after its plan has
        // agreed on the hints, the declarations and the machine file): removing it here first
        // would lose the previous output to a bad hint or a crash (docs/reliability.md).
        if (!backend.commits_output()) collectively(comm, [&] { remove_output(out.ctx); });
        written = timed_access(backend, comm, Access::write, data.data(), local);
        if (rep == 0) in_effect = backend.hints_in_effect();
        if (s.verify && !s.do_read) {  // untimed read-back
          std::fill(back.begin(), back.end(), std::byte{0xA5});
          collectively(comm, [&] { backend.open(Access::read); });
          collectively(comm, [&] { backend.transfer(Access::read, back.data()); });
          collectively(comm, [&] { backend.close(); });
          failure = verify_everywhere(comm, d, out.values, back.data());
        }
      }
      if (s.do_read && !failure) {
        std::fill(back.begin(), back.end(), std::byte{0xA5});
        read = timed_access(backend, comm, Access::read, back.data(), local);
        if (rep == 0 && !s.do_write) in_effect = backend.hints_in_effect();
        if (s.verify) failure = verify_everywhere(comm, d, out.values, back.data());
      }
      if (failure && out.checkpoint) *failure = "checkpoint " + out.target.path + ": " + *failure;
      add_output_timing(r, out, written, read);
    }
    record.repetitions.push_back(r);
    // Progress for runs longer than a few seconds (rank 0, on stderr, so tables stay clean).
    const double elapsed = MPI_Wtime() - started;
    if (rank == 0 && !s.quiet && elapsed >= 2.0 && rep + 1 < s.repetitions) {
      const double left = elapsed / static_cast<double>(rep + 1) * static_cast<double>(s.repetitions - rep - 1);
      std::fprintf(stderr, "strata: repetition %llu/%llu done, %.1f s elapsed, about %.1f s left\n",
                   static_cast<unsigned long long>(rep + 1), static_cast<unsigned long long>(s.repetitions), elapsed,
                   left);
    }
  }
  record.verified = verified_everything && !failure;

  if (ctx.io_component == "ompio" && s.backend != "posix") in_effect = merge_hints(in_effect, ompio_settings());

  // The record: rank 0 describes the run for everyone.
  MpiLibrary lib = mpi_library();
  nlohmann::json hints_json = nlohmann::json::object(), asked_json = nlohmann::json::object();
  for (const auto& [k, v] : in_effect) hints_json[k] = v;
  for (const auto& [k, v] : s.hints) asked_json[k] = v;
  nlohmann::json params = setup.params;
  params["seed"] = s.values.seed;
  params["step"] = s.values.step;
  record.header = {
      {"strata_version", STRATA_VERSION},
      {"git_rev", STRATA_GIT_REV},
      {"timestamp", now_iso8601()},
      {"host", hostname()},
      {"kernel", s.kernel->name()},
      {"backend", s.backend},
      {"params", params},
      {"ranks", size},
      {"nodes", nodes.node_count},
      {"node_map", {{"virtual", nodes.is_virtual}, {"source", nodes.source}, {"node_of_rank", nodes.node_of_rank}}},
      {"hints", hints_json},
      {"hints_requested", asked_json},
      {"advice", advise::to_json(advice)},
      {"mpi", {{"library", lib.name}, {"version", lib.version}, {"full", lib.full},
               {"standard", std::to_string(lib.standard_major) + "." + std::to_string(lib.standard_minor)}}},
      {"io_component", ctx.io_component},
      {"mpi_workarounds", env.mpi_workarounds},
      {"fs_type", fs.type},
      {"fs_block_size", fs.block_size},
      {"output", s.target.path},
      {"layout", layout_name(s.target.layout)},
      {"file_per_process", s.target.layout == Layout::file_per_process},
      {"files", ctx.file.files},
      {"node_local", s.target.node_local},
      {"operations", nlohmann::json::array()},
      {"bytes_per_rank", {{"local", local}}},
      {"global_bytes", d.global_bytes()},
  };
  if (s.do_write) record.header["operations"].push_back("write");
  if (s.do_read) record.header["operations"].push_back("read");
  if (failure) record.header["error"] = *failure;
  if (s.target.node_local) record.header["node_local_root"] = node_local_root();

  collectively(comm, [&] {
    if (rank != 0 || s.json_path.empty()) return;
    std::ofstream out(s.json_path);
    if (!out) throw_system("cannot write the JSON record \"" + s.json_path + "\"", errno);
    out << to_json(record).dump(2) << "\n";
    if (!out) throw_system("cannot write the JSON record \"" + s.json_path + "\"", errno);
  });
  if (rank == 0 && !s.quiet) std::fputs(to_table(record).c_str(), stdout);
  if (failure) throw Error(ErrorKind::verification, "verification failed: " + *failure);
  return 0;
}

}  // namespace strata::cli
