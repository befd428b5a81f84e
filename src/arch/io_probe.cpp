// The engine's machine figures, measured: one-sided puts, fences and small collectives between
// the ranks of a communicator, copies and hashes in memory, and file requests in a folder.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <string>
#include <vector>

#include "arch/hwloc_summary.hpp"
#include "arch/io_figures.hpp"
#include "common/error.hpp"
#include "common/run_copy.hpp"
#include "common/xxh3.hpp"

namespace strata {

namespace {

constexpr int kRepeats = 7;
// The request sizes of the write curves (IoFigures::write, IoFigures::rewrite).
constexpr uint64_t kWriteSizes[4] = {4096, 65536, uint64_t{1} << 20, uint64_t{4} << 20};

double now() { return MPI_Wtime(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double best(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

// The largest median / best ratio of the figures timed so far (how busy the machine was).
struct Scatter {
  double worst = 1;
  void note(const std::vector<double>& t) {
    const double b = best(t);
    if (b > 1e-7) worst = std::max(worst, median(t) / b);  // below 0.1 us the clock's own step dominates
  }
};

// The best of `kRepeats` timings of fn() (one warm-up first), the slowest rank's: a busy moment
// only ever slows a repeat down, so the best is the machine's own figure.
template <class F>
double timed(MPI_Comm comm, Scatter& scatter, F&& fn) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < kRepeats; ++i) {
    MPI_Barrier(comm);
    const double t0 = now();
    fn();
    t.push_back(now() - t0);
  }
  scatter.note(t);
  double mine = best(t), worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  return worst;
}

// Collective over `comm`: a write curve of the node of `comm`'s rank 0, on that rank — into a new
// file (`cached` false: IoFigures::write) or over a file's cached pages (IoFigures::rewrite). Every
// rank of a node writes its share of a 64 MiB file of `dir`, the requests of `bytes` dealt
// round-robin (at most 4096 a pass), from 16 MiB of memory of its own: an output as a job's ranks
// write it, their turns at the file's lock and their sharing of the cores included, from and to
// memory no processor cache holds (an output is larger; a smaller file rewrote twice as fast
// here, 2026-12-02). A new file is created empty before each pass and removed after it (untimed);
// a cached one is written once before the passes (untimed). Seconds per request: the node's time
// for a pass over its requests, the median of five (the writers' turns and scheduling are the
// job's own, which every write meets: not a busy moment's to drop). Four writers of a new 64 MiB
// file took 340 us a 1 MiB request here where one writer of a truncated 8 MiB file, the best of
// three, took 160 us; a launch's first writes took about twice the latter (2026-12-02). Empty
// where the folder is not writable. (Not in the scatter: with more writers than cores, a pass
// waits for scheduling rounds or not, as the fences do.) `writers`: the node's ranks that wrote.
std::vector<WriteFigure> node_write_curve(MPI_Comm comm, const std::string& dir, bool cached, int& writers) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int me = 0;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &writers);
  // One file per node: named by its first rank's host and process.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  long pid = static_cast<long>(::getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, node);
  const std::string path =
      dir + (cached ? "/.strata-io-probe-rewrite-" : "/.strata-io-probe-write-") + host + "-" + std::to_string(pid);
  constexpr uint64_t kFile = uint64_t{64} << 20, kMemory = uint64_t{16} << 20, kMaxRequests = 4096;
  std::vector<char> data(kMemory, 'r');
  int fd = -1, failed = 0;
  if (me == 0) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    for (uint64_t at = 0; cached && fd >= 0 && at < kFile && failed == 0; at += kMemory) {
      failed = ::pwrite(fd, data.data(), kMemory, static_cast<off_t>(at)) == static_cast<ssize_t>(kMemory) ? 0 : 1;
    }
    failed = fd < 0 ? 1 : failed;
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, node);
  if (me != 0 && failed == 0) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  std::vector<WriteFigure> curve;
  for (uint64_t bytes : kWriteSizes) {
    const uint64_t n = std::min(kFile / bytes, kMaxRequests);
    std::vector<double> per;
    for (int rep = 0; rep < 5; ++rep) {
      int bad = fd < 0 ? 1 : 0;
      // A new file's pages each pass: the last pass's freed (untimed), as a new output's are.
      if (!cached && me == 0 && bad == 0 && ::ftruncate(fd, 0) != 0) bad = 1;
      MPI_Barrier(node);
      const double t0 = now();
      for (uint64_t i = static_cast<uint64_t>(me); i < n && bad == 0; i += static_cast<uint64_t>(writers)) {
        const char* from = data.data() + (i * bytes) % kMemory;
        bad = ::pwrite(fd, from, bytes, static_cast<off_t>(i * bytes)) == static_cast<ssize_t>(bytes) ? 0 : 1;
      }
      // From the first writer's start to the last one's end (one node: one clock).
      double span[3] = {-t0, now(), static_cast<double>(bad)};
      MPI_Allreduce(MPI_IN_PLACE, span, 3, MPI_DOUBLE, MPI_MAX, node);
      if (span[2] != 0) break;
      per.push_back((span[1] + span[0]) / static_cast<double>(n));
    }
    if (per.size() != 5) break;
    curve.push_back({bytes, median(per)});
  }
  if (fd >= 0) ::close(fd);
  MPI_Barrier(node);
  if (me == 0) ::unlink(path.c_str());
  MPI_Comm_free(&node);
  if (curve.size() != std::size(kWriteSizes)) curve.clear();
  return curve;
}

}  // namespace

IoFigures probe_io_figures(MPI_Comm comm, const std::string& dir) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  IoFigures f;
  f.measured = true;
  f.probe_ranks = size;
  f.load_average = load_average_now();  // before the probe's own work adds to it
  f.probed_at = static_cast<int64_t>(std::time(nullptr));
  Scatter scatter;

  // One-sided figures. The fence and the small collective at this job's ranks, as the engine's
  // rounds meet them. The puts are each a core's own work: on a node with more ranks than cores
  // (oversubscribed, as on a laptop) only one rank per core puts, to its neighbour among them,
  // while the others wait — otherwise a figure would also hold the sharing of the cores, which
  // the model counts itself (streams), and would depend on how many ranks happened to probe.
  // A lone rank would only measure puts to itself (a memcpy) and fences with nobody to wait for:
  // it keeps the stated defaults, and load_machine() probes again with more ranks.
  constexpr uint64_t kWindow = uint64_t{4} << 20;
  constexpr int kSmallPuts = 4096, kRuns = 1000, kRunBytes = 64;
  std::vector<std::byte> source(kWindow, std::byte{0x5a});
  if (size > 1) {
    std::byte* base = nullptr;
    MPI_Win win = MPI_WIN_NULL;
    check_mpi(MPI_Win_allocate(static_cast<MPI_Aint>(kWindow), 1, MPI_INFO_NULL, comm, &base, &win),
              "MPI_Win_allocate");
    // (Not in the scatter: with more ranks than cores, a fence waits for a scheduling round or
    // not, so its repeats are far apart on the quietest machine.)
    Scatter rounds;
    f.fence_s = timed(comm, rounds, [&] { MPI_Win_fence(0, win); });
    f.collective_s = timed(comm, rounds, [&] {
      double x = 1, y = 0;
      MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
    });
    MPI_Win_free(&win);
    // The putting ranks: the first `cores` ranks of each node (at least two), or every rank
    // when each node holds one (then the puts cross nodes, as they would).
    MPI_Comm node = MPI_COMM_NULL, pairs = MPI_COMM_NULL;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_rank = 0, node_size = 1;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    int one_per_node = node_size == 1 ? 1 : 0, all_one = 0;
    MPI_Allreduce(&one_per_node, &all_one, 1, MPI_INT, MPI_MIN, comm);
    const int putters = std::max(2, IoFigures{}.cores_per_node());
    if (all_one == 1) {
      MPI_Comm_dup(comm, &pairs);
    } else {
      MPI_Comm_split(node, node_rank < putters && node_size > 1 ? 0 : MPI_UNDEFINED, node_rank, &pairs);
    }
    MPI_Comm_free(&node);
    double puts[3] = {0, 0, 0};  // seconds: a small put, a byte of a large put, a run
    if (pairs != MPI_COMM_NULL) {
      int me = 0, n = 1;
      MPI_Comm_rank(pairs, &me);
      MPI_Comm_size(pairs, &n);
      check_mpi(MPI_Win_allocate(static_cast<MPI_Aint>(kWindow), 1, MPI_INFO_NULL, pairs, &base, &win),
                "MPI_Win_allocate");
      const int target = (me + 1) % n;
      const double fence = timed(pairs, scatter, [&] { MPI_Win_fence(0, win); });
      const double small = timed(pairs, scatter, [&] {
        for (int i = 0; i < kSmallPuts; ++i) {
          MPI_Put(source.data(), 8, MPI_BYTE, target, static_cast<MPI_Aint>(i % 16384) * 64, 8, MPI_BYTE, win);
        }
        MPI_Win_fence(0, win);
      });
      // (At least 5 ns: below that the fence's noise is all one measures.)
      puts[0] = std::max(std::max(small - fence, 0.0) / kSmallPuts, 5e-9);
      const double large = timed(pairs, scatter, [&] {
        MPI_Put(source.data(), static_cast<int>(kWindow), MPI_BYTE, target, 0, static_cast<int>(kWindow), MPI_BYTE,
                win);
        MPI_Win_fence(0, win);
      });
      puts[1] = std::max(large - fence, 1e-9) / static_cast<double>(kWindow);
      // A put of many runs with an hindexed target type (built, committed and freed each time,
      // as a phase does once per group), against one contiguous put of the same bytes.
      std::vector<int> lengths(kRuns, kRunBytes);
      std::vector<MPI_Aint> displacements(kRuns);
      for (int i = 0; i < kRuns; ++i) displacements[static_cast<size_t>(i)] = static_cast<MPI_Aint>(i) * 2 * kRunBytes;
      const double packed = timed(pairs, scatter, [&] {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        MPI_Type_create_hindexed(kRuns, lengths.data(), displacements.data(), MPI_BYTE, &t);
        MPI_Type_commit(&t);
        MPI_Put(source.data(), kRuns * kRunBytes, MPI_BYTE, target, 0, 1, t, win);
        MPI_Win_fence(0, win);
        MPI_Type_free(&t);
      });
      const double contiguous = timed(pairs, scatter, [&] {
        MPI_Put(source.data(), kRuns * kRunBytes, MPI_BYTE, target, 0, kRuns * kRunBytes, MPI_BYTE, win);
        MPI_Win_fence(0, win);
      });
      puts[2] = std::max(packed - contiguous, 0.0) / kRuns;
      MPI_Win_free(&win);
      MPI_Comm_free(&pairs);
    }
    double slowest[3] = {0, 0, 0};  // the waiting ranks add nothing
    MPI_Allreduce(puts, slowest, 3, MPI_DOUBLE, MPI_MAX, comm);
    f.put_latency_s = slowest[0];
    f.put_bandwidth_Bps = 1.0 / slowest[1];
    f.put_run_s = slowest[2];
  }

  // Rank 0: memory and the folder's file system; then every rank gets rank 0's figures.
  if (rank == 0) {
    f.cores = hwloc_summary().cores;  // kept with the figures: the engine never loads the topology
    std::vector<std::byte> copy(kWindow);
    f.memcpy_Bps =
        static_cast<double>(kWindow) /
        std::max(timed(MPI_COMM_SELF, scatter, [&] { std::memcpy(copy.data(), source.data(), kWindow); }), 1e-9);
    // Placing runs: 16384 runs of 64 bytes copied from one after another to every other 64 bytes
    // (what an aggregator does with a staged round), beyond what copying their bytes costs.
    constexpr int kPlaced = 16384;
    std::vector<std::pair<uint32_t, uint32_t>> places(kPlaced);
    for (int i = 0; i < kPlaced; ++i) {
      places[static_cast<size_t>(i)] = {static_cast<uint32_t>(i) * 2 * kRunBytes, kRunBytes};
    }
    const double placed = timed(MPI_COMM_SELF, scatter, [&] {
      const std::byte* from = source.data();
      for (const auto& [at, length] : places) {
        std::memcpy(copy.data() + at, from, length);
        from += length;
      }
    });
    f.copy_run_s = std::max(placed - static_cast<double>(kPlaced * kRunBytes) / f.memcpy_Bps, 1e-10) / kPlaced;
    // Spreading runs: 32768 runs of 8 bytes copied from one after another to every 512th byte of
    // 16 MiB (a copied write: each rank's short runs land among the other ranks', a line each).
    // The same 16 MiB each repeat (timed() keeps the best): a window written again, as every
    // write of an engine is after its first, is in whatever cache holds it.
    constexpr uint64_t kSpreadStride = 512, kSpreadRun = 8, kSpreadRuns = 2 * kPlaced;
    std::vector<std::byte> spread(kSpreadRuns * kSpreadStride);
    std::memset(spread.data(), 0, spread.size());
    std::vector<std::byte> spread_from(kSpreadRuns * kSpreadRun, std::byte{1});
    const double spreading = timed(MPI_COMM_SELF, scatter, [&] {
      std::byte* to = spread.data();
      const std::byte* from = spread_from.data();
      for (uint64_t i = 0; i < kSpreadRuns; ++i) {
        copy_run(to + i * kSpreadStride, from, kSpreadRun);
        from += kSpreadRun;
      }
    });
    f.spread_run_s = std::max(spreading, 1e-10) / kSpreadRuns;
    // First touches: 16 MiB of new anonymous memory (as a new window or list is), a byte a page
    // written; a fresh mapping each repeat, so every repeat takes every fault.
    constexpr uint64_t kFresh = uint64_t{16} << 20;
    const long page = std::max(::sysconf(_SC_PAGESIZE), 1L);
    const double fresh = timed(MPI_COMM_SELF, scatter, [&] {
      void* m = ::mmap(nullptr, kFresh, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) return;
      auto* bytes = static_cast<volatile char*>(m);
      for (uint64_t at = 0; at < kFresh; at += static_cast<uint64_t>(page)) bytes[at] = 1;
      ::munmap(m, kFresh);
    });
    f.fresh_Bps = static_cast<double>(kFresh) / std::max(fresh, 1e-9);
    volatile uint64_t sink = 0;
    f.hash_Bps =
        static_cast<double>(kWindow) /
        std::max(timed(MPI_COMM_SELF, scatter, [&] { sink = sink + XXH3_64bits(source.data(), kWindow); }), 1e-9);
    std::vector<char> data(uint64_t{4} << 20, 'p');
    const std::string a = dir + "/.strata-io-probe-a-" + std::to_string(::getpid());
    const std::string b = dir + "/.strata-io-probe-b-" + std::to_string(::getpid());
    std::vector<double> create, rename;
    for (int i = 0; i < 8; ++i) {
      double t0 = now();
      const int fd = ::open(a.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) break;
      ::close(fd);
      create.push_back(now() - t0);
      t0 = now();
      if (std::rename(a.c_str(), b.c_str()) != 0) break;
      rename.push_back(now() - t0);
      ::unlink(b.c_str());
    }
    if (!create.empty()) f.create_s = best(create);
    if (!rename.empty()) f.rename_s = best(rename);
    const int fd = ::open(a.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      const double t0 = now();
      bool ok = true;
      for (uint64_t off = 0; off < (uint64_t{16} << 20) && ok; off += data.size()) {
        ok = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(off)) == static_cast<ssize_t>(data.size());
      }
      if (ok && ::fsync(fd) == 0) f.fsync_Bps = static_cast<double>(uint64_t{16} << 20) / std::max(now() - t0, 1e-9);
      ::close(fd);
      ::unlink(a.c_str());
    }
  }
  // Every rank: the write curves of rank 0's node (rank 0's figures, broadcast below), into new
  // pages and over cached ones.
  int writers = 1;
  if (std::vector<WriteFigure> fresh = node_write_curve(comm, dir, false, writers); fresh.size() == 4) {
    f.write = fresh;
    f.curve_writers = writers;
  }
  f.rewrite = node_write_curve(comm, dir, true, writers);
  // The scatter of the slowest rank; rank 0's load and time.
  double mine = scatter.worst;
  MPI_Allreduce(&mine, &f.scatter, 1, MPI_DOUBLE, MPI_MAX, comm);
  double when[2] = {f.load_average, static_cast<double>(f.probed_at)};
  MPI_Bcast(when, 2, MPI_DOUBLE, 0, comm);
  f.load_average = when[0];
  f.probed_at = static_cast<int64_t>(when[1]);
  double shared[25] = {f.put_latency_s, f.put_bandwidth_Bps, f.put_run_s, f.fence_s,  f.collective_s,
                       f.memcpy_Bps,    f.hash_Bps,          f.create_s,  f.rename_s, f.fsync_Bps};
  for (size_t i = 0; i < 4 && i < f.write.size(); ++i) {
    shared[10 + i] = f.write[i].seconds;
  }
  shared[14] = static_cast<double>(f.write.size());
  shared[15] = f.cores;
  shared[16] = f.copy_run_s;
  shared[17] = f.spread_run_s;
  shared[18] = f.fresh_Bps;
  for (size_t i = 0; i < 4 && i < f.rewrite.size(); ++i) {
    shared[19 + i] = f.rewrite[i].seconds;
  }
  shared[23] = static_cast<double>(f.rewrite.size());
  shared[24] = f.curve_writers;
  MPI_Bcast(shared, 25, MPI_DOUBLE, 0, comm);
  f.curve_writers = static_cast<int>(shared[24]);
  f.put_latency_s = shared[0];
  f.put_bandwidth_Bps = shared[1];
  f.put_run_s = shared[2];
  f.fence_s = shared[3];
  f.collective_s = shared[4];
  f.memcpy_Bps = shared[5];
  f.hash_Bps = shared[6];
  f.create_s = shared[7];
  f.rename_s = shared[8];
  f.fsync_Bps = shared[9];
  f.cores = static_cast<int>(shared[15]);
  f.copy_run_s = shared[16];
  f.spread_run_s = shared[17];
  f.fresh_Bps = shared[18];
  if (shared[14] == 4) {
    f.write.clear();
    for (size_t i = 0; i < 4; ++i) f.write.push_back({kWriteSizes[i], shared[10 + i]});
  }
  if (shared[23] == 4) {
    f.rewrite.clear();
    for (size_t i = 0; i < 4; ++i) f.rewrite.push_back({kWriteSizes[i], shared[19 + i]});
  }
  return f;
}

}  // namespace strata

namespace strata {

double job_collective_seconds(MPI_Comm comm) {
  // Seven in a row, the first two not counted (the communicator's first collectives set up).
  constexpr int kWarm = 2, kTimed = 5;
  uint64_t in = 1, out = 0;
  std::vector<double> t;
  for (int i = 0; i < kWarm + kTimed; ++i) {
    const double t0 = MPI_Wtime();
    check_mpi(MPI_Allreduce(&in, &out, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce");
    if (i >= kWarm) t.push_back(MPI_Wtime() - t0);
  }
  std::nth_element(t.begin(), t.begin() + kTimed / 2, t.end());
  double mine = t[kTimed / 2], slowest = 0;
  check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  return slowest;
}

}  // namespace strata
