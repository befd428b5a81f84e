// strata: the command-line program. Run it under mpirun/srun; see `strata --help`.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_env.hpp"
#include "common/suggest.hpp"
#include "common/watchdog.hpp"
#include "strata_git_rev.h"  // STRATA_GIT_REV, written at build time (cmake/git_rev.cmake)

namespace {

const char* kUsage =
    "usage: strata COMMAND [options]\n"
    "\n"
    "Strata: parallel I/O kernels, backends and measurements. Run under mpirun or srun.\n"
    "\n"
    "commands:\n"
    "  run KERNEL   write and/or read a kernel's data through a backend, timed and verified\n"
    "  info [PATH]  MPI library, MPI-IO component, ranks and nodes, file system of PATH, node hardware;\n"
    "               info --tiers: the memory tiers aggregation can use, with their figures;\n"
    "               info --catalogue [--json]: this build's kernels, backends, layouts and hints\n"
    "  plan KERNEL  a dry run of the engine: partitions, elected aggregators and tiers, every candidate's cost\n"
    "  advise       striping and MPI-IO hints for a file system and a job, each with its reason\n"
    "  cost         the aggregator-placement cost model for given per-node loads, every node and tier\n"

    "  decomp ...   PIO decomposition maps: describe one (blocks, lengths, coverage) or generate one\n"
    "  verify PATH  checks an engine output: index, files' sizes, checksums; reports uncommitted writes\n"
    "  drain PATH   finishes a drain to PATH (hint strata_drain) that a crash interrupted\n"
    "  replay LOG   replays a Darshan log's writes through backends, verified, beside the log's figures\n"
    "  exec -- PROG runs an unmodified MPI-IO, HDF5 or PnetCDF program with its collective writes through\n"
    "               the engine (libstrata_preload.so; see strata exec --help)\n"
    "\n"
    "The experiment harness (campaigns, statistics, reports, the stripe-count fit) is its own\n"
    "program, strata-bench; it runs this one under mpirun or srun.\n"
    "\n"
    "`strata COMMAND --help` describes each command. Diagnostics: STRATA_LOG=debug|info|warn.\n";

}  // namespace

namespace strata::cli {

// The harness's commands that strata used to forward to strata-bench: what to run instead, or null.
const char* harness_command(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) {
    return "the experiment harness is its own program: run strata-bench ... (see strata-bench --help)";
  }
  for (int i = 2; argc > 1 && std::strcmp(argv[1], "advise") == 0 && i < argc; ++i) {
    if (std::strncmp(argv[i], "--calibrate", 11) == 0) {
      return "the stripe-count fit is the harness's: run strata-bench calibrate RESULTS.sqlite [--backend B] "
             "[--kernel K] [--json FILE]";
    }
  }
  return nullptr;
}

}  // namespace strata::cli

int main(int argc, char** argv) {
  // The harness calls this program, not the other way round: point its commands to it (before
  // MPI_Init, so it works without mpirun).
  if (const char* moved = strata::cli::harness_command(argc, argv)) {
    std::fprintf(stderr, "strata: error: %s\n", moved);
    return 2;
  }
  // exec becomes the program: no MPI here (the program initialises it).
  if (argc > 1 && std::strcmp(argv[1], "exec") == 0) return strata::cli::exec_command(argc - 2, argv + 2);
  strata::cli::Environment env;
  env.allocator = strata::keep_freed_memory();
  env.mpi_workarounds = strata::apply_mpi_workarounds_before_init();
  // Serialized: MSLIO's OpenMP threads make their MPI-IO calls one at a time (kernels/mslio).
  int thread_level = MPI_THREAD_SINGLE;
  // With STRATA_TIMEOUT, multiple: the watchdog's thread talks to the peers (common/watchdog.hpp).
  MPI_Init_thread(&argc, &argv, strata::watchdog::thread_level(MPI_THREAD_SERIALIZED), &thread_level);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  strata::log::set_rank(rank);

  std::vector<std::string> args(argv + 1, argv + argc);
  int status = 0;
  try {
    strata::watchdog::start(MPI_COMM_WORLD, thread_level);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      if (rank == 0) std::fputs(kUsage, stdout);
      status = args.empty() ? 2 : 0;
    } else if (args[0] == "--version") {
      if (rank == 0) std::printf("strata %s (%s)\n", STRATA_VERSION, STRATA_GIT_REV);
    } else if (args[0] == "run") {
      status = strata::cli::run_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "info") {
      status = strata::cli::info_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "plan") {
      status = strata::cli::plan_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "advise") {
      status = strata::cli::advise_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "cost") {
      status = strata::cli::cost_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "decomp") {
      status = strata::cli::decomp_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "verify") {
      status = strata::cli::verify_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "drain") {
      status = strata::cli::drain_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "replay") {
      status = strata::cli::replay_command({args.begin() + 1, args.end()}, env);
    } else {
      strata::throw_usage(
          "unknown command \"" + args[0] + "\"" +
          strata::did_you_mean(
              args[0], {"run", "info", "plan", "advise", "cost", "decomp", "verify", "drain", "replay", "exec"}) +
          " (commands: run, info, plan, advise, cost, decomp, verify, drain, replay, exec; see strata --help)");
    }
  } catch (const strata::Error& e) {
    if (rank == 0) std::fprintf(stderr, "strata: error: %s\n", e.what());
    status = e.exit_status();
  } catch (const std::exception& e) {
    // Not agreed collectively: abort so no rank is left waiting.
    std::fprintf(stderr, "strata: internal error on rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 70);
  }
  std::fflush(stdout);
  strata::watchdog::stop();
  MPI_Finalize();
  return status;
}
