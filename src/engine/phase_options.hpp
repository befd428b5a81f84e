// A phase's options, typed: built and validated from its hints in one place. Every `strata_*`
// key must be one the engine knows (an unknown one, or a bad value such as strata_fsync=maybe,
// is a usage Error that names the valid keys or values); the MPI-IO hints the engine reads
// (cb_buffer_size, cb_nodes, striping_unit, striping_factor) are checked too, and other MPI-IO
// hints (romio_*, cb_config_list...) are accepted and left alone, since a program may pass one
// hint list to MPI-IO and to the engine.
//
// A field that is unset (std::nullopt, or `automatic`) is the plan's to choose: the strategy
// model (engine/plan/strategy.hpp) picks it by cost; a hint given explicitly always wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/place/tier_hints.hpp"
#include "strata/hints.hpp"

namespace strata::engine {

inline constexpr uint64_t kMinBuffer = 4096;
inline constexpr uint64_t kMaxBuffer = uint64_t{1} << 30;

struct PhaseOptions {
  // strata_commit: how a write becomes the output (engine/commit.hpp). sync: partial files,
  // synced, then committed; nosync: the same without the data fsync (the default; strata_fsync
  // makes it sync, as durability is what that hint asks for); in_place: straight into the
  // output's files, for files other tools also write.
  enum class Commit { sync, nosync, in_place };
  // strata_strategy: direct = every byte written or read by its owner (no aggregation);
  // aggregate = the aggregators' pipelined rounds (large aligned runs still go direct, per
  // strata_direct_threshold); automatic = whichever the cost model predicts faster.
  enum class Strategy { automatic, direct, aggregate };
  // strata_pack (puts of many small runs as one put with a target datatype) and strata_spans
  // (a round written as whole spans, holes filled or read-modified-written): by cost, or forced.
  enum class Choice { automatic, on, off };

  std::optional<uint64_t> buffer_bytes;         // cb_buffer_size: S_buff
  std::optional<int> buffers;                   // strata_buffers: N_buff
  std::optional<int> aggregators;               // cb_nodes / strata_aggregators
  std::optional<uint64_t> align;                // striping_unit (else the file system's block size)
  std::optional<uint64_t> direct_threshold;     // strata_direct_threshold (0: never direct)
  int stripe_count = 0;                         // striping_factor: aggregators at least this many
  uint64_t subfile_group = 0;                   // strata_subfiling: partitions per subfile; 0: one shared file
  bool fsync = false;                           // strata_fsync
  Commit commit = Commit::nosync;               // strata_commit
  uint64_t checksum_chunk = uint64_t{4} << 20;  // strata_checksum_chunk
  Strategy strategy = Strategy::automatic;      // strata_strategy
  Choice pack = Choice::automatic;              // strata_pack
  Choice stage = Choice::automatic;             // strata_stage
  Choice spans = Choice::automatic;             // strata_spans
  Choice copy = Choice::automatic;              // strata_copy: ranks copy into a shared window's buffers
  std::optional<uint64_t> hole_limit;           // strata_hole_limit: a hole this large ends a span
  TierHints tiers;                              // strata_aggr_tier, strata_target, ... (engine/place/tier_hints.hpp)
  bool compare_mpiio = false;                   // strata_compare_mpiio: also predict MPI-IO's own collective write
  // Which MPI-IO a collective write would use (for strata_compare_mpiio): ROMIO under MPICH or
  // with Open MPI's io=romio*, else OMPIO; its round size (OMPIO: io_ompio_bytes_per_agg).
  bool mpiio_romio = false;
  std::optional<uint64_t> ompio_bytes_per_agg;

  // Throws a usage Error naming the hint and what it accepts.
  static PhaseOptions from_hints(const std::vector<std::pair<std::string, std::string>>& hints);
  // A hash of every field: ranks must agree on it.
  uint64_t hash() const;
};

// The hints the engine understands: name, accepted values, meaning (for errors, help and docs);
// published as strata::engine_hints() (include/strata/hints.hpp).
using HintSpec = HintDescription;
const std::vector<HintSpec>& engine_hint_specs();

}  // namespace strata::engine
