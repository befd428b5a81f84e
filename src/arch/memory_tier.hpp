// Memory tiers an aggregator can hold its buffers on (the aggregation paper's memory abstraction,
// section 4.1): one interface — allocate a buffer that an RMA window can expose, free it (RAII),
// flush it, and report latency, bandwidth, capacity and persistency — and four implementations:
//   dram   main memory (the window memory comes from MPI: MPI_Alloc_mem / MPI_Win_allocate);
//   hbm    high-bandwidth memory through memkind, only when hwloc reports an HBM NUMA node;
//   nvr    a file in node-local storage (STRATA_LOCAL_DIR/<node>/), mmap'ed; lifetime: the job;
//   tmpfs  the same over /dev/shm.
// A tier the node does not have is reported absent with the reason, never faked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata {

// Fastest first; the order breaks ties between tiers of equal cost.
enum class Tier : int { hbm = 0, dram = 1, tmpfs = 2, nvr = 3 };
constexpr int kTierCount = 4;
const char* tier_name(Tier t);
std::optional<Tier> parse_tier(const std::string& name);
std::vector<Tier> all_tiers();

enum class Persistency : int { none = 0, job = 1 };
const char* persistency_name(Persistency p);

// What the cost model needs of a tier.
struct TierFigures {
  double latency_s = 0;
  double bandwidth_Bps = 0;
  uint64_t capacity_bytes = 0;
  Persistency persistency = Persistency::none;
};

// Memory on a tier, owned; freed on destruction.
class TierMemory {
 public:
  virtual ~TierMemory() = default;
  virtual std::byte* data() const = 0;
  virtual uint64_t size() const = 0;
  virtual Tier tier() const = 0;
  // Makes the contents durable as far as the tier can (msync for nvr; nothing to do in memory).
  virtual void flush() = 0;
};

class MemoryTier {
 public:
  virtual ~MemoryTier() = default;
  virtual Tier tier() const = 0;
  // Empty when the tier can be used on this node, else why not.
  virtual std::string absent_reason() const = 0;
  bool available() const { return absent_reason().empty(); }
  // Latency, bandwidth, capacity and persistency (from the machine description or the probe).
  virtual const TierFigures& figures() const = 0;
  // A buffer of `bytes` (> 0) on this tier; a runtime Error naming the tier and the cause when
  // it cannot be had.
  virtual std::unique_ptr<TierMemory> allocate(uint64_t bytes) const = 0;
};

// The tier on this node (`node` picks nvr's directory). Figures are given by the caller
// (machine description); availability is this node's.
std::unique_ptr<MemoryTier> make_memory_tier(Tier t, const TierFigures& figures, int node);

// Why HBM is absent here (hwloc lists no HBM/MCDRAM NUMA node, or Strata was built without
// memkind), or empty when present; and the HBM bytes hwloc reports.
std::string hbm_absent_reason();
uint64_t hbm_bytes();
// The directory a file-backed tier keeps its files in on `node`.
std::string tier_directory(Tier t, int node);

}  // namespace strata
