// The phase hints about memory tiers and targets:
//   strata_aggr_tier=dram|hbm|nvr|tmpfs   force the aggregation tier (also STRATA_AGGR_TIER; the hint wins)
//   strata_persistency=job                 aggregated data must persist: a job-lifetime tier with room for it all
//   strata_target=node-local               write one file per node on node-local storage (the nvr tier's
//                                          directory, STRATA_LOCAL_DIR/<node>/), read back from it
//   strata_target=in-place                 write into an existing file the caller owns (a program's own MPI-IO
//                                          file): exactly the declared bytes, no partial file, index, truncation,
//                                          zero-filled hole or read-modify-write of bytes no rank declared
//   strata_drain=PATH                      burst-buffer write (engine/drain_job.hpp): commit on node-local
//                                          storage, return, then drain to PATH on the shared file system in
//                                          the background (implies strata_target=node-local); true: to the
//                                          phase's own path. A read with it reads PATH
//   strata_cost_table=true                 keep every candidate's costs (rank 0) for Phase::placement()
//   strata_dry_run=true                    plan and place only: no file is opened, write/read refused
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arch/memory_tier.hpp"

namespace strata::engine {

struct TierHints {
  std::optional<Tier> forced;
  bool persistent = false;
  bool node_local = false;
  bool in_place = false;     // strata_target=in-place
  bool drain = false;        // strata_drain: a drain target is set
  std::string drain_target;  // its PATH ("" with strata_drain=true: the phase's own path)
  bool cost_table = false;
  bool dry_run = false;
  uint64_t hash() const;
};

// Usage Error naming the hint when a value is bad.
TierHints parse_tier_hints(const std::vector<std::pair<std::string, std::string>>& hints);

// The output whose index describes the node-local copy: PATH.node-local (index PATH.node-local.strata-index.json).
std::string node_local_output(const std::string& path);

}  // namespace strata::engine
