// strata run KERNEL: turns argv into strata::RunOptions, calls strata::run (src/run/run.hpp),
// writes the record (--json) and prints its table.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backends/backend.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "help_table.hpp"
#include "kernels/app_kernel.hpp"
#include "run/run.hpp"
#include "run_report.hpp"
#include "strata_git_rev.h"  // STRATA_GIT_REV, written at build time (cmake/git_rev.cmake)

namespace strata::cli {

namespace {

std::string backend_kernel_help(const std::string& kernel) {
  std::string text =
      "usage: mpirun -np N strata run KERNEL --backend NAME [options]\n\n"
      "Writes (and/or reads) KERNEL's data through a backend, times open / transfer / close per\n"
      "repetition, verifies every element with --verify, prints a table and writes --json.\n\n"
      "kernels:\n";
  text += kernels_help_table(true);
  text += "\nbackends:\n";
  std::vector<std::pair<std::string, std::string>> backends;
  for (const BackendRow& b : backend_table()) backends.emplace_back(b.name, b.summary);
  text += help_table(backends);
  OptionSet o;
  declare_run_options(o, kernel);
  text += o.help_text();
  if (kernel.empty()) text += "\n`strata run KERNEL --help` adds the kernel's own options.\n";
  text += "\nexample:\n  mpirun -np 4 strata run array1d --dist random --backend mpiio-coll --verify --json r.json\n";
  return text;
}

std::string application_kernel_help(const AppKernel& k) {
  std::string text = "usage: mpirun -np N strata run " + k.name() + " [--" + k.mode_option() + " NAME] [options]\n\n" +
                     k.summary() +
                     ".\nThe kernel writes its output itself, as its original does; strata times it, "
                     "reads it back\nwith --verify, prints a table and writes --json.\n\n";
  text += "modes (--" + k.mode_option() + "):\n";
  text += help_table(k.modes());
  OptionSet o;
  declare_run_options(o, k.name());
  text += "\n" + o.help_text();
  text += "\nexample:\n  " + k.example() + "\n";
  return text;
}

}  // namespace

void check_record_path(const std::string& path, const std::string& what) {
  const std::filesystem::path p(path);
  const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) throw_usage(what + " " + path + " is a folder, not a file");
  if (!std::filesystem::exists(folder, ec)) {
    throw_usage(what + " " + path + ": the folder " + folder.string() + " does not exist (nothing was written)");
  }
  if (!std::filesystem::is_directory(folder, ec)) {
    throw_usage(what + " " + path + ": " + folder.string() + " is not a folder (nothing was written)");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw_system(what + " " + path + ": cannot write in " + folder.string() + " (nothing was written)", errno);
  }
}

int run_command(const std::vector<std::string>& args, const Environment& env) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  RunOptions options;
  collectively(comm, [&] { options = RunOptions::parse(args); });
  if (options.help) {
    const AppKernel* app = options.kernel.empty() ? nullptr : find_app_kernel(options.kernel);
    if (rank == 0) {
      std::fputs((app != nullptr ? application_kernel_help(*app) : backend_kernel_help(options.kernel)).c_str(),
                 stdout);
    }
    return 0;
  }
  // The record's folder is checked on every rank before a byte of data is written: a record that
  // cannot be written would otherwise be found missing only after the run.
  collectively(comm, [&] {
    if (!options.json.empty()) check_record_path(options.json, "--json");
  });
  RunEnvironment run_env;
  run_env.mpi_workarounds = env.mpi_workarounds;
  run_env.allocator = env.allocator;
  run_env.git_rev = STRATA_GIT_REV;
  const RunRecord record = run(options, comm, run_env);

  collectively(comm, [&] {
    if (rank != 0 || options.json.empty()) return;
    std::ofstream out(options.json);
    if (!out) throw_system("cannot write the JSON record \"" + options.json + "\"", errno);
    out << to_json(record).dump(2) << "\n";
    if (!out) throw_system("cannot write the JSON record \"" + options.json + "\"", errno);
  });
  if (rank == 0 && !options.quiet) {
    std::fputs(to_table(record).c_str(), stdout);
    if (!record.kernel_text.empty()) std::fputs(("\n" + record.kernel_text).c_str(), stdout);
  }
  if (record.failure) throw Error(ErrorKind::verification, "verification failed: " + *record.failure);
  return 0;
}

}  // namespace strata::cli
