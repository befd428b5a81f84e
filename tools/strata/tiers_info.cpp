// strata info --tiers: the memory tiers the engine can aggregate on, with the figures the cost
// model uses (from STRATA_MACHINE or the cached probe) and, for a tier a node lacks, why.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arch/machine.hpp"
#include "arch/memory_tier.hpp"
#include "arch/node_map.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

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

std::string rate_text(double bps) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g GB/s", bps / 1e9);
  return b;
}

}  // namespace

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
        << rate_text(machine.network_bandwidth_Bps) << ", topology " << topology_kind_name(machine.topology.kind) << "\n";
    out << "storage   latency " << seconds_text(machine.storage_latency_s) << ", bandwidth "
        << rate_text(machine.storage_bandwidth_Bps) << ", " << machine.distance_to_storage(0) << " hop(s) from node 0\n\n";
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
      nlohmann::json j = {{"name", tier_name(t)},          {"nodes_with", with[i]},
                          {"described", f != nullptr},      {"available_on_rank0_node", reasons[i].empty()},
                          {"absent_reason", reasons[i]}};
      if (f != nullptr) {
        j["latency_s"] = f->latency_s;
        j["bandwidth_Bps"] = f->bandwidth_Bps;
        j["capacity_bytes"] = f->capacity_bytes;
        j["persistency"] = persistency_name(f->persistency);
      }
      tiers.push_back(j);
    }
    out << "\nThe engine elects each partition's aggregator and tier by cost (docs/tiers.md);\n"
           "STRATA_AGGR_TIER forces a tier, STRATA_TIER_CAPACITY=tier:size,... lowers capacities.\n";
    std::fputs(out.str().c_str(), stdout);
    if (!json_path.empty()) {
      nlohmann::json j = {{"machine", {{"name", machine.name},
                                       {"source", machine.source},
                                       {"network_latency_s", machine.network_latency_s},
                                       {"network_bandwidth_Bps", machine.network_bandwidth_Bps},
                                       {"storage_latency_s", machine.storage_latency_s},
                                       {"storage_bandwidth_Bps", machine.storage_bandwidth_Bps},
                                       {"topology", topology_kind_name(machine.topology.kind)}}},
                          {"nodes", nodes.node_count},
                          {"tiers", tiers}};
      std::ofstream f(json_path);
      f << j.dump(2) << "\n";
      if (!f) throw_usage("cannot write the JSON file \"" + json_path + "\"");
    }
  });
  return 0;
}

}  // namespace strata::cli
