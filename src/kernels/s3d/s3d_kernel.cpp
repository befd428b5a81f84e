#include "kernels/s3d/s3d_kernel.hpp"

#include <algorithm>
#include <functional>

#include "common/error.hpp"

namespace strata {

namespace {
constexpr uint64_t kSpecies = 11;  // the original's n_spec (nsc + 1 components are written)
constexpr uint64_t kVelocity = 3;
}  // namespace

std::array<uint64_t, 3> balanced_dims(uint64_t ranks) {
  std::vector<uint64_t> primes;
  for (uint64_t p = 2; p * p <= ranks; ++p) {
    while (ranks % p == 0) {
      primes.push_back(p);
      ranks /= p;
    }
  }
  if (ranks > 1) primes.push_back(ranks);
  std::array<uint64_t, 3> dims = {1, 1, 1};
  // Largest factors first, each onto the currently smallest dimension.
  std::sort(primes.begin(), primes.end(), std::greater<>());
  for (uint64_t p : primes) *std::min_element(dims.begin(), dims.end()) *= p;
  std::sort(dims.begin(), dims.end(), std::greater<>());
  return dims;
}

void S3dKernel::add_options(OptionSet& o) const {
  o.section("s3d options (S3D-IO)");
  o.add("grid", "XxYxZ", "global grid points along X, Y, Z", "48x48x48");
  o.add("procs", "PXxPYxPZ", "ranks along X, Y, Z; each must divide its grid dimension",
        "balanced, as MPI_Dims_create");
  o.add("steps", "N", "simulation steps", "5");
  o.add("interval", "K", "a checkpoint (a new file) every K steps", "1");
}

KernelSetup S3dKernel::build(const OptionSet& o, int rank, int ranks) const {
  const std::vector<uint64_t> grid = count_list_option(o, "grid", 3);
  std::array<uint64_t, 3> procs{};
  if (o.given("procs")) {
    const auto p = count_list_option(o, "procs", 3);
    std::copy(p.begin(), p.end(), procs.begin());
  } else {
    procs = balanced_dims(static_cast<uint64_t>(ranks));
  }
  if (procs[0] * procs[1] * procs[2] != static_cast<uint64_t>(ranks)) {
    throw_usage("--procs " + std::to_string(procs[0]) + "," + std::to_string(procs[1]) + "," +
                std::to_string(procs[2]) + " makes " + std::to_string(procs[0] * procs[1] * procs[2]) +
                " ranks, but the run has " + std::to_string(ranks));
  }
  static const char* axis[3] = {"X", "Y", "Z"};
  for (int a = 0; a < 3; ++a) {
    if (grid[static_cast<size_t>(a)] % procs[static_cast<size_t>(a)] != 0) {
      throw_usage("--grid " + std::string(axis[a]) + " = " + std::to_string(grid[static_cast<size_t>(a)]) +
                  " is not divisible by " + std::to_string(procs[static_cast<size_t>(a)]) + " ranks along " + axis[a] +
                  " (choose --grid or --procs so that it is, as S3D requires)");
    }
  }
  const uint64_t steps = positive_count_option(o, "steps");
  const uint64_t interval = positive_count_option(o, "interval");
  if (interval > steps) {
    throw_usage("--interval " + std::to_string(interval) + " is longer than --steps " + std::to_string(steps) +
                ": the run would write no checkpoint");
  }

  const uint64_t r = static_cast<uint64_t>(rank);
  const uint64_t coord[3] = {r % procs[0], (r / procs[0]) % procs[1], r / (procs[0] * procs[1])};
  uint64_t local[3], start[3];
  for (size_t a = 0; a < 3; ++a) {
    local[a] = grid[a] / procs[a];
    start[a] = coord[a] * local[a];
  }

  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  // Slowest dimension first: [component][Z][Y][X].
  const std::vector<uint64_t> space = {grid[2], grid[1], grid[0]};
  const std::vector<uint64_t> space_start = {start[2], start[1], start[0]};
  const std::vector<uint64_t> space_count = {local[2], local[1], local[0]};
  auto add = [&](const std::string& name, uint64_t components) {
    std::vector<uint64_t> shape = space, first = space_start, count = space_count;
    if (components > 0) {
      shape.insert(shape.begin(), components);
      first.insert(first.begin(), 0);
      count.insert(count.begin(), components);
    }
    d.blocks.push_back({static_cast<int>(d.variables.size()), first, count});
    d.variables.push_back({name, ElemType::f64, shape, {}});
  };
  add("yspecies", kSpecies);
  add("u", kVelocity);
  add("pressure", 0);
  add("temp", 0);

  for (uint64_t s = interval; s <= steps; s += interval) setup.checkpoint_steps.push_back(s);
  setup.params = {{"grid", grid},
                  {"procs", procs},
                  {"steps", steps},
                  {"interval", interval},
                  {"checkpoints", setup.checkpoint_steps.size()},
                  {"bytes_per_checkpoint", d.global_bytes()}};
  return setup;
}

std::vector<KernelTest> S3dKernel::tests() const {
  // Two checkpoint files per run, on every backend.
  return {{.name = "app.s3d.{BACKEND}",
           .args = {"--grid", "12x12x12", "--steps", "2", "--interval", "1", "--seed", "5"},
           .ranks = {1, 3, 4},
           .env = {"STRATA_RANKS_PER_NODE=2"}}};
}

}  // namespace strata
