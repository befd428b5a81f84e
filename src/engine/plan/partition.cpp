#include "engine/plan/partition.hpp"

#include <algorithm>
#include <map>

namespace strata::engine {

int Plan::partition_of(uint64_t offset) const {
  auto it = std::upper_bound(start.begin(), start.end(), offset);
  return static_cast<int>(it - start.begin()) - 1;
}

Slot Plan::locate(uint64_t offset) const {
  Slot s;
  s.partition = partition_of(offset);
  const uint64_t rel = offset - start[static_cast<size_t>(s.partition)];
  s.round = rel / buffer_bytes;
  s.offset = rel % buffer_bytes;
  return s;
}

int Plan::partition_of_rank(int rank) const {
  for (size_t p = 0; p < aggregator.size(); ++p) {
    if (aggregator[p] == rank) return static_cast<int>(p);
  }
  return -1;
}

std::vector<int> spread_order(const std::vector<int>& node_of_rank) {
  std::map<int, std::vector<int>> by_node;
  for (size_t r = 0; r < node_of_rank.size(); ++r) by_node[node_of_rank[r]].push_back(static_cast<int>(r));
  std::vector<int> order;
  for (size_t depth = 0; order.size() < node_of_rank.size(); ++depth) {
    for (const auto& [node, members] : by_node) {
      if (depth < members.size()) order.push_back(members[depth]);
    }
  }
  return order;
}

Plan make_plan(const PlanInput& in) {
  Plan plan;
  plan.align = in.align;
  plan.buffer_bytes = in.buffer_bytes;
  plan.buffers = in.buffers;
  plan.lo = in.lo;
  plan.hi = in.hi;
  if (in.total_bytes == 0 || in.hi <= in.lo) return plan;
  const int ranks = static_cast<int>(in.node_of_rank.size());

  const std::vector<int> order = spread_order(in.node_of_rank);
  std::map<int, int> by_node;
  for (int n : in.node_of_rank) by_node[n] = 1;

  const uint64_t a0 = in.lo / in.align * in.align;
  const uint64_t units = (in.hi - a0 + in.align - 1) / in.align;
  uint64_t want = in.aggregators > 0 ? static_cast<uint64_t>(in.aggregators) : by_node.size();
  want = std::min<uint64_t>({want, units, static_cast<uint64_t>(ranks)});
  const uint64_t parts = std::max<uint64_t>(want, 1);
  for (uint64_t p = 0; p < parts; ++p) {
    const uint64_t u0 = p * units / parts, u1 = (p + 1) * units / parts;
    const uint64_t s = a0 + u0 * in.align;
    const uint64_t e = std::min(in.hi, a0 + u1 * in.align);
    plan.start.push_back(s);
    plan.end.push_back(e);
    plan.aggregator.push_back(order[p]);
    const uint64_t r = (e - s + in.buffer_bytes - 1) / in.buffer_bytes;
    plan.rounds.push_back(r);
    plan.global_rounds = std::max(plan.global_rounds, r);
  }
  return plan;
}

}  // namespace strata::engine
