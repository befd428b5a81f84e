// strata: the command-line program. Run it under mpirun/srun; see `strata --help`.
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_env.hpp"
#include "common/watchdog.hpp"

namespace {

const char* kUsage =
    "usage: strata COMMAND [options]\n"
    "\n"
    "Strata: parallel I/O kernels, backends and measurements. Run under mpirun or srun.\n"
    "\n"
    "commands:\n"
    "  run KERNEL   write and/or read a kernel's data through a backend, timed and verified\n"
    "  info [PATH]  MPI library, MPI-IO component, ranks and nodes, file system of PATH, node hardware;\n"
    "               info --tiers: the memory tiers aggregation can use, with their figures\n"
    "  plan KERNEL  a dry run of the engine: partitions, elected aggregators and tiers, every candidate's cost\n"
    "  advise       striping and MPI-IO hints for a file system and a job, each with its reason;\n"
    "               advise --calibrate RESULTS.sqlite fits the stripe-count rule to a campaign (not under mpirun)\n"
    "  decomp ...   PIO decomposition maps: describe one (blocks, lengths, coverage) or generate one\n"
    "  verify PATH  checks an engine output: index, files' sizes, checksums; reports uncommitted writes\n"
    "  bench ...    the experiment harness, strata-bench (campaigns, statistics, reports); not under mpirun\n"
    "\n"
    "`strata COMMAND --help` describes each command. Diagnostics: STRATA_LOG=debug|info|warn.\n";

}  // namespace

namespace strata::cli {

// `strata bench ARGS` (and `strata advise --calibrate`) run `strata-bench ARGS` (the Python harness)
// with STRATA_BIN set to this binary: from PATH, else from the venv of the source tree this binary
// was built in.
void exec_harness(const std::vector<std::string>& args) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) setenv("STRATA_BIN", self.c_str(), 0);
  std::vector<std::string> words{"strata-bench"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  execvp("strata-bench", argv.data());
  if (!ec) {
    const auto venv = self.parent_path().parent_path().parent_path() / ".venv" / "bin" / "strata-bench";
    execv(venv.c_str(), argv.data());
  }
  std::fprintf(stderr, "strata: error: cannot run strata-bench: %s (run scripts/setup.sh, or put the venv's "
               "bin on PATH)\n", std::strerror(errno));
  std::exit(2);
}

}  // namespace strata::cli

int main(int argc, char** argv) {
  // Harness commands run without MPI: forwarded before MPI_Init.
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) strata::cli::exec_harness({argv + 2, argv + argc});
  if (argc > 1 && std::strcmp(argv[1], "advise") == 0) strata::cli::forward_advise_calibrate({argv + 2, argv + argc});
  strata::cli::Environment env;
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
    } else if (args[0] == "decomp") {
      status = strata::cli::decomp_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "verify") {
      status = strata::cli::verify_command({args.begin() + 1, args.end()}, env);
    } else {
      strata::throw_usage("unknown command \"" + args[0] + "\" (commands: run, info, plan, advise, decomp, verify; see strata --help)");
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
