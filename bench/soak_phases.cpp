// Soak driver: many consecutive small engine phases in one process, each written and read back
// through the public API (include/strata/strata.hpp) and verified byte for byte. Every SAMPLE
// phases every rank samples its resident memory (/proc/self/statm), its open file descriptors
// (/proc/self/fd) and the MPI windows alive in the process (counted by PMPI wrappers of the
// window constructors and MPI_Win_free below); rank 0 prints one JSON line per sample (the
// maxima over ranks) and a summary line. The run fails (exit 1 on every rank) when a value
// read back is wrong, when resident memory grows by more than TOLERANCE_KIB between the first
// and the last sample, or when descriptors or windows alive at the last sample exceed those of
// the first. bench/soak.py runs it and prints the table.
// usage: mpiexec -n K soak_phases PHASES SAMPLE DIR [TOLERANCE_KIB]
#include <dirent.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "strata/strata.hpp"

namespace {

long long windows_created = 0;
long long windows_freed = 0;

}  // namespace

// PMPI wrappers: the engine's windows (src/engine/move/window.cpp) resolve to these, which
// count and forward to the MPI library.
extern "C" {
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) ++windows_created;
  return rc;
}
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) ++windows_created;
  return rc;
}
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
  if (rc == MPI_SUCCESS) ++windows_created;
  return rc;
}
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS) ++windows_created;
  return rc;
}
int MPI_Win_free(MPI_Win* win) {
  const int rc = PMPI_Win_free(win);
  if (rc == MPI_SUCCESS) ++windows_freed;
  return rc;
}
}

namespace {

long long resident_kib() {
  long long pages_total = 0, pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  const int n = std::fscanf(f, "%lld %lld", &pages_total, &pages_resident);
  std::fclose(f);
  return n == 2 ? pages_resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

long long open_fds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  long long n = 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;  // the descriptor of the listing itself
}

// The value of global 8-byte element `i` in phase `phase`: differs between phases, so a
// read-back of a stale phase is caught.
uint64_t value(uint64_t phase, uint64_t i) { return (phase + 1) * 0x9E3779B97F4A7C15ULL ^ (i * 0xBF58476D1CE4E5B9ULL); }

struct Sample {
  long long phase, rss_kib, fds, windows_alive, windows_created;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 4) {
    if (rank == 0) std::fprintf(stderr, "usage: soak_phases PHASES SAMPLE DIR [TOLERANCE_KIB]\n");
    MPI_Finalize();
    return 2;
  }
  const long long phases = std::atoll(argv[1]);
  const long long every = std::atoll(argv[2]);
  const std::string path = std::string(argv[3]) + "/soak.dat";
  const long long tolerance_kib = argc > 4 ? std::atoll(argv[4]) : 1024;

  // Each rank owns two blocks of 3000 elements, interleaved with the other ranks' (so every
  // aggregator gathers from several ranks), through 16 KiB buffers: several rounds a phase.
  constexpr uint64_t kBlock = 3000;
  const uint64_t elements = 2 * kBlock * static_cast<uint64_t>(size);
  const std::vector<strata::Phase::Hint> hints = {{"cb_buffer_size", "16384"}, {"strata_buffers", "2"}};
  std::vector<uint64_t> out(2 * kBlock), in(2 * kBlock);
  std::vector<Sample> samples;
  long long bad_values = 0;
  int failed = 0;
  try {
    // A fresh engine every 10 phases: its communicators and windows are created and freed too.
    std::optional<strata::Engine> engine;
    for (long long phase = 1; phase <= phases; ++phase) {
      if (phase % 10 == 1) {
        engine.reset();
        engine.emplace(MPI_COMM_WORLD);
      }
      for (uint64_t b = 0; b < 2; ++b) {
        const uint64_t first = (b * static_cast<uint64_t>(size) + static_cast<uint64_t>(rank)) * kBlock;
        for (uint64_t i = 0; i < kBlock; ++i) out[b * kBlock + i] = value(static_cast<uint64_t>(phase), first + i);
      }
      for (const auto mode : {strata::PhaseMode::write, strata::PhaseMode::read}) {
        strata::Phase p(*engine, path, mode, hints);
        const int v = p.define_variable("soak", sizeof(uint64_t), {elements}, 0);
        for (uint64_t b = 0; b < 2; ++b) {
          const uint64_t first = (b * static_cast<uint64_t>(size) + static_cast<uint64_t>(rank)) * kBlock;
          auto* memory = (mode == strata::PhaseMode::write ? out.data() : in.data()) + b * kBlock;
          p.add_subarray(v, std::vector<uint64_t>{first}, std::vector<uint64_t>{kBlock}, memory);
        }
        p.plan();
        if (mode == strata::PhaseMode::write) {
          p.write();
        } else {
          p.read();
        }
        p.close();
      }
      for (size_t i = 0; i < in.size(); ++i) bad_values += in[i] != out[i] ? 1 : 0;
      if (phase % every == 0) {
        long long mine[4] = {resident_kib(), open_fds(), windows_created - windows_freed, windows_created};
        long long most[4];
        MPI_Allreduce(mine, most, 4, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        samples.push_back({phase, most[0], most[1], most[2], most[3]});
        if (rank == 0) {
          std::printf(
              "{\"phase\": %lld, \"rss_kib\": %lld, \"fds\": %lld, \"windows_alive\": %lld, "
              "\"windows_created\": %lld}\n",
              phase, most[0], most[1], most[2], most[3]);
          std::fflush(stdout);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak_phases: rank %d: %s\n", rank, e.what());
    failed = 1;
  }
  long long local[2] = {bad_values, failed}, total[2];
  MPI_Allreduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  bool ok = total[0] == 0 && total[1] == 0 && samples.size() >= 2;
  long long rss_growth = 0, fd_growth = 0, window_growth = 0;
  if (samples.size() >= 2) {
    rss_growth = samples.back().rss_kib - samples.front().rss_kib;
    fd_growth = samples.back().fds - samples.front().fds;
    window_growth = samples.back().windows_alive - samples.front().windows_alive;
    ok = ok && rss_growth <= tolerance_kib && fd_growth <= 0 && window_growth <= 0;
  }
  if (rank == 0) {
    std::printf(
        "{\"summary\": true, \"ranks\": %d, \"phases\": %lld, \"from_phase\": %lld, \"to_phase\": %lld, "
        "\"rss_growth_kib\": %lld, \"rss_tolerance_kib\": %lld, \"fd_growth\": %lld, "
        "\"window_growth\": %lld, \"bad_values\": %lld, \"failed_ranks\": %lld, \"ok\": %s}\n",
        size, phases, samples.empty() ? 0 : samples.front().phase, samples.empty() ? 0 : samples.back().phase,
        rss_growth, tolerance_kib, fd_growth, window_growth, total[0], total[1], ok ? "true" : "false");
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
