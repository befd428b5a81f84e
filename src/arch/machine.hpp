// The machine as the cost model sees it: each memory tier's latency, bandwidth, capacity and
// persistency; the network's latency and bandwidth; how far apart nodes are (a topology:
// flat, fat-tree, dragonfly groups, torus coordinates or an explicit matrix, in hops); and how
// far each node is from the storage target and how fast that is.
//
// It comes from a TOML file named by STRATA_MACHINE (docs/tiers.md, docs/machines/*.toml), or,
// without one, from a quick probe of this node's tiers at first use, cached in
// $XDG_CACHE_HOME/strata/machine-<host>.toml (default ~/.cache); the topology is then flat.
// STRATA_TIER_CAPACITY=hbm:32MiB,dram:32MiB lowers capacities (the aggregation paper's Table 10).
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "arch/io_figures.hpp"
#include "arch/memory_tier.hpp"

namespace strata {

struct Topology {
  enum class Kind { flat, fat_tree, dragonfly, torus, matrix };
  Kind kind = Kind::flat;
  std::vector<int> arity;                   // fat-tree: nodes per switch, then switches per switch above...
  int nodes_per_router = 1;                 // dragonfly
  int routers_per_group = 1;                // dragonfly
  std::vector<int> dims;                    // torus: extent of each dimension
  std::vector<std::vector<int>> coords;     // torus: each node's coordinates (else row-major of its id)
  std::vector<std::vector<double>> matrix;  // explicit: hops between node i and node j

  // Hops between nodes a and b (0 when a == b). Throws a usage Error when the description
  // does not cover a node (matrix or torus smaller than the job).
  double distance(int a, int b) const;
  // The largest node id + 1 the description covers, or 0 when any count is covered.
  int nodes_covered() const;
};
const char* topology_kind_name(Topology::Kind k);

struct Machine {
  std::string name;
  std::string source;                               // the file, or "probe" and the cache file
  std::vector<std::pair<Tier, TierFigures>> tiers;  // described tiers; a tier not listed is not used
  double network_latency_s = 0;
  double network_bandwidth_Bps = 0;
  Topology topology;
  double storage_latency_s = 0;
  double storage_bandwidth_Bps = 0;
  double storage_distance = 1;            // hops from any node to the storage target
  std::vector<double> storage_distances;  // per node, when given
  IoFigures io;                           // measured figures for the engine's strategy model

  const TierFigures* tier(Tier t) const;
  TierFigures* tier(Tier t);
  double distance_to_storage(int node) const;
  // Throws a usage Error when the topology or storage.distances describe fewer than `nodes`
  // nodes (the same on every rank: call it before anything rank-dependent).
  void check_covers(int nodes) const;
};

// Parses a machine description. Every problem is a usage Error of the form
// `machine file "NAME", line L: ...` naming the field and the fix.
Machine parse_machine(const std::string& toml_text, const std::string& name);
// The description as TOML (what the probe caches; parse_machine reads it back).
std::string machine_to_toml(const Machine& m);
// Its [io] table alone.
std::string io_to_toml(const IoFigures& f);
// Applies STRATA_TIER_CAPACITY-style overrides "tier:size,tier:size" (usage Error when bad).
void apply_capacity_overrides(Machine& m, const std::string& spec);

// This node's tiers, measured: a few copies into each available tier (bandwidth) and small
// flushed writes (latency); capacities from hwloc and statvfs. Network and storage figures are
// the probe's stated defaults (it cannot measure them alone). Takes well under a second.
Machine probe_machine(int node);
// $XDG_CACHE_HOME/strata/machine-<host>.toml, or ~/.cache/strata/..., or "" without a home.
std::string machine_cache_path();
// Writes the machine cache atomically (a temporary file, then rename); failures are ignored.
void store_machine_cache(const std::string& cache, const std::string& text);
// Collective over `comm`: rank 0 reads STRATA_MACHINE, or the cache (probing and caching it
// when missing), and shares the text; every rank parses it (so a bad file is the same error on
// every rank) and applies STRATA_TIER_CAPACITY. Without STRATA_MACHINE, a cache whose [io]
// figures were never measured — or were measured by a lone rank, without the MPI figures, while
// this job has several — gets them measured (probe_io_figures, collective; not with
// STRATA_NO_IO_PROBE=1) and rewritten.
Machine load_machine(MPI_Comm comm, int node);

}  // namespace strata
