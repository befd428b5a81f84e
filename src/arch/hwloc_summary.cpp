#include "arch/hwloc_summary.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <memory>

#include "common/error.hpp"

namespace strata {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};

}  // namespace

NodeSummary hwloc_summary() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw_runtime("hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, TopologyDeleter> topo(raw);
  if (hwloc_topology_load(raw) != 0) throw_runtime("hwloc_topology_load failed");
  NodeSummary s;
  s.packages = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PACKAGE);
  s.numa_nodes = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE);
  s.cores = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_CORE);
  s.pus = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU);
  hwloc_obj_t root = hwloc_get_root_obj(raw);
  // The operating system's figure (MemTotal, what `free` shows): hwloc's root total counts only
  // the memory it finds in NUMA nodes, which on some virtual machines is a fraction of it.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  s.memory_bytes =
      pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : root->total_memory;
  if (hwloc_obj_t l3 = hwloc_get_obj_by_type(raw, HWLOC_OBJ_L3CACHE, 0); l3 != nullptr && l3->attr) {
    s.l3_bytes = l3->attr->cache.size;
  }
  if (hwloc_obj_t pkg = hwloc_get_obj_by_type(raw, HWLOC_OBJ_PACKAGE, 0); pkg != nullptr) {
    if (const char* model = hwloc_obj_get_info_by_name(pkg, "CPUModel")) s.cpu_model = model;
  }
  unsigned v = hwloc_get_api_version();
  s.hwloc_version = std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
  return s;
}

}  // namespace strata
