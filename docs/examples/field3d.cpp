// Two fields of a 3-D grid over a process grid, written in one engine phase, read back and
// checked: the C++ twin of examples/python/phase.py (the tests compare their files byte for byte).
//
//   temperature[z][y][x] (float64) = 0.5 * (its linear index)
//   pressure[z][y][x]    (float32) = (its linear index) % 1000 + 0.25
//
// The grid (default 20x12x10, slowest first) is split block-wise over the process grid
// MPI_Dims_create chooses (ranks in row-major order); a dimension need not divide evenly.
// In the file: temperature's row-major array, then pressure's.
//
//   mpirun -np 3 build/bin/field3d out.dat 20x12x10
#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "strata/strata.hpp"

namespace {

double temperature(uint64_t i) { return 0.5 * static_cast<double>(i); }
float pressure(uint64_t i) { return static_cast<float>(i % 1000) + 0.25f; }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string path = argc > 1 ? argv[1] : "field3d.dat";
  std::array<uint64_t, 3> shape = {20, 12, 10};
  if (argc > 2) {
    unsigned long long z = 0, y = 0, x = 0;
    if (std::sscanf(argv[2], "%llux%llux%llu", &z, &y, &x) != 3 || z == 0 || y == 0 || x == 0) {
      if (rank == 0) std::fprintf(stderr, "field3d: shape \"%s\" is not ZxYxX\n", argv[2]);
      MPI_Finalize();
      return 2;
    }
    shape = {z, y, x};
  }

  // This rank's block: coordinates in the process grid, then an even split of each dimension.
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, 3, dims);
  const int coord[3] = {rank / (dims[1] * dims[2]), rank / dims[2] % dims[1], rank % dims[2]};
  std::vector<uint64_t> start(3), count(3);
  for (int a = 0; a < 3; ++a) {
    start[a] = shape[a] * coord[a] / dims[a];
    count[a] = shape[a] * (coord[a] + 1) / dims[a] - start[a];
  }
  const uint64_t n = count[0] * count[1] * count[2];
  std::vector<double> t(n);
  std::vector<float> p(n);
  uint64_t k = 0;
  for (uint64_t z = start[0]; z < start[0] + count[0]; ++z) {
    for (uint64_t y = start[1]; y < start[1] + count[1]; ++y) {
      for (uint64_t x = start[2]; x < start[2] + count[2]; ++x, ++k) {
        const uint64_t i = (z * shape[1] + y) * shape[2] + x;
        t[k] = temperature(i);
        p[k] = pressure(i);
      }
    }
  }

  int status = 0;
  try {
    strata::Engine engine(MPI_COMM_WORLD);
    const std::vector<uint64_t> global(shape.begin(), shape.end());
    const uint64_t t_bytes = shape[0] * shape[1] * shape[2] * sizeof(double);
    {
      strata::Phase phase(engine, path, strata::PhaseMode::write);
      phase.add_subarray(phase.define_variable("temperature", sizeof(double), global, 0), start, count, t.data());
      phase.add_subarray(phase.define_variable("pressure", sizeof(float), global, t_bytes), start, count, p.data());
      phase.plan();
      phase.write();
      strata::PhaseStats max;
      phase.close(&max);
      if (rank == 0) {
        std::printf("wrote %llu bytes of a %llux%llux%llu grid on %dx%dx%d ranks, strategy %s\n",
                    static_cast<unsigned long long>(max.bytes), static_cast<unsigned long long>(shape[0]),
                    static_cast<unsigned long long>(shape[1]), static_cast<unsigned long long>(shape[2]), dims[0],
                    dims[1], dims[2], max.strategy.c_str());
      }
    }
    std::vector<double> t_back(n);
    std::vector<float> p_back(n);
    strata::Phase phase(engine, path, strata::PhaseMode::read);
    phase.add_subarray(phase.define_variable("temperature", sizeof(double), global, 0), start, count, t_back.data());
    phase.add_subarray(phase.define_variable("pressure", sizeof(float), global, t_bytes), start, count, p_back.data());
    phase.plan();
    phase.read();
    phase.close();
    int bad = t_back != t || p_back != p ? 1 : 0, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) std::printf(any_bad ? "read back: WRONG values\n" : "read back and checked\n");
    status = any_bad ? 3 : 0;
  } catch (const strata::Error& e) {
    if (rank == 0) std::fprintf(stderr, "field3d: %s\n", e.what());
    status = e.exit_status();
  }
  MPI_Finalize();
  return status;
}
