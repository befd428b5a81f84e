// Aggregator election (the aggregation paper's section 4.2.2): for every partition, every rank
// scores each memory tier its node hosts with the cost model, and an MPI_Allreduce with
// MPI_MINLOC elects the cheapest (rank, tier); equal costs go to the engine's default
// aggregator of the partition (the spread order of plan/partition, so ties spread over nodes),
// then the faster tier. A rank aggregates one partition at most: when a rank wins several, it keeps the
// first and the others are elected again among the ranks still free (one more allreduce).
// STRATA_AGGR_TIER (or a forced tier) restricts every candidate to that tier, so placement
// follows the topology and the data alone. A tier whose capacity is short is filtered out, so
// the next tier wins: counted as a fallback.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <vector>

#include "arch/machine.hpp"
#include "arch/memory_tier.hpp"
#include "engine/place/cost_model.hpp"
#include "engine/plan/partition.hpp"

namespace strata::engine {

struct PlacementInput {
  const Plan* plan = nullptr;
  const std::vector<int>* node_of_rank = nullptr;
  const Machine* machine = nullptr;
  const std::vector<std::unique_ptr<MemoryTier>>* local_tiers = nullptr;  // this node's
  std::vector<uint64_t> my_bytes;  // per partition: the bytes this rank sends to it
  bool persistent = false;
  std::optional<Tier> forced;
  bool want_table = false;  // gather every candidate's costs on rank 0
};

struct CandidateRow {
  int partition = 0, rank = 0, node = 0;
  Tier tier = Tier::dram;
  double c1 = 0, c2 = 0;
  Filter filtered = Filter::none;
};

struct Elected {
  int aggregator = -1;
  Tier tier = Tier::dram;
  double cost = 0;
  bool fallback = false;  // the aggregator's cheapest tier lacked capacity: the next one was taken
};

struct Placement {
  std::vector<Elected> partitions;
  std::vector<CandidateRow> table;  // rank 0, with want_table: every candidate of every partition
  uint64_t fallbacks = 0;
  int election_rounds = 0;
};

// Collective over `comm`. Throws a usage Error on every rank when a partition has no candidate
// (no tier anywhere holds N_buff × S_buff, or the forced tier exists nowhere).
Placement place_aggregators(MPI_Comm comm, const PlacementInput& in);

// STRATA_AGGR_TIER, parsed (usage Error naming the variable when unknown).
std::optional<Tier> forced_tier_from_environment();

}  // namespace strata::engine
