// The aggregation paper's cost model (section 4.2), pure so it is unit-tested on the paper's
// toy example. For a candidate memory bank A (a rank's node and one of its tiers) in a
// partition, with ω(i,A) the bytes producer i sends:
//   filters   persistent phase: Cap_A ≥ Σ ω(i,A); otherwise Cap_A ≥ N_buff × S_buff
//   C1 = Σ_i ( l · d(i,A) + ω(i,A) / B_{i→A} )           aggregation
//   C2 = l · d(A,T) + ω(A,T) / B_{A→T}                    I/O to the target T
// with l = max(l_network, l_A) and B = min(B_network, B_source, B_A) across nodes. Producers on
// A's own node (A itself included: its bytes move from main memory into the buffer) are one
// bus hop away: l_A + ω / min(B_source, B_A), no network. The source of the data is DRAM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"

namespace strata::engine {

// The data of a partition coming from one node: bytes and how many producing ranks.
struct NodeLoad {
  int node = 0;
  uint64_t bytes = 0;
  uint64_t producers = 0;
};

struct CostInput {
  const Machine* machine = nullptr;
  std::vector<NodeLoad> loads;  // the nodes with data in the partition
  uint64_t buffer_need = 0;     // N_buff × S_buff
  bool persistent = false;      // the aggregated data must persist (job lifetime) on the tier
};

enum class Filter { none = 0, capacity = 1, persistency = 2 };
const char* filter_name(Filter f);

struct Cost {
  double c1 = 0, c2 = 0;
  Filter filtered = Filter::none;  // why the candidate cannot be chosen, if it cannot
  double total() const { return c1 + c2; }
};

// The cost of aggregating the partition on tier `tier` of node `node`.
Cost score(const CostInput& in, int node, Tier tier);

}  // namespace strata::engine
