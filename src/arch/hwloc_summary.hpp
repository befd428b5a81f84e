// A short description of this node from hwloc: packages, NUMA nodes, cores, PUs, memory, caches.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

struct NodeSummary {
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  uint64_t memory_bytes = 0;
  uint64_t l3_bytes = 0;  // the first L3 cache found, 0 if none
  std::string cpu_model;
  std::string hwloc_version;
};

NodeSummary hwloc_summary();

}  // namespace strata
