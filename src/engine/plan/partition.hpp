// The plan of a phase, computed identically on every rank from a few numbers per rank: the
// file domain, stripe-aligned partitions (one aggregator each, spread over nodes), and rounds
// of S_buff bytes of file span. Pure: no MPI, so its invariants are unit-tested.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::engine {

struct PlanInput {
  uint64_t lo = 0, hi = 0;          // the domain: first and one-past-last declared byte over all ranks
  uint64_t total_bytes = 0;         // declared bytes over all ranks
  std::vector<int> node_of_rank;    // every rank's node
  uint64_t align = 4096;            // partition alignment (stripe size or file-system block size)
  uint64_t buffer_bytes = 4 << 20;  // S_buff, a multiple of align
  int buffers = 2;                  // N_buff
  int aggregators = 0;              // wanted; 0 = one per node
};

struct Slot {
  int partition = -1;
  uint64_t round = 0;
  uint64_t offset = 0;  // within the round's window
};

struct Plan {
  uint64_t align = 0, buffer_bytes = 0;
  int buffers = 0;
  uint64_t lo = 0, hi = 0;
  std::vector<uint64_t> start;   // per partition: aligned start of its first round window
  std::vector<uint64_t> end;     // per partition: one past its last byte
  std::vector<int> aggregator;   // per partition: the aggregating rank
  std::vector<uint64_t> rounds;  // per partition
  uint64_t global_rounds = 0;

  int partitions() const { return static_cast<int>(start.size()); }
  // The partition holding byte `offset` (lo <= offset < hi).
  int partition_of(uint64_t offset) const;
  Slot locate(uint64_t offset) const;
  // Byte displacement in the aggregator's window of a slot.
  uint64_t window_displacement(const Slot& s) const {
    return (s.round % static_cast<uint64_t>(buffers)) * buffer_bytes + s.offset;
  }
  // The partition `rank` aggregates, or -1.
  int partition_of_rank(int rank) const;
};

Plan make_plan(const PlanInput& in);

// Ranks interleaved across nodes: each node's first rank (nodes in order), then each node's
// second rank, ... Partition p's default aggregator is order[p]: aggregators spread over nodes.
std::vector<int> spread_order(const std::vector<int>& node_of_rank);

}  // namespace strata::engine
