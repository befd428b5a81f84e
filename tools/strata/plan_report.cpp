#include "plan_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "common/units.hpp"

namespace strata::cli {

namespace {

std::string cost_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6f", s);
  return b;
}

// The strategies the cost model weighed (engine/plan/strategy.hpp), cheapest chosen.
void strategy_lines(std::ostringstream& out, const PlacementReport& p) {
  char line[256];
  out << "strategy    predicted time of each alternative ("
      << (p.figures_doubtful   ? "doubtful (measured on a busy machine)"
          : p.figures_measured ? "measured"
                               : "default")
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
}

void partition_lines(std::ostringstream& out, const PlacementReport& p) {
  char line[256];
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
}

// The cost table, one row per candidate rank, one column per tier: C1 + C2 in seconds.
void candidate_lines(std::ostringstream& out, const PlacementReport& p) {
  out << "cost of each candidate, C1 + C2 (s); * elected; (capacity) or (persistency): filtered out\n";
  std::vector<std::string> tiers;
  for (const PlacementCandidate& c : p.candidates) {
    if (std::find(tiers.begin(), tiers.end(), c.tier) == tiers.end()) tiers.push_back(c.tier);
  }
  std::map<std::pair<int, int>, std::map<std::string, const PlacementCandidate*>> rows;
  for (const PlacementCandidate& c : p.candidates) rows[{c.partition, c.rank}][c.tier] = &c;
  char line[256];
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
}

}  // namespace

std::string plan_text(const PlanResult& r) {
  const PlacementReport& p = r.placement;
  const PhaseStats& s = r.stats;
  std::ostringstream out;
  out << "machine     " << p.machine << "\n";
  out << "phase       " << r.kernel << " on " << r.ranks << " rank(s): " << s.strategy << "; " << s.aggregators
      << " partition(s), " << s.rounds << " round(s), " << s.buffers << " x " << format_size(s.buffer_bytes)
      << " buffers" << (p.forced_tier.empty() ? "" : ", tier forced to " + p.forced_tier) << ", " << p.fallbacks
      << " capacity fallback(s)\n\n";
  strategy_lines(out, p);
  out << "\n";
  partition_lines(out, p);
  out << "\n";
  candidate_lines(out, p);
  out << "\nnothing was written (a dry run)\n";
  return out.str();
}

nlohmann::json plan_json(const PlanResult& r) {
  const PlacementReport& p = r.placement;
  const PhaseStats& s = r.stats;
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
  return {{"kernel", r.kernel},
          {"params", r.params},
          {"ranks", r.ranks},
          {"strategies", strategies},
          {"strategy", s.strategy},
          {"predicted_s", s.predicted_s},
          {"figures_measured", p.figures_measured},
          {"figures_doubtful", p.figures_doubtful},
          {"machine", p.machine},
          {"forced_tier", p.forced_tier},
          {"fallbacks", p.fallbacks},
          {"buffer_bytes", s.buffer_bytes},
          {"buffers", s.buffers},
          {"rounds", s.rounds},
          {"partitions", parts},
          {"candidates", cands}};
}

}  // namespace strata::cli
