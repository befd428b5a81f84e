// The engine's fixed cost per phase: PHASES consecutive phases on one Engine, each planned,
// written and closed (the default commit), of two kinds — empty (no rank declares a byte) and
// one 4 KiB extent per rank — with every phase's wall time (the slowest rank's) and the
// collectives it made. Rank 0 prints one JSON object: the median, the minimum and the
// collective count per kind. bench/engine_speed.py runs it at several rank counts.
// usage: mpiexec -n K phase_fixed_cost PHASES DIR
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "strata/strata.hpp"

namespace {

struct Kind {
  const char* name;
  uint64_t bytes_per_rank;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: phase_fixed_cost PHASES DIR\n");
    MPI_Finalize();
    return 2;
  }
  const int phases = std::max(1, std::atoi(argv[1]));
  const std::string dir = argv[2];
  int status = 0;
  try {
    strata::Engine engine(MPI_COMM_WORLD);
    std::vector<char> data(4096, static_cast<char>('a' + rank % 26));
    std::string json = "{\"ranks\": " + std::to_string(size) + ", \"phases\": " + std::to_string(phases);
    for (const Kind k : {Kind{"empty", 0}, Kind{"4KiB_per_rank", 4096}}) {
      const std::string path = dir + "/fixed-cost-" + k.name + ".dat";
      std::vector<double> times;
      uint64_t collectives = 0;
      std::string strategy;
      for (int p = 0; p < phases + 1; ++p) {  // the first phase (window, machine figures) is not counted
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        strata::Phase phase(engine, path, strata::PhaseMode::write);
        const uint64_t total = std::max<uint64_t>(k.bytes_per_rank * static_cast<uint64_t>(size), 1);
        const int v = phase.define_variable("data", 1, {total}, 0);
        if (k.bytes_per_rank > 0)
          phase.add_extent(v, static_cast<uint64_t>(rank) * k.bytes_per_rank, k.bytes_per_rank, data.data());
        phase.plan();
        phase.write();
        strata::PhaseStats max;
        phase.close(&max);
        double mine = MPI_Wtime() - t0, worst = 0;
        MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (p > 0) times.push_back(worst);
        collectives = max.collectives;
        strategy = max.strategy;
      }
      std::sort(times.begin(), times.end());
      char line[256];
      std::snprintf(line, sizeof line,
                    ", \"%s\": {\"median_s\": %.9f, \"min_s\": %.9f, \"collectives\": %llu, \"strategy\": \"%s\"}",
                    k.name, times[times.size() / 2], times.front(), static_cast<unsigned long long>(collectives),
                    strategy.c_str());
      json += line;
    }
    if (rank == 0) std::printf("%s}\n", json.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "phase_fixed_cost: rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
