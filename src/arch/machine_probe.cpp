// The machine without a description: this node's tiers measured once, cached per host.
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "arch/hwloc_summary.hpp"
#include "arch/machine.hpp"
#include "common/error.hpp"

namespace strata {

namespace {

constexpr uint64_t kProbeBytes = uint64_t{8} << 20;
constexpr int kLatencyWrites = 32;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t free_bytes(const std::string& dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return 0;
  return static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
}

// Bandwidth: three copies of 8 MiB from main memory into fresh memory of the tier (first
// touch included, as an aggregation buffer has it). Latency: 4 KiB writes to distinct pages,
// each flushed.
TierFigures measure(const MemoryTier& tier, const std::vector<std::byte>& source) {
  TierFigures f;
  auto mem = tier.allocate(kProbeBytes);
  auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 3; ++rep) std::memcpy(mem->data(), source.data(), kProbeBytes);
  f.bandwidth_Bps = 3.0 * static_cast<double>(kProbeBytes) / std::max(seconds_since(t0), 1e-9);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLatencyWrites; ++i) {
    std::memcpy(mem->data() + static_cast<size_t>(i) * 65536, source.data(), 4096);
    mem->flush();
  }
  f.latency_s = seconds_since(t0) / kLatencyWrites;
  return f;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf[0] != '\0' ? buf : "unknown";
}

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path);
  ok = static_cast<bool>(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Machine probe_machine(int node) {
  Machine m;
  m.name = host_name() + " (probed)";
  m.source = "probe";
  std::vector<std::byte> source(kProbeBytes, std::byte{0x5a});
  for (Tier t : all_tiers()) {
    auto tier = make_memory_tier(t, TierFigures{}, node);
    if (!tier->available()) continue;
    TierFigures f = measure(*tier, source);
    switch (t) {
      case Tier::hbm: f.capacity_bytes = hbm_bytes(); break;
      case Tier::dram: f.capacity_bytes = hwloc_summary().memory_bytes; break;
      case Tier::tmpfs:
      case Tier::nvr: f.capacity_bytes = free_bytes(tier_directory(t, node)); break;
    }
    f.persistency = (t == Tier::tmpfs || t == Tier::nvr) ? Persistency::job : Persistency::none;
    if (f.capacity_bytes == 0) continue;
    m.tiers.emplace_back(t, f);
  }
  // A lone node cannot measure the network or the storage target: stated defaults, to be
  // replaced by a machine file (docs/tiers.md). Within one host the "network" is memory.
  const TierFigures* dram = m.tier(Tier::dram);
  m.network_latency_s = 1e-6;
  m.network_bandwidth_Bps = dram != nullptr ? dram->bandwidth_Bps : 10e9;
  m.storage_latency_s = 50e-6;
  m.storage_bandwidth_Bps = 1e9;
  m.storage_distance = 1;
  return m;
}

std::string machine_cache_path() {
  std::filesystem::path base;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    base = x;
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    base = std::filesystem::path(h) / ".cache";
  } else {
    return {};
  }
  return (base / "strata" / ("machine-" + host_name() + ".toml")).string();
}

namespace {

// Rank 0's part: the description's text and the name to report it by.
std::pair<std::string, std::string> machine_text(int node) {
  if (const char* file = std::getenv("STRATA_MACHINE"); file != nullptr && *file != '\0') {
    bool ok = false;
    std::string text = read_file(file, ok);
    if (!ok) throw_usage(std::string("cannot read the machine file \"") + file + "\" named by STRATA_MACHINE");
    return {text, file};
  }
  const std::string cache = machine_cache_path();
  if (!cache.empty()) {
    bool ok = false;
    std::string text = read_file(cache, ok);
    if (ok) {
      try {
        parse_machine(text, cache);
        return {text, cache};
      } catch (const Error&) {
        // A cache from another version or damaged: measured again below and replaced.
      }
    }
  }
  Machine m = probe_machine(node);
  m.source = cache.empty() ? "probe" : "probe, cached in " + cache;
  std::string text = machine_to_toml(m);
  if (!cache.empty()) store_machine_cache(cache, text);
  return {text, cache.empty() ? std::string("probe") : cache};
}

}  // namespace

void store_machine_cache(const std::string& cache, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
  // Written aside then renamed: jobs that start together never read half a file.
  const std::string tmp = cache + ".tmp." + std::to_string(::getpid());
  std::ofstream out(tmp);
  out << text;
  out.close();
  if (out) std::filesystem::rename(tmp, cache, ec);  // a cache that cannot be written only costs a probe next time
  if (ec || !out) std::filesystem::remove(tmp, ec);
}

Machine load_machine(MPI_Comm comm, int node) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0 reads (or probes) the description and broadcasts it — or the error it met, which
  // every rank then raises: two broadcasts, the sizes and then the text and name together.
  std::string text, name;
  unsigned long long n[3] = {0, 0, 0};  // text size, name size, error kind + 1 (0: none)
  if (rank == 0) {
    try {
      std::tie(text, name) = machine_text(node);
    } catch (const Error& e) {
      text = e.what();
      n[2] = static_cast<unsigned long long>(e.kind()) + 1;
    } catch (const std::exception& e) {
      text = e.what();
      n[2] = static_cast<unsigned long long>(ErrorKind::runtime) + 1;
    }
    n[0] = text.size();
    n[1] = name.size();
  }
  MPI_Bcast(n, 3, MPI_UNSIGNED_LONG_LONG, 0, comm);
  std::string both = text + name;
  both.resize(n[0] + n[1]);
  MPI_Bcast(both.data(), static_cast<int>(both.size()), MPI_CHAR, 0, comm);
  text = both.substr(0, n[0]);
  name = both.substr(n[0]);
  if (n[2] != 0) throw Error(static_cast<ErrorKind>(n[2] - 1), text);
  Machine m = parse_machine(text, name);  // the same text everywhere: the same outcome everywhere
  // The engine's I/O figures, probed at first use (once per cached machine) unless the machine
  // is described by a file (STRATA_MACHINE) or STRATA_NO_IO_PROBE is set: the same decision on
  // every rank, since every rank parsed the same text.
  const char* no_probe = std::getenv("STRATA_NO_IO_PROBE");
  const char* described = std::getenv("STRATA_MACHINE");
  const bool from_cache = described == nullptr || *described == '\0';
  // Figures measured by a lone rank lack the MPI ones (io_figures.hpp): a job of several ranks
  // measures them again; so are figures probed before the rewrite curve was (io.rewrite_us), or
  // before the write curve was measured by a node's writers together (io.curve_writers).
  int size = 1;
  MPI_Comm_size(comm, &size);
  const bool incomplete =
      !m.io.measured || (m.io.probe_ranks < 2 && size > 1) || m.io.rewrite.empty() || m.io.curve_writers == 0;
  const bool may_probe = from_cache && (no_probe == nullptr || *no_probe == '\0' || std::string(no_probe) == "0");
  // Figures measured on a busy machine (io_figures.hpp: doubtful) are measured again once this
  // node is clearly quieter than it was then (rank 0's load average, one broadcast, only while
  // they are doubtful); the less scattered of the two sets is kept.
  int again = 0;
  if (may_probe && !incomplete && m.io.doubtful()) {
    if (rank == 0) {
      const double load = load_average_now();
      const double then = m.io.load_average >= 0 ? m.io.load_average : 2.0 * m.io.cores_per_node();
      again = load >= 0 && load < 0.5 * then ? 1 : 0;
    }
    MPI_Bcast(&again, 1, MPI_INT, 0, comm);
  }
  if (may_probe && (incomplete || again != 0)) {
    const std::string cache = machine_cache_path();
    const std::string dir = cache.empty() ? "/tmp" : std::filesystem::path(cache).parent_path().string();
    const IoFigures fresh = probe_io_figures(comm, dir);
    if (incomplete || fresh.scatter < m.io.scatter) {
      m.io = fresh;
      if (rank == 0 && !cache.empty()) store_machine_cache(cache, machine_to_toml(m));
    }
  }
  if (const char* caps = std::getenv("STRATA_TIER_CAPACITY"); caps != nullptr && *caps != '\0') {
    apply_capacity_overrides(m, caps);
  }
  return m;
}

}  // namespace strata
