// strata cost: the aggregator-placement cost model (engine/place/cost_model.hpp) evaluated for
// given per-node loads on a machine description, every node and every tier the machine lists:
// the shape of the aggregation paper's Table 2, and of its Table 10 when capacities are lowered.
// Nothing is allocated or written and no tier needs to exist on this host: the answer is the
// model's, for the machine file. Every rank computes it; rank 0 prints it.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arch/machine.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "engine/place/cost_model.hpp"
#include "json_file.hpp"

namespace strata::cli {

namespace {

const char* kCostUsage =
    "usage: strata cost --loads B,B,... [--machine FILE] [options]\n\n"
    "Evaluates the cost model that elects aggregators and their memory tier (docs/tiers.md) for\n"
    "one partition whose data comes from the listed nodes: node i produces the i-th load (bytes,\n"
    "K/M/G = 1024^n). For every node and every tier of the machine it prints C1 (aggregation) +\n"
    "C2 (I/O to the storage target), or why the tier is filtered out, and the candidate the model\n"
    "elects. The machine is --machine FILE, else STRATA_MACHINE, else this host's probed machine;\n"
    "STRATA_TIER_CAPACITY and --capacity lower capacities (the aggregation paper's Table 10).\n";

void add_cost_options(OptionSet& o) {
  o.section("cost options");
  o.add("loads", "B,B,...", "bytes produced on node 0, 1, ... (required)");
  o.add("producers", "N", "producing ranks per node (each pays the latency once)", "1");
  o.add("machine", "FILE", "the machine description (docs/tiers.md)", "STRATA_MACHINE, else the probed host");
  o.add("capacity", "TIER:B,...", "lower tier capacities after loading, as STRATA_TIER_CAPACITY");
  o.add("buffers", "N", "aggregation buffers per aggregator (N_buff)", "2");
  o.add("buffer-size", "B", "bytes per buffer (S_buff)", "16M");
  o.add_flag("persistent", "the aggregated data must outlive the phase (job persistency, room for all of it)");
  o.add("json", "FILE", "also write the costs as JSON (rank 0)");
  o.add_flag("quiet", "do not print the table");
}

std::vector<uint64_t> parse_loads(const std::string& text) {
  std::vector<uint64_t> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) out.push_back(parse_size(item, "--loads"));
  if (out.empty()) throw_usage("--loads needs at least one size (bytes per node, comma-separated)");
  return out;
}

Machine machine_from(const OptionSet& o, MPI_Comm comm) {
  Machine m;
  if (o.given("machine")) {
    std::ifstream f(o.get("machine"));
    if (!f) throw_usage("cannot read the machine file \"" + o.get("machine") + "\" (--machine)");
    std::stringstream text;
    text << f.rdbuf();
    m = parse_machine(text.str(), o.get("machine"));
    if (const char* caps = std::getenv("STRATA_TIER_CAPACITY"); caps != nullptr && *caps != '\0') {
      apply_capacity_overrides(m, caps);
    }
  } else {
    m = load_machine(comm, 0);
  }
  if (o.given("capacity")) apply_capacity_overrides(m, o.get("capacity"));
  return m;
}

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s);
  return b;
}

}  // namespace

int cost_command(const std::vector<std::string>& args, const Environment&) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  OptionSet o;
  add_cost_options(o);
  collectively(comm, [&] {
    auto positional = o.parse(args);
    if (!positional.empty()) throw_usage("unexpected argument \"" + positional[0] + "\" (see strata cost --help)");
    if (!o.help_requested() && o.given("json")) check_record_path(o.get("json"), "--json");
  });
  if (o.help_requested()) {
    if (rank == 0) {
      std::printf(
          "%s\noptions:\n%s\nexample (the aggregation paper's toy example, Tables 1 and 2):\n"
          "  strata cost --machine campaigns/machines/tapioca-toy.toml --loads 10000000,50000000,20000000,"
          "5000000\n",
          kCostUsage, o.help_text().c_str());
    }
    return 0;
  }
  Machine m;
  engine::CostInput in;
  std::vector<uint64_t> loads;
  collectively(comm, [&] {
    if (!o.given("loads")) throw_usage("strata cost needs --loads B,B,... (bytes produced on each node)");
    loads = parse_loads(o.get("loads"));
    const uint64_t producers = parse_count(o.get("producers"), "--producers");
    const uint64_t buffers = parse_count(o.get("buffers"), "--buffers");
    const uint64_t size = parse_size(o.get("buffer-size"), "--buffer-size");
    if (producers == 0 || buffers == 0 || size == 0)
      throw_usage("--producers, --buffers and --buffer-size must be > 0");
    m = machine_from(o, comm);
    m.check_covers(static_cast<int>(loads.size()));
    for (size_t i = 0; i < loads.size(); ++i) in.loads.push_back({static_cast<int>(i), loads[i], producers});
    in.buffer_need = buffers * size;
    in.persistent = o.flag("persistent");
  });
  in.machine = &m;

  nlohmann::json doc;
  doc["machine"] = m.name;
  doc["machine_source"] = m.source;
  doc["loads_bytes"] = loads;
  doc["buffer_need_bytes"] = in.buffer_need;
  doc["persistent"] = in.persistent;
  nlohmann::json candidates = nlohmann::json::array();
  nlohmann::json elected;
  double best = 0;
  std::ostringstream table;
  table << "machine " << m.name << " (" << m.source << "); buffers " << format_size(in.buffer_need)
        << (in.persistent ? ", persistent" : "") << "\n\nnode        bytes";
  for (const auto& [tier, figures] : m.tiers)
    table << "  " << std::string(12 - std::string(tier_name(tier)).size(), ' ') << tier_name(tier);
  table << "\n";
  collectively(comm, [&] {
    for (size_t node = 0; node < loads.size(); ++node) {
      char head[64];
      std::snprintf(head, sizeof head, "%-4zu %12llu", node, static_cast<unsigned long long>(loads[node]));
      table << head;
      for (const auto& [tier, figures] : m.tiers) {
        const engine::Cost c = engine::score(in, static_cast<int>(node), tier);
        nlohmann::json row = {{"node", node}, {"tier", tier_name(tier)}, {"c1_s", c.c1},
                              {"c2_s", c.c2}, {"total_s", c.total()},    {"filtered", engine::filter_name(c.filtered)}};
        candidates.push_back(row);
        const std::string cell = c.filtered == engine::Filter::none
                                     ? seconds(c.total())
                                     : std::string("(") + engine::filter_name(c.filtered) + ")";
        table << "  " << std::string(12 - std::min<size_t>(12, cell.size()), ' ') << cell;
        // Ties keep the first candidate: the lower node, then the faster-listed tier.
        if (c.filtered == engine::Filter::none && (elected.is_null() || c.total() < best)) {
          best = c.total();
          elected = row;
        }
      }
      table << "\n";
    }
    if (elected.is_null()) {
      throw_usage("no tier of the machine can hold " + format_size(in.buffer_need) +
                  (in.persistent ? " with job persistency" : "") +
                  " on any node (raise capacities or lower --buffers)");
    }
  });
  doc["candidates"] = candidates;
  doc["elected"] = elected;
  table << "\nelected: node " << elected["node"].get<size_t>() << ", " << elected["tier"].get<std::string>() << ", "
        << seconds(best) << " s (C1 + C2)\n";
  collectively(comm, [&] {
    if (rank != 0) return;
    if (o.given("json")) {
      write_json_file(o.get("json"), doc);
    }
    if (!o.flag("quiet")) std::fputs(table.str().c_str(), stdout);
  });
  return 0;
}

}  // namespace strata::cli
