// Plan once, write many: the plans an Engine keeps so that a phase declaring what an earlier
// one declared reuses its plan whole (include/strata/strata.hpp, docs/engine.md).
//
// A plan's key is, per rank, a hash of the mode, the parsed hints, the variables and every
// declared run's file offset, length, element size and memory stride (never a memory address),
// a read's path, and on rank 0 the facts about the file the plan depends on (whether the write
// commits, the file system's block size and striping, a read's index). Ranks combine their
// keys, each mixed with its rank, into one sum (one MPI_Allreduce, or the plan's allgather):
// a plan is reused only when every rank's key equals the one it had when that plan was made.
// Every rank keeps the same plans in the same order (insertions and evictions happen at the
// same collective steps), so every rank finds the same plan or none.
//
// A write's key leaves out the path (the files are named afresh from the plan), and each rank's
// runs are hashed from its own first byte (the relative key), that byte apart (the base): a
// write of the same layout into another file, or moved as a whole by the same number of bytes
// on every rank (the next record of every variable, the next time step of a PnetCDF or HDF5
// file), reuses the plan moved by that shift. The same reduction agrees on it: each rank votes
// for the kept plan its own relative key names and its shift from that plan's base, and the
// plan is taken only when every rank with runs voted for it with the same shift and the sum of
// the relative keys is that plan's. On a striped file system (or with hint striping_unit) the
// shift must keep the partitions aligned.
//
// Bounds: at most kMaxPlans plans, and the plans kept hold at most kMaxRuns declared runs
// summed over every rank (a phase larger than that alone is never kept); the least recently
// used plan goes first. Each rank keeps only its own part of a plan.
#pragma once

#include <mpi.h>

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
  static constexpr uint64_t kNoBase = UINT64_MAX;
  uint64_t key = 0;             // agreed: the same on every rank
  uint64_t relative_key = 0;    // agreed: every rank's relative key combined
  uint64_t my_relative = 0;     // this rank's relative key
  uint64_t my_base = kNoBase;   // this rank's first declared byte (kNoBase: it declared none)
  bool aligned_shifts = false;  // moved only by multiples of plan.align (striped, or striping_unit)
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
  StrategyChoice strategy_other;  // a write's, priced for the other file (recycled or new: repriced())
  PlacementReport placement;
  std::vector<Tier> tier_of_partition;
  std::vector<SubFile> files;  // closed (fd -1)
  bool subfiled = false;
  uint64_t declared_bytes = 0;
  bool commit = false;
  bool defer_open = false;        // files opened without an agreement (a committed direct write)
  bool copy = false;              // runs copied into a shared window
  bool owners_local = false;      // node-local partition files written by their owners (PhaseImpl::owners_local_)
  bool node_local_tiled = false;  // node-local files rewritten in place (PhaseImpl::node_local_tiled_)
  bool sole_owner = false;        // PhaseImpl::sole_owner_
};

class PlanCache {
 public:
  static constexpr size_t kMaxPlans = 8;
  static constexpr uint64_t kMaxRuns = uint64_t{1} << 25;

  // The plan of `key`, now the most recently used; null when none is kept.
  std::shared_ptr<const CachedPlan> find(uint64_t key);
  // This rank's vote: the most recently used plan in which this rank's relative key was
  // `my_relative` and which may be moved to this rank's first byte `base` (shift_allowed);
  // null when none. Nothing moves in the cache.
  const CachedPlan* candidate(uint64_t my_relative, uint64_t base) const;
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

// The vote of one rank in the reduction that looks for a kept plan, reduced by key_vote_op():
// sums of the first three words, maxima of the rest (a word and its complement: their maxima
// give the largest and smallest vote, ranks without one voting 0 in both).
struct KeyVote {
  uint64_t failed = 0;         // sum: ranks whose declarations failed
  uint64_t exact = 0;          // sum: rank_key_term of each rank's key
  uint64_t relative = 0;       // sum: rank_key_term of each rank's relative key
  uint64_t candidate = 0;      // max: the key of the plan voted for
  uint64_t candidate_not = 0;  // max: its complement (a rank with runs but no plan: all ones)
  uint64_t shift = 0;          // max: the shift from that plan's base, biased by 2^63
  uint64_t shift_not = 0;      // max: its complement
  uint64_t recycled = 0;       // max: rank 0's partial file is the output's previous file (priced so)

  // This rank's vote for `c` (null: none) with its first declared byte `base` (kNoBase: no runs).
  void vote(const CachedPlan* c, uint64_t base);
  // After the reduction: the key of the plan every voting rank named and the shift they agree
  // on, when they all named the same plan with the same shift (the caller checks that plan's
  // agreed relative key against the sum).
  bool agreed(uint64_t& key, int64_t& shift) const;
};
static_assert(sizeof(KeyVote) == 8 * sizeof(uint64_t));
void reduce_key_votes(void* in, void* inout, int* count, MPI_Datatype* type);

// Whether plan `c` may be reused moved by `shift` bytes (the same answer on every rank).
bool shift_allowed(const CachedPlan& c, int64_t shift);

// Hashing a rank's declarations (XXH3-64, streamed): the pieces without their memory.
class KeyHasher {
 public:
  KeyHasher();
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;
  void add(const void* data, size_t bytes);
  void add(uint64_t v) { add(&v, sizeof v); }
  // The pieces' fields, their file offsets counted from `base`; then their count.
  void add_pieces(const std::vector<Piece>& pieces, uint64_t base = 0);
  // The fields of n pieces (no count).
  void add_piece_fields(const Piece* pieces, size_t n, uint64_t base);
  uint64_t digest() const;

 private:
  void* state_;
};

}  // namespace strata::engine
