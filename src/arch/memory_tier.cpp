#include "arch/memory_tier.hpp"

#include <fcntl.h>
#include <hwloc.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "arch/node_local.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

#ifdef STRATA_HAVE_MEMKIND
#include <memkind.h>
#endif

namespace strata {

const char* tier_name(Tier t) {
  switch (t) {
    case Tier::hbm: return "hbm";
    case Tier::dram: return "dram";
    case Tier::tmpfs: return "tmpfs";
    case Tier::nvr: return "nvr";
  }
  return "?";
}

std::optional<Tier> parse_tier(const std::string& name) {
  for (Tier t : all_tiers()) {
    if (name == tier_name(t)) return t;
  }
  return std::nullopt;
}

std::vector<Tier> all_tiers() { return {Tier::hbm, Tier::dram, Tier::tmpfs, Tier::nvr}; }

const char* persistency_name(Persistency p) { return p == Persistency::job ? "job" : "none"; }

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};

// The bytes of NUMA nodes hwloc marks as high-bandwidth memory (subtype HBM or MCDRAM).
uint64_t hwloc_hbm_bytes() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return 0;
  std::unique_ptr<hwloc_topology, TopologyDeleter> topo(raw);
  if (hwloc_topology_load(raw) != 0) return 0;
  uint64_t bytes = 0;
  const int n = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(raw, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (o != nullptr && o->subtype != nullptr &&
        (std::strcmp(o->subtype, "HBM") == 0 || std::strcmp(o->subtype, "MCDRAM") == 0)) {
      bytes += o->attr != nullptr ? o->attr->numanode.local_memory : 0;
    }
  }
  return bytes;
}

bool mpi_usable() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init != 0 && fin == 0;
}

// ---- dram: memory from MPI -------------------------------------------------
class DramMemory final : public TierMemory {
 public:
  explicit DramMemory(uint64_t bytes) : size_(bytes) {
    void* p = nullptr;
    const int rc = MPI_Alloc_mem(static_cast<MPI_Aint>(bytes), MPI_INFO_NULL, &p);
    if (rc != MPI_SUCCESS || p == nullptr) {
      throw_runtime("tier dram: MPI_Alloc_mem of " + format_size(bytes) + " failed");
    }
    data_ = static_cast<std::byte*>(p);
  }
  ~DramMemory() override {
    if (data_ != nullptr && mpi_usable()) MPI_Free_mem(data_);
  }
  std::byte* data() const override { return data_; }
  uint64_t size() const override { return size_; }
  Tier tier() const override { return Tier::dram; }
  void flush() override {}

 private:
  std::byte* data_ = nullptr;
  uint64_t size_;
};

// ---- hbm: memkind ----------------------------------------------------------
#ifdef STRATA_HAVE_MEMKIND
class HbmMemory final : public TierMemory {
 public:
  explicit HbmMemory(uint64_t bytes) : size_(bytes) {
    data_ = static_cast<std::byte*>(memkind_malloc(MEMKIND_HBW, bytes));
    if (data_ == nullptr) throw_runtime("tier hbm: memkind_malloc(MEMKIND_HBW) of " + format_size(bytes) + " failed");
  }
  ~HbmMemory() override { memkind_free(MEMKIND_HBW, data_); }
  std::byte* data() const override { return data_; }
  uint64_t size() const override { return size_; }
  Tier tier() const override { return Tier::hbm; }
  void flush() override {}

 private:
  std::byte* data_ = nullptr;
  uint64_t size_;
};
#endif

// ---- nvr and tmpfs: a file, mmap'ed ------------------------------------------
class FileMemory final : public TierMemory {
 public:
  FileMemory(Tier tier, const std::string& dir, uint64_t bytes) : tier_(tier), size_(bytes) {
    std::string templ = dir + "/strata-" + tier_name(tier) + "-XXXXXX";
    fd_ = ::mkstemp(templ.data());
    if (fd_ < 0)
      throw_system(std::string("tier ") + tier_name(tier) + ": cannot create a buffer file in \"" + dir + "\"", errno);
    path_ = templ;
    // Reserve the blocks now: a full device is an error here, not a SIGBUS in the middle of a round.
    const int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(bytes));
    if (rc != 0) {
      release();
      throw_system(
          std::string("tier ") + tier_name(tier) + ": cannot reserve " + format_size(bytes) + " in \"" + dir + "\"",
          rc);
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      release();
      throw_system(std::string("tier ") + tier_name(tier) + ": mmap of \"" + path_ + "\" failed", err);
    }
    data_ = static_cast<std::byte*>(p);
  }
  ~FileMemory() override { release(); }
  std::byte* data() const override { return data_; }
  uint64_t size() const override { return size_; }
  Tier tier() const override { return tier_; }
  void flush() override {
    if (data_ != nullptr && ::msync(data_, size_, MS_SYNC) != 0) {
      throw_system(std::string("tier ") + tier_name(tier_) + ": msync of \"" + path_ + "\" failed", errno);
    }
  }

 private:
  void release() {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!path_.empty()) ::unlink(path_.c_str());  // lifetime: the buffer's (at most the job's)
    path_.clear();
  }
  Tier tier_;
  uint64_t size_;
  int fd_ = -1;
  std::string path_;
  std::byte* data_ = nullptr;
};

std::string writable_dir_reason(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return "\"" + dir + "\" is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return "\"" + dir + "\" is not writable";
  return {};
}

class Tiered : public MemoryTier {
 public:
  Tiered(Tier t, const TierFigures& f, int node) : tier_(t), figures_(f), node_(node) {}
  Tier tier() const override { return tier_; }
  const TierFigures& figures() const override { return figures_; }
  // Looked up at the first question (HBM's costs a topology load), then kept.
  std::string absent_reason() const override {
    if (!absent_) absent_ = find_absent();
    return *absent_;
  }

 private:
  std::string find_absent() const {
    switch (tier_) {
      case Tier::dram: return {};
      case Tier::hbm: return hbm_absent_reason();
      case Tier::tmpfs:
      case Tier::nvr: try { return writable_dir_reason(tier_directory(tier_, node_));
        } catch (const Error& e) {
          return e.what();
        }
    }
    return "unknown tier";
  }

 public:
  std::unique_ptr<TierMemory> allocate(uint64_t bytes) const override {
    const std::string why = absent_reason();
    if (!why.empty()) throw_runtime(std::string("tier ") + tier_name(tier_) + " is not available on this node: " + why);
    switch (tier_) {
      case Tier::dram: return std::make_unique<DramMemory>(bytes);
      case Tier::hbm:
#ifdef STRATA_HAVE_MEMKIND
        return std::make_unique<HbmMemory>(bytes);
#else
        break;
#endif
      case Tier::tmpfs:
      case Tier::nvr: return std::make_unique<FileMemory>(tier_, tier_directory(tier_, node_), bytes);
    }
    throw_runtime(std::string("tier ") + tier_name(tier_) + " cannot allocate here");
  }

 private:
  Tier tier_;
  TierFigures figures_;
  int node_;
  mutable std::optional<std::string> absent_;
};

}  // namespace

uint64_t hbm_bytes() { return hwloc_hbm_bytes(); }

std::string hbm_absent_reason() {
  if (hwloc_hbm_bytes() == 0) return "hwloc reports no high-bandwidth memory (no HBM or MCDRAM NUMA node)";
#ifdef STRATA_HAVE_MEMKIND
  if (memkind_check_available(MEMKIND_HBW) != 0) return "memkind cannot allocate MEMKIND_HBW memory on this node";
  return {};
#else
  return "Strata was built without memkind (configure with -DSTRATA_WITH_MEMKIND=ON)";
#endif
}

std::string tier_directory(Tier t, int node) {
  if (t == Tier::tmpfs) return "/dev/shm";
  if (t == Tier::nvr) return node_local_dir(node);
  return {};
}

std::unique_ptr<MemoryTier> make_memory_tier(Tier t, const TierFigures& figures, int node) {
  return std::make_unique<Tiered>(t, figures, node);
}

}  // namespace strata
