// strata run KERNEL: turns argv into strata::RunOptions, calls strata::run (src/run/run.hpp),
// writes the record (--json) and prints its table.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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

// The files of an output written at `output`: everything under it when it is a folder (an
// application kernel's tree), else it and the files beside it named NAME.* (files per process or
// per node, checkpoints), without Strata's own records. Paths relative to its folder.
nlohmann::json output_files(const std::filesystem::path& output) {
  namespace fs = std::filesystem;
  const fs::path folder = output.has_parent_path() ? output.parent_path() : fs::path(".");
  const std::string name = output.filename().string();
  std::vector<std::pair<std::string, uint64_t>> found;
  std::error_code ec;
  auto add = [&](const fs::path& p) {
    if (p.filename().string().find(".strata-") != std::string::npos || !fs::is_regular_file(p, ec)) return;
    found.emplace_back(fs::relative(p, folder, ec).string(), fs::file_size(p, ec));
  };
  if (fs::is_directory(output, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(output, ec)) add(e.path());
  } else {
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      const std::string n = e.path().filename().string();  // NAME, NAME.00000001, NAME.step000002
      if (n.rfind(name, 0) == 0 && (n.size() == name.size() || n[name.size()] == '.')) add(e.path());
    }
  }
  std::sort(found.begin(), found.end());
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [path, bytes] : found) files.push_back({{"path", path}, {"bytes", bytes}});
  return files;
}

}  // namespace

std::string run_record_path(const std::string& output) { return output + ".strata-run.json"; }

// Rank 0, after a write that verified or was not asked to: OUTPUT.strata-run.json (see
// run_record_path). Not for the engine (its index is the record) nor node-local files (elsewhere).
// A record that cannot be written is a warning: the output itself is whole.
void write_run_record_beside(const std::vector<std::string>& args, const RunOptions& o, const RunRecord& record) {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  const nlohmann::json& h = record.header;
  if (!o.writes() || record.failure || o.node_local || (o.kind() == KernelKind::decomposition && o.backend == "strata"))
    return;
  const std::string output = h.value("output", "");
  if (output.empty()) return;
  const nlohmann::json doc = {
      {"written_by", "strata run"},
      {"about",
       "the run that wrote this output: `strata verify OUTPUT` checks each file's size, the structure and "
       "the values against it"},
      {"args", args},
      {"cwd", cwd},  // where the run's relative paths (--trace, --maps, ...) start
      {"ranks", h["ranks"]},
      {"kernel", h["kernel"]},
      {"kernel_kind", h["kernel_kind"]},
      {"backend", h["backend"]},
      {"output", output},
      {"layout", h.value("layout", "")},
      {"node_map", h.value("node_map", nlohmann::json(nullptr))},  // files per node follow it
      {"global_bytes", h.value("global_bytes", nlohmann::json(nullptr))},
      {"timestamp", h["timestamp"]},
      {"files", output_files(output)},
  };
  std::ofstream out(run_record_path(output));
  out << doc.dump(2) << "\n";
  if (!out) {
    std::fprintf(stderr, "strata: warning: cannot write the run record %s (strata verify cannot check %s)\n",
                 run_record_path(output).c_str(), output.c_str());
  }
}

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
  if (rank == 0) write_run_record_beside(args, options, record);
  if (rank == 0 && !options.quiet) {
    std::fputs(to_table(record).c_str(), stdout);
    if (!record.kernel_text.empty()) std::fputs(("\n" + record.kernel_text).c_str(), stdout);
  }
  if (record.failure) throw Error(ErrorKind::verification, "verification failed: " + *record.failure);
  return 0;
}

}  // namespace strata::cli
