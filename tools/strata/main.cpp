// strata: the command-line program. Run it under mpirun/srun; see `strata --help`.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/mpi_env.hpp"

namespace {

const char* kUsage =
    "usage: strata COMMAND [options]\n"
    "\n"
    "Strata: parallel I/O kernels, backends and measurements. Run under mpirun or srun.\n"
    "\n"
    "commands:\n"
    "  run KERNEL   write and/or read a kernel's data through a backend, timed and verified\n"
    "  info [PATH]  MPI library, MPI-IO component, ranks and nodes, file system of PATH, node hardware\n"
    "  advise       striping and MPI-IO hints for a file system and a job, each with its reason\n"
    "\n"
    "`strata COMMAND --help` describes each command. Diagnostics: STRATA_LOG=debug|info|warn.\n";

}  // namespace

int main(int argc, char** argv) {
  strata::cli::Environment env;
  env.mpi_workarounds = strata::apply_mpi_workarounds_before_init();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  strata::log::set_rank(rank);

  std::vector<std::string> args(argv + 1, argv + argc);
  int status = 0;
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      if (rank == 0) std::fputs(kUsage, stdout);
      status = args.empty() ? 2 : 0;
    } else if (args[0] == "--version") {
      if (rank == 0) std::printf("strata %s (%s)\n", STRATA_VERSION, STRATA_GIT_REV);
    } else if (args[0] == "run") {
      status = strata::cli::run_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "info") {
      status = strata::cli::info_command({args.begin() + 1, args.end()}, env);
    } else if (args[0] == "advise") {
      status = strata::cli::advise_command({args.begin() + 1, args.end()}, env);
    } else {
      strata::throw_usage("unknown command \"" + args[0] + "\" (commands: run, info, advise; see strata --help)");
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
  MPI_Finalize();
  return status;
}
