// What an Engine keeps from phase to phase: its own duplicate of the communicator, the node
// map, the machine description and this node's memory tiers (loaded at first use), and the
// aggregation window (reallocated only when a phase needs more, or another tier).
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <vector>

#include "arch/machine.hpp"
#include "arch/memory_tier.hpp"
#include "arch/node_map.hpp"
#include "engine/move/window.hpp"
#include "strata/strata.hpp"

namespace strata {

class EngineImpl {
 public:
  explicit EngineImpl(MPI_Comm user);
  ~EngineImpl();
  EngineImpl(const EngineImpl&) = delete;
  EngineImpl& operator=(const EngineImpl&) = delete;

  // The window, large enough for `needed[r]` bytes on every rank r, on tier `tier_of[r]` of
  // each aggregator. Every rank decides the same way (all know `needed` and the tiers from the
  // plan and the current window), so reallocation is collective exactly when needed.
  engine::Window& window_for(const std::vector<uint64_t>& needed, const std::vector<int>& tier_of, int rank);
  // The machine description and this node's tiers, at first use (collective).
  const Machine& machine_once();
  const MemoryTier& tier(Tier t) const { return *tiers[static_cast<size_t>(t)]; }
  // Cores of this node (hwloc, read once): I/O threads and copies that run at once.
  int cores_per_node();

  MPI_Comm comm;
  NodeMap nodes;
  engine::Window window;
  std::vector<uint64_t> window_bytes;  // every rank's window size
  std::vector<int> window_tier;        // every rank's window tier
  std::optional<Machine> machine;
  std::vector<std::unique_ptr<MemoryTier>> tiers;  // this node's, indexed by Tier
  int cores = 0;
};

}  // namespace strata
