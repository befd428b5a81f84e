// strata info [PATH]: what Strata sees of the MPI library, the MPI-IO component, the ranks and
// nodes, the file system of PATH and the node's hardware.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arch/hwloc_summary.hpp"
#include "arch/node_map.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/hints.hpp"
#include "common/mpi_env.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "common/watchdog.hpp"
#include "fs/fs_info.hpp"
#include "fs/hints_in_effect.hpp"
#include "help_table.hpp"
#include "json_file.hpp"
#include "run/catalogue.hpp"
#include "run/test_matrix.hpp"

namespace strata::cli {

namespace {

const char* kInfoUsage =
    "usage: [mpirun -np N] strata info [PATH] [--json FILE]\n"
    "       [mpirun -np N] strata info --tiers [--json FILE]\n"
    "       [mpirun -np N] strata info --probe [DIR] [--json FILE]\n"
    "       strata info --catalogue [--json]\n"
    "       strata info --tests\n\n"
    "Prints the MPI library and version, the MPI-IO component in use (confirmed by opening a\n"
    "probe file beside PATH and reading its hints back), ranks and nodes (and whether the node map\n"
    "is virtual: STRATA_RANKS_PER_NODE / STRATA_NODE_MAP), the file system type and block size\n"
    "of PATH (default: the current directory) and a short hwloc summary of the node.\n"
    "--catalogue lists the kernels, backends (with what each can do), layouts and hints of this\n"
    "build; with --json, as JSON on standard output (what the harness and the tests read).\n"
    "--tests prints the MPI test matrix of this build, one test a line (tab-separated: name, ranks,\n"
    "launch, environment, arguments): every kernel's declared tests on the backend variants they\n"
    "choose (src/run/test_matrix.hpp); tests/mpi/CMakeLists.txt registers them with ctest.\n";

// strata info --catalogue [--json]: the catalogue (src/run/catalogue.hpp), for people or as JSON.
int catalogue_info(MPI_Comm comm, bool json) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return 0;
  const nlohmann::json c = catalogue();
  if (json) {
    std::fputs((c.dump(2) + "\n").c_str(), stdout);
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& k : c["kernels"])
    rows.emplace_back(k["name"], k["kind"].get<std::string>() + ": " + k["summary"].get<std::string>());
  std::string text = "kernels:\n" + help_table(rows);
  rows.clear();
  for (const auto& b : c["backends"]) {
    std::string layouts;
    for (const auto& l : b["layouts"]) layouts += (layouts.empty() ? "" : ", ") + l.get<std::string>();
    rows.emplace_back(b["name"], "*" + b["file_extension"].get<std::string>() + "; " + layouts +
                                     "; hints: " + b["hints"].get<std::string>() +
                                     (b["mpi_io"].get<bool>() ? "; through MPI-IO" : ""));
  }
  text += "\nbackends:\n" + help_table(rows);
  rows.clear();
  for (const auto& h : c["hints"]["engine"])
    rows.emplace_back(h["name"], h["values"].get<std::string>() + ": " + h["meaning"].get<std::string>());
  text += "\nengine hints (backend strata):\n" + help_table(rows);
  std::fputs(text.c_str(), stdout);
  return 0;
}

// Opens and deletes a probe file in `dir` to learn the component and its default hints.
bool probe_io(MPI_Comm comm, const std::string& dir, std::string& component, Hints& hints) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  long tag = static_cast<long>(getpid());
  MPI_Bcast(&tag, 1, MPI_LONG, 0, comm);
  std::string path = (std::filesystem::path(dir) / (".strata-info-probe-" + std::to_string(tag))).string();
  MPI_File fh = MPI_FILE_NULL;
  RomioHintCapture capture(io_component() == "romio");
  int rc = MPI_File_open(comm, path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh);
  Hints printed = capture.finish();
  if (rc != MPI_SUCCESS) return false;
  component = printed.empty() ? io_component_of(fh) : "romio";
  Hints from_info;
  MPI_Info got = MPI_INFO_NULL;
  if (MPI_File_get_info(fh, &got) == MPI_SUCCESS) from_info = MpiInfo(got).entries();
  hints = effective_hints(from_info, printed);
  if (component == "ompio") hints = merge_hints(hints, ompio_settings());
  MPI_File_close(&fh);
  return true;
}

// What strata info PATH found, computed on every rank (the hardware on rank 0), then rendered.
struct InfoResult {
  std::string path, dir;
  FsInfo fs;
  NodeMap nodes;
  std::string component;
  bool confirmed = false;  // the component was confirmed by opening a probe file in dir
  Hints defaults;          // the component's hints in effect on that probe file
  NodeSummary hw;
  MpiLibrary lib;
  int ranks = 1;
};

InfoResult gather_info(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  InfoResult r;
  r.path = path;
  MPI_Comm_size(comm, &r.ranks);
  r.nodes = node_map(comm);
  collectively(comm, [&] { r.fs = fs_info(path); });
  r.dir =
      std::filesystem::is_directory(r.fs.path) ? r.fs.path : std::filesystem::path(r.fs.path).parent_path().string();
  r.component = io_component();
  r.confirmed = probe_io(comm, r.dir, r.component, r.defaults);
  collectively(comm, [&] {
    if (rank == 0) r.hw = hwloc_summary();
  });
  r.lib = mpi_library();
  return r;
}

std::string info_text(const InfoResult& r, const Environment& env) {
  std::ostringstream out;
  out << "MPI library      " << r.lib.name << " " << r.lib.version << " (MPI " << r.lib.standard_major << "."
      << r.lib.standard_minor << ")\n";
  out << "MPI-IO component " << r.component
      << (r.confirmed ? " (confirmed by opening a file in " + r.dir + ")"
                      : " (from the environment; no probe file could be created in " + r.dir + ")")
      << "\n";
  for (const auto& w : env.mpi_workarounds) out << "  workaround     " << w << "\n";
  out << "  allocator      " << env.allocator.describe() << "\n";
  const std::string caveat = io_component_caveat(r.component);
  if (!caveat.empty()) out << "  caveat         " << caveat << "\n";
  out << "watchdog         " << watchdog::describe_setting() << "\n";
  out << "ranks            " << r.ranks << "\n";
  out << "nodes            " << r.nodes.node_count << (r.nodes.is_virtual ? " (virtual, from " : " (from ")
      << r.nodes.source << ")\n";
  std::vector<std::string> members(static_cast<size_t>(r.nodes.node_count));  // ranks per node, as lists
  for (int k = 0; k < r.ranks; ++k) {
    std::string& list = members[static_cast<size_t>(r.nodes.node_of_rank[static_cast<size_t>(k)])];
    list += (list.empty() ? "" : ",") + std::to_string(k);
  }
  for (size_t n = 0; n < members.size() && n < 16; ++n)
    out << "  node " << n << "         ranks " << members[n] << "\n";
  if (members.size() > 16) out << "  ...\n";
  const FsInfo& fs = r.fs;
  out << "path             " << r.path << " (examined " << fs.path << ")\n";
  out << "file system      " << fs.type << " (magic 0x" << std::hex << fs.magic << std::dec << "), block size "
      << fs.block_size << " B, " << format_size(fs.free_bytes) << " free of " << format_size(fs.total_bytes) << "\n";
  const NodeSummary& hw = r.hw;
  out << "node hardware    " << hw.packages << " package(s), " << hw.numa_nodes << " NUMA node(s), " << hw.cores
      << " core(s), " << hw.pus << " PU(s), " << format_size(hw.memory_bytes) << " memory";
  if (hw.l3_bytes) out << ", L3 " << format_size(hw.l3_bytes);
  out << "\n";
  if (!hw.cpu_model.empty()) out << "cpu              " << hw.cpu_model << "\n";
  out << "hwloc            " << hw.hwloc_version << "\n";
  if (!r.defaults.empty()) {
    std::string line;
    for (const auto& [k, v] : r.defaults) line += (line.empty() ? "" : " ") + k + "=" + v;
    out << "default hints    " << line << "\n";
  }
  return out.str();
}

nlohmann::json info_json(const InfoResult& r, const Environment& env) {
  nlohmann::json hints_json = nlohmann::json::object();
  for (const auto& [k, v] : r.defaults) hints_json[k] = v;
  const FsInfo& fs = r.fs;
  const NodeSummary& hw = r.hw;
  return {
      {"mpi", {{"library", r.lib.name}, {"version", r.lib.version}, {"full", r.lib.full}}},
      {"io_component", r.component},
      {"io_component_confirmed", r.confirmed},
      {"mpi_workarounds", env.mpi_workarounds},
      {"allocator",
       {{"kept_freed_memory", env.allocator.applied},
        {"glibc_tunables", env.allocator.glibc_tunables()},
        {"summary", env.allocator.describe()}}},
      {"io_component_caveat", io_component_caveat(r.component)},
      {"watchdog_timeout_s", watchdog::timeout()},
      {"ranks", r.ranks},
      {"nodes", r.nodes.node_count},
      {"node_map",
       {{"virtual", r.nodes.is_virtual}, {"source", r.nodes.source}, {"node_of_rank", r.nodes.node_of_rank}}},
      {"path", r.path},
      {"fs",
       {{"type", fs.type},
        {"magic", fs.magic},
        {"block_size", fs.block_size},
        {"total_bytes", fs.total_bytes},
        {"free_bytes", fs.free_bytes}}},
      {"hardware",
       {{"packages", hw.packages},
        {"numa_nodes", hw.numa_nodes},
        {"cores", hw.cores},
        {"pus", hw.pus},
        {"memory_bytes", hw.memory_bytes},
        {"l3_bytes", hw.l3_bytes},
        {"cpu_model", hw.cpu_model},
        {"hwloc_version", hw.hwloc_version}}},
      {"default_hints", hints_json},
  };
}

void add_info_options(OptionSet& o) {
  o.add("json", "FILE", "also write the information as JSON (rank 0)");
  o.add_flag("tiers",
             "list the memory tiers aggregation can use: latency, bandwidth, capacity, persistency (from "
             "STRATA_MACHINE or the cached probe), and why a tier is absent; and the engine's I/O figures");
  o.add_flag("catalogue",
             "list this build's kernels, backends, layouts and hints (with --json: as JSON on standard "
             "output)");
  o.add_flag("tests", "print this build's MPI test matrix, one test a line (what tests/mpi registers)");
  o.add_flag("probe",
             "measure the engine's I/O figures (puts, fences, collectives, copies, hashes, file requests in "
             "PATH, default the current folder) and store them in the machine cache; collective, under a second");
}

}  // namespace

int info_command(const std::vector<std::string>& args, const Environment& env) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (std::find(args.begin(), args.end(), "--tests") != args.end()) {
    collectively(comm, [&] {
      if (args.size() != 1) throw_usage("strata info --tests takes no other argument");
    });
    if (rank == 0) std::fputs(test_matrix_lines(test_matrix()).c_str(), stdout);
    return 0;
  }
  if (std::find(args.begin(), args.end(), "--catalogue") != args.end()) {
    OptionSet c;  // --json is a switch here: the catalogue goes to standard output
    c.add_flag("catalogue", "list kernels, backends, layouts and hints");
    c.add_flag("json", "as JSON");
    collectively(comm, [&] {
      if (!c.parse(args).empty()) throw_usage("strata info --catalogue takes no PATH");
    });
    return catalogue_info(comm, c.flag("json"));
  }
  OptionSet o;
  add_info_options(o);
  std::vector<std::string> positional;
  collectively(comm, [&] {
    positional = o.parse(args);
    if (positional.size() > 1) throw_usage("strata info takes at most one PATH");
    std::error_code ec;
    if (!positional.empty() && !std::filesystem::exists(positional[0], ec)) {
      throw_usage("strata info: " + positional[0] +
                  " does not exist (give a file or folder on the file system to examine)");
    }
    // --json FILE's folder, checked on every rank before the work (info, --tiers, --probe)
    if (!o.help_requested() && o.given("json")) check_record_path(o.get("json"), "--json");
  });
  if (o.help_requested()) {
    if (rank == 0) std::printf("%s\noptions:\n%s", kInfoUsage, o.help_text().c_str());
    return 0;
  }
  if (o.flag("tiers")) return tiers_info(comm, o.get("json"));
  if (o.flag("probe")) return probe_info(comm, positional.empty() ? "." : positional[0], o.get("json"));
  const InfoResult info = gather_info(comm, positional.empty() ? "." : positional[0]);
  collectively(comm, [&] {
    if (rank != 0) return;
    std::fputs(info_text(info, env).c_str(), stdout);
    if (o.given("json")) write_json_file(o.get("json"), info_json(info, env));
  });
  return 0;
}

}  // namespace strata::cli
