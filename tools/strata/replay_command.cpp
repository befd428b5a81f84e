// strata replay LOG: a recorded job's writes replayed through backends. Rank 0 turns a Darshan
// log into a trace with the harness's converter (python -m strata.replay, which reads the log
// with pydarshan); every rank then runs the `trace` kernel through each backend with strata::run,
// and rank 0 sets the log's figures beside each replay's (replay_report.hpp). docs/replay.md.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/backend.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "replay_report.hpp"
#include "run/run.hpp"
#include "strata_git_rev.h"  // STRATA_GIT_REV, written at build time (cmake/git_rev.cmake)

extern char** environ;

namespace strata::cli {

namespace {

const char* kHelp =
    "usage: mpirun -np N strata replay LOG.darshan|TRACE.json [--backend NAMES] [--output PATH] [--verify]\n"
    "                                  [--json FILE] [--max-bytes SIZE] [--max-requests N] [--trace-out FILE]\n"
    "\n"
    "Replays a recorded job's writes and reads through backends: rank 0 turns the Darshan log into a\n"
    "trace (python -m strata.replay, with pydarshan: DXT's exact requests, or a synthetic pattern\n"
    "matching the counters), then the trace kernel writes it through each backend in turn, and reads\n"
    "back DXT's read requests (of the bytes the trace writes) from what it wrote, verified with\n"
    "--verify; a table sets the log's figures (requests, bytes, sizes, time in I/O) beside each\n"
    "replay's. A job that wrote through MPI-IO replays through the MPI-IO backend of its mode\n"
    "(mpiio-coll for collective writes, mpiio-ind for independent ones) unless --backend says.\n"
    "A job of more ranks than N replays folded: job rank r on rank r mod N.\n";

const char* kExample =
    "\nexample:\n"
    "  mpirun -np 4 --oversubscribe strata replay \"$(.venv/bin/python -m strata.replay --examples | grep ior_hdf5)\" "
    "--verify\n"
    "\nThe converter (the strata package installed in PREFIX/share/strata/python) runs with STRATA_PYTHON,\n"
    "else PREFIX/share/strata/venv/bin/python (in the build tree: the venv of make setup), else python3.\n";

void declare(OptionSet& o) {
  o.section("replay options");
  o.add("backend", "NAMES",
        "backends to replay through, in turn, comma-separated (default posix, the MPI-IO backend of the job's own "
        "mode: mpiio-coll, or mpiio-ind for a job whose MPI-IO writes were independent, and strata)",
        "posix,mpiio-coll,strata");
  o.add("output", "PATH",
        "the replay's output; with several backends PATH.<backend> each (default strata-replay[.<backend>] and the "
        "backend's extension)",
        "");
  o.add_flag("verify",
             "read every replayed byte back and compare it with the generator, and compare what the job's reads "
             "read");
  o.add_flag("no-reads", "replay the writes only (not DXT's read requests)");
  o.add("json", "FILE", "write the report as JSON (- prints it instead of the table)", "");
  o.add("max-bytes", "SIZE", "scale a large job down: the trace writes at most SIZE bytes (converter)", "1G");
  o.add("max-requests", "N", "scale a large job down: keep one request in k per rank, at most about N (converter)",
        "1000000");
  o.add("trace-out", "FILE", "where the converter writes the trace (default: PATH.trace.json, kept)", "");
  o.add("hints", "K=V,K=V", "MPI-IO hints for every backend (as strata run --hints)", "");
  o.add_flag("file-per-process",
             "each rank writes its requests one after another into its own file PATH.<rank> (as strata run "
             "--file-per-process: a file-per-process job's layout, without the log's offsets)");
  o.add_flag("quiet", "print nothing but errors");
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) names.push_back(item);
  }
  if (names.empty()) throw_usage("--backend needs at least one backend name");
  for (const std::string& n : names) (void)backend_row(n);  // a usage Error naming the backends for a bad one
  return names;
}

bool is_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_usage("cannot read \"" + path + "\": " + std::strerror(errno));
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {}
  return c == '{';
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Where the program keeps its data: PREFIX/share/strata beside PREFIX/bin/strata, installed or in
// the build tree (where CMake links share/strata/python/strata to the source's package and
// share/strata/venv to the source tree's venv). Nothing of the source tree is compiled in.
std::string share_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path().parent_path() / "share" / "strata").string();
}

// The interpreter that runs the converter: STRATA_PYTHON, share/strata/venv/bin/python (the build
// tree's link to the venv; called by that path, so Python finds the venv's pyvenv.cfg), python3.
std::string python_interpreter() {
  if (const char* p = std::getenv("STRATA_PYTHON"); p != nullptr && *p != '\0') return p;
  const std::string linked = share_dir() + "/venv/bin/python";
  return executable(linked) ? linked : "python3";
}

// Runs the converter (rank 0 alone); a usage Error with its message when it fails.
void convert(const std::string& log, const std::string& trace, const OptionSet& o) {
  const std::string python = python_interpreter();
  std::vector<std::string> args = {python,
                                   "-m",
                                   "strata.replay",
                                   log,
                                   "-o",
                                   trace,
                                   "--quiet",
                                   "--max-bytes",
                                   o.get("max-bytes"),
                                   "--max-requests",
                                   o.get("max-requests")};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The converter's package: the one installed with the program (share/strata/python) first.
  std::vector<std::string> env_text;
  const std::string tree = share_dir() + "/python";
  struct stat st {};
  const bool has_tree = ::stat(tree.c_str(), &st) == 0;
  for (char** e = environ; *e != nullptr; ++e) {
    if (has_tree && std::string(*e).rfind("PYTHONPATH=", 0) == 0) continue;
    env_text.emplace_back(*e);
  }
  if (has_tree) {
    const char* old = std::getenv("PYTHONPATH");
    env_text.push_back("PYTHONPATH=" + tree + (old != nullptr && *old != '\0' ? ":" + std::string(old) : ""));
  }
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  char errors[] = "/tmp/strata-replay-XXXXXX";
  const int err_fd = ::mkstemp(errors);
  if (err_fd < 0) throw_system("cannot create a temporary file for the converter's messages", errno);
  ::unlink(errors);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned == 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  }
  std::string message;
  char buf[4096];
  ::lseek(err_fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(err_fd, buf, sizeof buf)) > 0;) message.append(buf, static_cast<size_t>(n));
  ::close(err_fd);
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.pop_back();
  if (spawned != 0) {
    throw_usage("cannot run the converter's Python \"" + python + "\" (" + std::strerror(spawned) +
                "): run make setup, or set STRATA_PYTHON to a python with the strata package and darshan");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const size_t last = message.rfind('\n');
    const std::string tail = last == std::string::npos ? message : message.substr(last + 1);
    throw_usage("converting \"" + log + "\" with " + python + " -m strata.replay failed" +
                (tail.empty() ? "" : ": " + tail) +
                (message.find("No module named") != std::string::npos
                     ? " (run make setup, or set STRATA_PYTHON to a python with the strata package and darshan)"
                     : ""));
  }
}

}  // namespace

int replay_command(const std::vector<std::string>& args, const Environment& env) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  OptionSet o;
  declare(o);
  std::vector<std::string> positional;
  std::vector<std::string> backends;
  collectively(comm, [&] {
    positional = o.parse(args);
    if (o.help_requested()) return;
    if (positional.size() != 1)
      throw_usage("strata replay needs one LOG.darshan or TRACE.json (see strata replay --help)");
    backends = split_names(o.get("backend"));
    (void)parse_size(o.get("max-bytes"), "--max-bytes");
    (void)parse_count(o.get("max-requests"), "--max-requests");
    if (!o.get("json").empty() && o.get("json") != "-") check_record_path(o.get("json"), "--json");
    if (!o.get("trace-out").empty()) check_record_path(o.get("trace-out"), "--trace-out");
  });
  if (o.help_requested()) {
    if (rank == 0) std::fputs((kHelp + o.help_text() + kExample).c_str(), stdout);
    return 0;
  }
  const std::string& log = positional[0];
  // PATH, or PATH.<backend> for several; without --output strata-replay[.<backend>] and the backend's extension.
  auto output_of = [&](const std::string& backend) {
    const std::string given = o.get("output");
    const std::string base = given.empty() ? "strata-replay" : given;
    const std::string path = backends.size() == 1 ? base : base + "." + backend;
    return given.empty() ? path + backend_row(backend).can.file_extension : path;
  };
  // The trace: the log itself when it is one, else the converter's output (rank 0 converts).
  std::string trace_path = log;
  collectively(comm, "replay: convert", [&] {
    if (is_trace(log)) return;
    const std::string base = o.get("output").empty() ? "strata-replay" : o.get("output");
    trace_path = o.get("trace-out").empty() ? base + ".trace.json" : o.get("trace-out");
    if (rank == 0) convert(log, trace_path, o);
  });
  nlohmann::json trace;
  collectively(comm, [&] {
    if (rank != 0) return;
    std::ifstream in(trace_path);
    try {
      trace = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw_usage("trace file \"" + trace_path + "\" is not JSON: " + e.what());
    }
  });

  // The trace's MPI-IO mode chooses the default MPI-IO backend; its read phases follow each write.
  int described[2] = {0, 0};  // independent MPI-IO writes; read phases
  if (rank == 0 && !trace.is_null()) {
    described[0] = trace.value("mpiio_mode", std::string()) == "independent" ? 1 : 0;
    described[1] = static_cast<int>(trace.value("read_phases", 0ULL));
  }
  MPI_Bcast(described, 2, MPI_INT, 0, comm);
  if (described[0] != 0 && !o.given("backend")) {
    for (std::string& b : backends) {
      if (b == "mpiio-coll") b = "mpiio-ind";
    }
  }
  const int read_phases = o.flag("no-reads") || o.flag("file-per-process") ? 0 : described[1];

  RunEnvironment run_env;
  run_env.mpi_workarounds = env.mpi_workarounds;
  run_env.allocator = env.allocator;
  run_env.git_rev = STRATA_GIT_REV;
  std::vector<std::pair<std::string, RunRecord>> replays;
  std::vector<std::vector<RunRecord>> reads;  // per backend: each read phase's record
  for (const std::string& backend : backends) {
    std::vector<std::string> run_args = {"trace", "--trace",  trace_path,         "--backend",
                                         backend, "--output", output_of(backend), "--quiet"};
    if (!o.get("hints").empty()) run_args.insert(run_args.end(), {"--hints", o.get("hints")});
    if (o.flag("file-per-process")) run_args.push_back("--file-per-process");
    std::vector<std::string> write_args = run_args;
    if (o.flag("verify")) write_args.push_back("--verify");
    RunOptions options;
    collectively(comm, [&] { options = RunOptions::parse(write_args); });
    replays.emplace_back(backend, run(options, comm, run_env));
    if (rank == 0) write_run_record_beside(write_args, options, replays.back().second);
    // The job's reads, phase by phase, from the output just written (read alone: no write first).
    reads.emplace_back();
    if (replays.back().second.failure) continue;
    for (int k = 0; k < read_phases; ++k) {
      std::vector<std::string> read_args = run_args;
      read_args.insert(read_args.end(), {"--trace-reads", std::to_string(k), "--read"});
      if (o.flag("verify")) read_args.push_back("--verify");
      collectively(comm, [&] { options = RunOptions::parse(read_args); });
      reads.back().push_back(run(options, comm, run_env));
      if (reads.back().back().failure) break;
    }
  }

  int size = 1;
  MPI_Comm_size(comm, &size);
  const nlohmann::json report =
      replay_report(log, trace_path, trace, size, replays, reads, o.flag("file-per-process"), o.flag("no-reads"));
  collectively(comm, [&] {
    if (rank != 0 || o.get("json").empty() || o.get("json") == "-") return;
    std::ofstream out(o.get("json"));
    out << report.dump(2) << "\n";
    if (!out) throw_system("cannot write the JSON report \"" + o.get("json") + "\"", errno);
  });
  if (rank == 0 && o.get("json") == "-") std::printf("%s\n", report.dump(2).c_str());
  if (rank == 0 && !o.flag("quiet") && o.get("json") != "-") std::fputs(replay_table(report).c_str(), stdout);
  for (size_t b = 0; b < replays.size(); ++b) {
    const auto& [backend, record] = replays[b];
    if (record.failure)
      throw Error(ErrorKind::verification, backend + " replay: verification failed: " + *record.failure);
    for (size_t k = 0; k < reads[b].size(); ++k) {
      if (reads[b][k].failure) {
        throw Error(ErrorKind::verification, backend + " replay: read phase " + std::to_string(k) +
                                                 ": verification failed: " + *reads[b][k].failure);
      }
    }
  }
  return 0;
}

}  // namespace strata::cli
