// Measured figures of the machine the engine's strategy model needs (temporary: the probe's
// branch replaces this file).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

struct WriteFigure {
  uint64_t request_bytes;
  double seconds;
};

struct IoFigures {
  bool measured = false;
  int probe_ranks = 2;
  double put_latency_s = 3e-6;
  double put_bandwidth_Bps = 4e9;
  double put_run_s = 0.2e-6;
  double fence_s = 20e-6;
  double collective_s = 10e-6;
  double memcpy_Bps = 5e9;
  double hash_Bps = 8e9;
  double create_s = 50e-6;
  double rename_s = 30e-6;
  double fsync_Bps = 0;
  std::vector<WriteFigure> write = {{4096, 4e-6}, {65536, 25e-6}, {1 << 20, 350e-6}, {4 << 20, 1.4e-3}};
  double write_s(uint64_t bytes) const;
  double writes_s(uint64_t n, uint64_t bytes) const;
  double fence_at(int ranks) const;
  double collective_at(int ranks) const;
};

}  // namespace strata
