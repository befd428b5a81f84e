#include "engine/place/cost_model.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace strata::engine {

const char* filter_name(Filter f) {
  switch (f) {
    case Filter::none: return "";
    case Filter::capacity: return "capacity";
    case Filter::persistency: return "persistency";
  }
  return "?";
}

Cost score(const CostInput& in, int node, Tier tier) {
  const Machine& m = *in.machine;
  const TierFigures* a = m.tier(tier);
  const TierFigures* src = m.tier(Tier::dram);
  if (a == nullptr || src == nullptr) throw_usage(std::string("the machine describes no tier ") + tier_name(tier));
  Cost c;
  uint64_t total = 0;
  for (const NodeLoad& l : in.loads) total += l.bytes;
  if (in.persistent && a->persistency == Persistency::none) c.filtered = Filter::persistency;
  const uint64_t need = in.persistent ? total : in.buffer_need;
  if (c.filtered == Filter::none && a->capacity_bytes < need) c.filtered = Filter::capacity;

  const double l_net = std::max(m.network_latency_s, a->latency_s);
  const double b_net = std::min({m.network_bandwidth_Bps, src->bandwidth_Bps, a->bandwidth_Bps});
  const double b_bus = std::min(src->bandwidth_Bps, a->bandwidth_Bps);
  for (const NodeLoad& l : in.loads) {
    const double w = static_cast<double>(l.bytes), n = static_cast<double>(l.producers);
    if (l.node == node) {
      c.c1 += n * a->latency_s + w / b_bus;  // one bus hop from main memory to the tier
    } else {
      c.c1 += n * l_net * m.topology.distance(l.node, node) + w / b_net;
    }
  }
  const double l_io = std::max({m.network_latency_s, a->latency_s, m.storage_latency_s});
  const double b_io = std::min({m.network_bandwidth_Bps, a->bandwidth_Bps, m.storage_bandwidth_Bps});
  c.c2 = l_io * m.distance_to_storage(node) + static_cast<double>(total) / b_io;
  return c;
}

}  // namespace strata::engine
