#include "run/run.hpp"

#include <cstdio>
#include <memory>

#include "arch/node_map.hpp"
#include "backends/backend.hpp"
#include "common/error.hpp"
#include "common/mpi_env.hpp"
#include "common/watchdog.hpp"
#include "fs/fs_info.hpp"
#include "fs/hints_in_effect.hpp"
#include "run/workload.hpp"

namespace strata {

RunRecord run(const RunOptions& options, MPI_Comm comm, const RunEnvironment& env) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  RunOptions o = options;
  KernelKind kind = KernelKind::decomposition;
  collectively(comm, [&] {
    o.check();
    kind = o.kind();
    // Options filled in by a program rather than parsed: the kernel reads its own options' defaults.
    if (!o.parsed.declared("seed")) {
      declare_run_options(o.parsed, o.kernel);
      o.parsed.parse({});
    }
  });
  NodeMap nodes = node_map(comm);
  std::unique_ptr<Workload> work =
      kind == KernelKind::application ? application_workload(o, comm, nodes) : decomposition_workload(o, comm, nodes);
  // A write that hangs has a likely cause the watchdog can name: a full file system, on which
  // OMPIO's collective writes wait forever instead of failing (docs/reliability.md).
  watchdog::set_diagnosis([path = work->output_path(), component = io_component()] {
    std::string cause = full_file_system(path);
    if (!cause.empty() && component == "ompio") {
      cause +=
          " (OMPIO waits forever in a collective write that a full disk fails; ROMIO reports the error: "
          "--mca io romio321)";
    }
    return cause;
  });
  struct ForgetDiagnosis {
    ~ForgetDiagnosis() { watchdog::set_diagnosis({}); }
  } forget_diagnosis;
  RunRecord record;
  record.verify_requested = o.verify;
  record.switches = run_switches(o);
  const double started = MPI_Wtime();
  for (uint64_t rep = 0; rep < o.repetitions && !record.failure; ++rep) {
    record.repetitions.push_back(work->repeat(rep == 0, record.failure));
    // Progress for runs longer than a few seconds (rank 0, on stderr, so tables stay clean).
    const double elapsed = MPI_Wtime() - started;
    if (rank == 0 && !o.quiet && elapsed >= 2.0 && rep + 1 < o.repetitions) {
      const double left = elapsed / static_cast<double>(rep + 1) * static_cast<double>(o.repetitions - rep - 1);
      std::fprintf(stderr, "strata: repetition %llu/%llu done, %.1f s elapsed, about %.1f s left\n",
                   static_cast<unsigned long long>(rep + 1), static_cast<unsigned long long>(o.repetitions), elapsed,
                   left);
    }
  }
  record.verified = o.verify && !record.failure;
  record.kernel_text = work->text();

  // The header: rank 0's description of the run is everybody's.
  int thread_level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&thread_level);
  const MpiLibrary lib = mpi_library();
  nlohmann::json in_effect = nlohmann::json::object(), asked = nlohmann::json::object();
  nlohmann::json ignored = nlohmann::json::object();
  Hints effect = work->hints_in_effect();
  // Hints for MPI-IO that the component did not take: said apart, never listed as in effect.
  if (kind == KernelKind::decomposition && backend_row(o.backend).can.hints == HintFamily::mpi_io) {
    const Hints dropped = hints_not_recognised(o.hints, effect, io_component());
    effect = without_keys(effect, dropped);
    for (const auto& [k, v] : dropped) ignored[k] = v;
  }
  for (const auto& [k, v] : effect) in_effect[k] = v;
  for (const auto& [k, v] : o.hints) asked[k] = v;
  record.header = {
      {"strata_version", STRATA_VERSION},
      {"git_rev", env.git_rev},
      {"timestamp", now_iso8601()},
      {"host", hostname()},
      {"kernel", o.kernel},
      {"kernel_kind", kernel_kind_name(kind)},
      {"backend", kind == KernelKind::application ? o.mode : o.backend},
      {"ranks", size},
      {"nodes", nodes.node_count},
      {"node_map", {{"virtual", nodes.is_virtual}, {"source", nodes.source}, {"node_of_rank", nodes.node_of_rank}}},
      {"hints", in_effect},
      {"hints_requested", asked},
      {"hints_not_recognised", ignored},
      {"mpi",
       {{"library", lib.name},
        {"version", lib.version},
        {"full", lib.full},
        {"standard", std::to_string(lib.standard_major) + "." + std::to_string(lib.standard_minor)},
        {"thread_level", thread_level}}},
      {"io_component", io_component()},
      {"mpi_workarounds", env.mpi_workarounds},
      {"allocator",
       {{"kept_freed_memory", env.allocator.applied},
        {"trim_threshold", env.allocator.trim_threshold},
        {"mmap_threshold", env.allocator.mmap_threshold},
        {"glibc_tunables", env.allocator.glibc_tunables()},
        {"summary", env.allocator.describe()}}},
      {"operations", nlohmann::json::array()},
      {"warnings", nlohmann::json::array()},
      {"watchdog_timeout_s", watchdog::timeout()},  // 0: off (STRATA_TIMEOUT=0)
  };
  // Through MPI-IO under a component known to lose errors: said before any number is read.
  const bool mpi_io = kind == KernelKind::decomposition && backend_row(o.backend).can.mpi_io;
  const std::string caveat = mpi_io ? io_component_caveat(io_component()) : "";
  if (!caveat.empty()) record.header["warnings"].push_back(caveat);
  record.header.update(work->header());
  record.header["params"]["seed"] = o.seed;
  record.header["params"]["step"] = o.step;
  if (o.writes()) record.header["operations"].push_back("write");
  if (o.read) record.header["operations"].push_back("read");
  if (record.failure) record.header["error"] = *record.failure;
  return record;
}

}  // namespace strata
