// strata plan KERNEL: a dry run of the engine for a kernel configuration. The phase is
// declared and planned as `strata run KERNEL --backend strata` would (the shared raw layout),
// aggregators are placed by the cost model, and nothing is written: the partitions, each one's
// elected aggregator and tier, and every candidate's cost (the shape of the aggregation paper's
// Table 2) are printed, or written as JSON.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/hints.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "help_table.hpp"
#include "kernels/kernel.hpp"
#include "strata/strata.hpp"

namespace strata::cli {

namespace {

void add_plan_options(OptionSet& o) {
  o.section("plan options");
  o.add("output", "PATH", "the file the phase would write (its file system sets the partition alignment)",
        "strata-KERNEL.dat in the current directory");
  o.add("hints", "K=V,K=V",
        "engine hints (cb_buffer_size, strata_buffers, strata_aggregators, strata_aggr_tier, "
        "strata_persistency...), over those of the file named by STRATA_HINTS");
  o.add("seed", "S", "seed of random kernel parameters (as strata run --seed)", "1");
  o.add("json", "FILE", "write the plan, the placement and the cost table as JSON (rank 0)");
  o.add_flag("quiet", "do not print the tables");
}

std::string plan_help(const Kernel* k) {
  std::string text =
      "usage: mpirun -np N strata plan KERNEL [kernel options] [options]\n\n"
      "Plans KERNEL's write phase through the engine without writing anything: the partitions,\n"
      "the aggregator and memory tier elected for each by the cost model (docs/tiers.md), and the\n"
      "cost C1 + C2 of every candidate rank on every tier its node has.\n\nkernels:\n";
  text += kernels_help_table(false);
  text += "\n";
  OptionSet o;
  add_plan_options(o);
  if (k != nullptr) k->add_options(o);
  text += o.help_text();
  if (k == nullptr) text += "\n`strata plan KERNEL --help` adds the kernel's own options.\n";
  text +=
      "\nexample:\n  STRATA_RANKS_PER_NODE=2 mpirun -np 8 strata plan array1d --dist random --size 1M --json "
      "plan.json\n";
  return text;
}

std::string cost_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6f", s);
  return b;
}

}  // namespace

int plan_command(const std::vector<std::string>& args, const Environment&) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Kernel* kernel = nullptr;
  OptionSet options;
  bool help = args.empty() || args[0] == "--help" || args[0] == "-h";
  collectively(comm, [&] {
    if (help) return;
    if (args[0].rfind("-", 0) == 0) throw_usage("strata plan needs a KERNEL first (see strata plan --help)");
    kernel = &find_kernel(args[0]);
    add_plan_options(options);
    kernel->add_options(options);
    auto extra = options.parse({args.begin() + 1, args.end()});
    if (!extra.empty())
      throw_usage("unexpected argument \"" + extra[0] + "\" (see strata plan " + args[0] + " --help)");
    help = options.help_requested();
  });
  if (help) {
    if (rank == 0) std::fputs(plan_help(kernel).c_str(), stdout);
    return args.empty() ? 2 : 0;
  }
  KernelSetup setup;
  Hints hints;
  collectively(comm, [&] {
    setup = kernel->build(options, rank, size);
    hints = hints_from_environment_and(options.get("hints"));
  });
  const std::string path = options.given("output") ? options.get("output") : "strata-" + kernel->name() + ".dat";
  hints.emplace_back("strata_dry_run", "true");
  hints.emplace_back("strata_cost_table", "true");

  const Decomposition& d = setup.decomposition;
  std::vector<std::byte> buffer(d.local_bytes());  // declared, never read: nothing moves in a dry run
  Engine engine(comm);
  Phase phase(engine, path, PhaseMode::write, hints);
  std::vector<int> ids;
  for (int v = 0; v < static_cast<int>(d.variables.size()); ++v) {
    const Variable& var = d.variables[static_cast<size_t>(v)];
    ids.push_back(phase.define_variable(var.name, elem_size(var.type), var.shape, d.variable_offset(v)));
  }
  uint64_t mem = 0;
  for (const Block& b : d.blocks) {
    phase.add_subarray(ids[static_cast<size_t>(b.var)], b.start, b.count, buffer.data() + mem);
    mem += b.elements() * elem_size(d.variables[static_cast<size_t>(b.var)].type);
  }
  phase.plan();
  const PlacementReport& p = phase.placement();
  PhaseStats s = phase.close();

  collectively(comm, [&] {
    if (rank != 0) return;
    if (!options.flag("quiet")) {
      std::ostringstream out;
      out << "machine     " << p.machine << "\n";
      out << "phase       " << kernel->name() << " on " << size << " rank(s): " << s.strategy << "; " << s.aggregators
          << " partition(s), " << s.rounds << " round(s), " << s.buffers << " x " << format_size(s.buffer_bytes)
          << " buffers" << (p.forced_tier.empty() ? "" : ", tier forced to " + p.forced_tier) << ", " << p.fallbacks
          << " capacity fallback(s)\n\n";
      char line[256];
      // The strategies the cost model weighed (engine/plan/strategy.hpp), cheapest chosen.
      out << "strategy    predicted time of each alternative (" << (p.figures_measured ? "measured" : "default")
          << " machine figures; strata info --probe measures them); * chosen\n";
      std::snprintf(line, sizeof line, "  %-34s %7s %12s %12s %12s %12s\n", "alternative", "rounds", "total (s)",
                    "puts (s)", "file I/O (s)", "sync (s)");
      out << line;
      for (const StrategyAlternative& a : p.strategies) {
        std::snprintf(line, sizeof line, "  %-34s %7llu %12s %12s %12s %12s%s\n", a.name.c_str(),
                      static_cast<unsigned long long>(a.rounds), cost_text(a.predicted_s).c_str(),
                      cost_text(a.move_s).c_str(), cost_text(a.io_s).c_str(), cost_text(a.sync_s).c_str(),
                      a.chosen ? " *" : "");
        out << line;
      }
      out << "\n";
      std::snprintf(line, sizeof line, "%-9s %-27s %10s %5s %-6s %12s %s\n", "partition", "file bytes", "aggregator",
                    "node", "tier", "cost (s)", "");
      out << line;
      for (size_t i = 0; i < p.partitions.size(); ++i) {
        const PlacedPartition& q = p.partitions[i];
        const std::string range = "[" + std::to_string(q.begin) + ", " + std::to_string(q.end) + ")";
        std::snprintf(line, sizeof line, "%-9zu %-27s %10d %5d %-6s %12s %s\n", i, range.c_str(), q.aggregator, q.node,
                      q.tier.c_str(), cost_text(q.cost_s).c_str(),
                      q.fallback ? "fallback: the cheapest tier lacked capacity" : "");
        out << line;
      }
      // The cost table, one row per candidate rank, one column per tier: C1 + C2 in seconds.
      out << "\ncost of each candidate, C1 + C2 (s); * elected; (capacity) or (persistency): filtered out\n";
      std::vector<std::string> tiers;
      for (const PlacementCandidate& c : p.candidates) {
        if (std::find(tiers.begin(), tiers.end(), c.tier) == tiers.end()) tiers.push_back(c.tier);
      }
      std::map<std::pair<int, int>, std::map<std::string, const PlacementCandidate*>> rows;
      for (const PlacementCandidate& c : p.candidates) rows[{c.partition, c.rank}][c.tier] = &c;
      std::snprintf(line, sizeof line, "%-9s %6s %5s", "partition", "rank", "node");
      out << line;
      for (const auto& t : tiers) {
        std::snprintf(line, sizeof line, " %22s", t.c_str());
        out << line;
      }
      out << "\n";
      for (const auto& [key, by_tier] : rows) {
        std::snprintf(line, sizeof line, "%-9d %6d %5d", key.first, key.second, by_tier.begin()->second->node);
        out << line;
        for (const auto& t : tiers) {
          auto it = by_tier.find(t);
          std::string cell = "-";
          if (it != by_tier.end()) {
            const PlacementCandidate& c = *it->second;
            const PlacedPartition& won = p.partitions[static_cast<size_t>(c.partition)];
            cell = cost_text(c.c1_s + c.c2_s);
            if (!c.filtered.empty()) cell += " (" + c.filtered + ")";
            if (won.aggregator == c.rank && won.tier == c.tier) cell += " *";
          }
          std::snprintf(line, sizeof line, " %22s", cell.c_str());
          out << line;
        }
        out << "\n";
      }
      out << "\nnothing was written (a dry run)\n";
      std::fputs(out.str().c_str(), stdout);
    }
    if (options.given("json")) {
      nlohmann::json parts = nlohmann::json::array(), cands = nlohmann::json::array();
      for (const PlacedPartition& q : p.partitions) {
        parts.push_back({{"begin", q.begin},
                         {"end", q.end},
                         {"aggregator", q.aggregator},
                         {"node", q.node},
                         {"tier", q.tier},
                         {"cost_s", q.cost_s},
                         {"fallback", q.fallback}});
      }
      for (const PlacementCandidate& c : p.candidates) {
        cands.push_back({{"partition", c.partition},
                         {"rank", c.rank},
                         {"node", c.node},
                         {"tier", c.tier},
                         {"c1_s", c.c1_s},
                         {"c2_s", c.c2_s},
                         {"filtered", c.filtered}});
      }
      nlohmann::json strategies = nlohmann::json::array();
      for (const StrategyAlternative& a : p.strategies) {
        strategies.push_back({{"name", a.name},
                              {"direct", a.direct},
                              {"hybrid", a.hybrid},
                              {"chosen", a.chosen},
                              {"aggregators", a.aggregators},
                              {"buffers", a.buffers},
                              {"buffer_bytes", a.buffer_bytes},
                              {"rounds", a.rounds},
                              {"predicted_s", a.predicted_s},
                              {"move_s", a.move_s},
                              {"io_s", a.io_s},
                              {"sync_s", a.sync_s},
                              {"plan_s", a.plan_s}});
      }
      nlohmann::json j = {{"kernel", kernel->name()},
                          {"params", setup.params},
                          {"ranks", size},
                          {"strategies", strategies},
                          {"strategy", s.strategy},
                          {"predicted_s", s.predicted_s},
                          {"figures_measured", p.figures_measured},
                          {"machine", p.machine},
                          {"forced_tier", p.forced_tier},
                          {"fallbacks", p.fallbacks},
                          {"buffer_bytes", s.buffer_bytes},
                          {"buffers", s.buffers},
                          {"rounds", s.rounds},
                          {"partitions", parts},
                          {"candidates", cands}};
      std::ofstream f(options.get("json"));
      f << j.dump(2) << "\n";
      if (!f) throw_usage("cannot write the JSON file \"" + options.get("json") + "\"");
    }
  });
  return 0;
}

}  // namespace strata::cli
