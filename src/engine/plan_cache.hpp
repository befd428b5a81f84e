// Plan once, write many: the plans an Engine keeps so that a phase declaring what an earlier
// one declared reuses its plan whole (include/strata/strata.hpp, docs/engine.md).
//
// A plan's key is, per rank, a hash of the path, the mode, the parsed hints, the variables and
// every declared run's file offset, length, element size and memory stride (never a memory
// address), and on rank 0 the facts about the file the plan depends on (whether the write
// commits, the file system's block size and striping, a read's index). Ranks combine their
// keys, each mixed with its rank, into one sum (one MPI_Allreduce, or the plan's allgather):
// a plan is reused only when every rank's key equals the one it had when that plan was made.
// Every rank keeps the same plans in the same order (insertions and evictions happen at the
// same collective steps), so every rank finds the same plan or none.
//
// Bounds: at most kMaxPlans plans, and the plans kept hold at most kMaxRuns declared runs
// summed over every rank (a phase larger than that alone is never kept); the least recently
// used plan goes first. Each rank keeps only its own part of a plan.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "arch/memory_tier.hpp"
#include "engine/move/file_set.hpp"
#include "engine/move/packing.hpp"
#include "engine/phase_options.hpp"
#include "engine/plan/extents.hpp"
#include "engine/plan/partition.hpp"
#include "engine/plan/spans.hpp"
#include "engine/plan/strategy.hpp"
#include "strata/strata.hpp"

namespace strata::engine {

// This rank's part of a plan, as the phase that made it left it after plan().
struct CachedPlan {
  uint64_t key = 0;             // agreed: the same on every rank
  uint64_t runs = 0;            // declared runs summed over every rank (the cache's bound)
  Selection sel;                // byte counts only: the pieces are each phase's own declarations
  std::vector<uint32_t> order;  // normalise()'s order of the declared pieces (empty: declared sorted)
  Selection agg;                // byte counts only
  std::vector<StreamExtent> direct;
  Plan plan;
  int my_partition = -1;
  std::shared_ptr<const std::vector<RoundIo>> round_io;
  std::shared_ptr<const PackedTransfers> transfers;
  StrategyChoice strategy;
  PlacementReport placement;
  std::vector<Tier> tier_of_partition;
  std::vector<SubFile> files;  // closed (fd -1)
  bool subfiled = false;
  uint64_t declared_bytes = 0;
  bool commit = false;
  bool defer_open = false;  // files opened without an agreement (a committed direct write)
  bool copy = false;        // runs copied into a shared window
};

class PlanCache {
 public:
  static constexpr size_t kMaxPlans = 8;
  static constexpr uint64_t kMaxRuns = uint64_t{1} << 25;

  // The plan of `key`, now the most recently used; null when none is kept.
  std::shared_ptr<const CachedPlan> find(uint64_t key);
  // Keeps `plan` (replacing one of the same key), evicting the least recently used beyond the
  // bounds. Called at the same step on every rank with the same key and runs.
  void keep(std::shared_ptr<const CachedPlan> plan);
  bool empty() const { return plans_.empty(); }
  size_t size() const { return plans_.size(); }
  void clear() { plans_.clear(); }

 private:
  std::vector<std::shared_ptr<const CachedPlan>> plans_;  // most recently used first
};

// The hash a rank adds to the phase's agreed key: its own key mixed with its rank, so that two
// ranks swapping their declarations change the sum.
uint64_t rank_key_term(uint64_t key, int rank);

// Hashing a rank's declarations (XXH3-64, streamed): the pieces without their memory.
class KeyHasher {
 public:
  KeyHasher();
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;
  void add(const void* data, size_t bytes);
  void add(uint64_t v) { add(&v, sizeof v); }
  void add_pieces(const std::vector<Piece>& pieces);
  uint64_t digest() const;

 private:
  void* state_;
};

}  // namespace strata::engine
