// strata info --tiers: the memory tiers the engine can aggregate on, with the figures the cost
// model uses (from STRATA_MACHINE or the cached probe) and, for a tier a node lacks, why.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arch/machine.hpp"
#include "arch/memory_tier.hpp"
#include "arch/node_map.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "json_file.hpp"

namespace strata::cli {

namespace {

std::string seconds_text(double s) {
  char b[32];
  if (s < 1e-3) {
    std::snprintf(b, sizeof b, "%.3g us", s * 1e6);
  } else {
    std::snprintf(b, sizeof b, "%.3g ms", s * 1e3);
  }
  return b;
}

std::string format_fixed(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// Three significant digits, the point always shown ("3.00 GB/s"): a measured rate never reads
// as a whole number.
std::string rate_text(double bps) {
  char b[32];
  std::snprintf(b, sizeof b, "%#.3g GB/s", bps / 1e9);
  return b;
}

// The engine's I/O figures as a table, and as JSON.
std::string io_text(const IoFigures& f) {
  std::ostringstream out;
  out << "I/O figures ("
      << (f.measured ? "measured at " + std::to_string(f.probe_ranks) + " rank(s)"
                     : "stated defaults: strata info --probe measures them")
      << "), for the engine's choice of strategy:\n";
  if (f.measured && f.probed_at > 0) {
    char when[64] = "";
    const std::time_t t = static_cast<std::time_t>(f.probed_at);
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    out << "  probed " << when;
    if (f.load_average >= 0) out << ", load average " << format_fixed(f.load_average, 1);
    if (f.scatter > 0) out << ", repeats within " << format_fixed(f.scatter, 1) << "x of their best";
    out << "\n";
  }
  if (f.doubtful()) {
    out << "  doubtful: the machine was busy when they were measured (repeats scattered beyond "
        << format_fixed(kDoubtfulScatter, 1)
        << "x); the engine measures them again once the node is quieter, or now: strata info --probe\n";
  }
  if (f.older_than_build()) out << "  older than this build of Strata: strata info --probe measures them again\n";
  char line[160];
  auto row = [&](const char* name, const std::string& value, const char* meaning) {
    std::snprintf(line, sizeof line, "  %-18s %12s  %s\n", name, value.c_str(), meaning);
    out << line;
  };
  row("put latency", seconds_text(f.put_latency_s), "one small MPI_Put within a node");
  row("put bandwidth", rate_text(f.put_bandwidth_Bps), "a large MPI_Put within a node");
  row("packed run", seconds_text(f.put_run_s), "each run of one put with an hindexed target type");
  row("fence", seconds_text(f.fence_s), "one MPI_Win_fence");
  row("small collective", seconds_text(f.collective_s), "one 8-byte MPI_Allreduce");
  row("memcpy", rate_text(f.memcpy_Bps), "copy of 4 MiB");
  row("placed run", seconds_text(f.copy_run_s), "each 64-byte run copied to its place (a staged round)");
  row("spread run", seconds_text(f.spread_run_s), "each 8-byte run copied to a line of its own (a copied write)");
  row("first touch", rate_text(f.fresh_Bps), "first touches of memory the process never used");
  row("XXH3 hash", rate_text(f.hash_Bps), "checksum of 4 MiB");
  row("create", seconds_text(f.create_s), "a new file");
  row("rename", seconds_text(f.rename_s), "one rename()");
  row("write + fsync", f.fsync_Bps > 0 ? rate_text(f.fsync_Bps) : std::string("-"), "16 MiB written and synced");
  for (const WriteFigure& w : f.write) {
    const std::string name = "pwrite " + format_size(w.request_bytes);
    row(name.c_str(), seconds_text(w.seconds),
        f.curve_writers > 0 ? "one request into a new file's pages, the node's ranks at once"
                            : "one request into the page cache, one writer");
  }
  for (const WriteFigure& w : f.rewrite) {
    const std::string name = "rewrite " + format_size(w.request_bytes);
    row(name.c_str(), seconds_text(w.seconds), "one request over cached pages, the node's ranks at once");
  }
  return out.str();
}

nlohmann::json io_json(const IoFigures& f) {
  nlohmann::json curve = nlohmann::json::array();
  for (const WriteFigure& w : f.write) curve.push_back({{"bytes", w.request_bytes}, {"seconds", w.seconds}});
  nlohmann::json again = nlohmann::json::array();
  for (const WriteFigure& w : f.rewrite) again.push_back({{"bytes", w.request_bytes}, {"seconds", w.seconds}});
  return {{"measured", f.measured},
          {"probe_ranks", f.probe_ranks},
          {"put_latency_s", f.put_latency_s},
          {"put_bandwidth_Bps", f.put_bandwidth_Bps},
          {"put_run_s", f.put_run_s},
          {"fence_s", f.fence_s},
          {"collective_s", f.collective_s},
          {"memcpy_Bps", f.memcpy_Bps},
          {"copy_run_s", f.copy_run_s},
          {"spread_run_s", f.spread_run_s},
          {"fresh_Bps", f.fresh_Bps},
          {"hash_Bps", f.hash_Bps},
          {"create_s", f.create_s},
          {"rename_s", f.rename_s},
          {"fsync_Bps", f.fsync_Bps},
          {"write", curve},
          {"rewrite", again},
          {"curve_writers", f.curve_writers},
          {"scatter", f.scatter},
          {"load_average", f.load_average},
          {"probed_at", f.probed_at},
          {"doubtful", f.doubtful()},
          {"older_than_build", f.older_than_build()}};
}

}  // namespace

int probe_info(MPI_Comm comm, const std::string& dir, const std::string& json_path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  NodeMap nodes = node_map(comm);
  Machine machine = load_machine(comm, nodes.node);  // the cached tiers (probed once if missing)
  machine.io = probe_io_figures(comm, dir);
  const std::string cache = machine_cache_path();
  collectively(comm, [&] {
    if (rank != 0) return;
    std::string stored;
    if (!cache.empty()) {
      store_machine_cache(cache, machine_to_toml(machine));
      stored = "stored in " + cache;
    } else {
      stored = "not stored (no cache folder: set HOME or XDG_CACHE_HOME)";
    }
    std::printf("probed in %s on %zu rank(s), %d node(s)\n%s%s\n", dir.c_str(), nodes.node_of_rank.size(),
                nodes.node_count, io_text(machine.io).c_str(), stored.c_str());
    if (const char* m = std::getenv("STRATA_MACHINE"); m != nullptr && *m != '\0') {
      std::printf("note: STRATA_MACHINE=%s is set: the engine reads that file, so add this [io] table to it:\n%s", m,
                  io_to_toml(machine.io).c_str());
    }
    if (!json_path.empty()) {
      write_json_file(json_path, nlohmann::json{{"dir", dir}, {"cache", cache}, {"io", io_json(machine.io)}});
    }
  });
  return 0;
}

int tiers_info(MPI_Comm comm, const std::string& json_path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  NodeMap nodes = node_map(comm);
  const Machine machine = load_machine(comm, nodes.node);
  std::vector<int> here(kTierCount, 0), with(kTierCount, 0);
  std::vector<std::string> reasons(kTierCount);
  for (Tier t : all_tiers()) {
    const TierFigures* f = machine.tier(t);
    auto tier = make_memory_tier(t, f != nullptr ? *f : TierFigures{}, nodes.node);
    reasons[static_cast<size_t>(t)] = tier->absent_reason();
    here[static_cast<size_t>(t)] = nodes.local_rank == 0 && tier->available() ? 1 : 0;
  }
  MPI_Allreduce(here.data(), with.data(), kTierCount, MPI_INT, MPI_SUM, comm);
  collectively(comm, [&] {
    if (rank != 0) return;
    std::ostringstream out;
    out << "machine   " << machine.name << " (" << machine.source << ")\n";
    out << "network   latency " << seconds_text(machine.network_latency_s) << ", bandwidth "
        << rate_text(machine.network_bandwidth_Bps) << ", topology " << topology_kind_name(machine.topology.kind)
        << "\n";
    out << "storage   latency " << seconds_text(machine.storage_latency_s) << ", bandwidth "
        << rate_text(machine.storage_bandwidth_Bps) << ", " << machine.distance_to_storage(0)
        << " hop(s) from node 0\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-6s %-10s %12s %12s %12s %-11s %s\n", "tier", "nodes", "latency", "bandwidth",
                  "capacity", "persistency", "notes");
    out << line;
    nlohmann::json tiers = nlohmann::json::array();
    for (Tier t : all_tiers()) {
      const size_t i = static_cast<size_t>(t);
      const TierFigures* f = machine.tier(t);
      std::string notes = reasons[i];
      if (f == nullptr) notes = "not in the machine description" + (notes.empty() ? "" : "; " + notes);
      const std::string count = std::to_string(with[i]) + "/" + std::to_string(nodes.node_count);
      std::snprintf(line, sizeof line, "%-6s %-10s %12s %12s %12s %-11s %s\n", tier_name(t), count.c_str(),
                    f ? seconds_text(f->latency_s).c_str() : "-", f ? rate_text(f->bandwidth_Bps).c_str() : "-",
                    f ? format_size(f->capacity_bytes).c_str() : "-", f ? persistency_name(f->persistency) : "-",
                    notes.c_str());
      out << line;
      nlohmann::json j = {{"name", tier_name(t)},
                          {"nodes_with", with[i]},
                          {"described", f != nullptr},
                          {"available_on_rank0_node", reasons[i].empty()},
                          {"absent_reason", reasons[i]}};
      if (f != nullptr) {
        j["latency_s"] = f->latency_s;
        j["bandwidth_Bps"] = f->bandwidth_Bps;
        j["capacity_bytes"] = f->capacity_bytes;
        j["persistency"] = persistency_name(f->persistency);
      }
      tiers.push_back(j);
    }
    out << "\n" << io_text(machine.io);
    out << "\nThe engine elects each partition's aggregator and tier by cost (docs/tiers.md);\n"
           "STRATA_AGGR_TIER forces a tier, STRATA_TIER_CAPACITY=tier:size,... lowers capacities.\n";
    std::fputs(out.str().c_str(), stdout);
    if (!json_path.empty()) {
      nlohmann::json j = {{"machine",
                           {{"name", machine.name},
                            {"source", machine.source},
                            {"network_latency_s", machine.network_latency_s},
                            {"network_bandwidth_Bps", machine.network_bandwidth_Bps},
                            {"storage_latency_s", machine.storage_latency_s},
                            {"storage_bandwidth_Bps", machine.storage_bandwidth_Bps},
                            {"topology", topology_kind_name(machine.topology.kind)}}},
                          {"nodes", nodes.node_count},
                          {"tiers", tiers},
                          {"io", io_json(machine.io)}};
      write_json_file(json_path, j);
    }
  });
  return 0;
}

}  // namespace strata::cli
