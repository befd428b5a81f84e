#include "kernels/noncontig3d/noncontig3d_kernel.hpp"

#include <algorithm>
#include <cstdio>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "common/units.hpp"

namespace strata {

void Noncontig3dKernel::add_options(OptionSet& o) const {
  o.section("noncontig3d options");
  o.add("datasets", "D", "number of datasets", "16");
  o.add("grid", "XxYxZ", "shape of every dataset (multiples of --block)", "32x32x32");
  o.add("block", "B", "edge of the cubic blocks", "8");
  o.add("type", "TYPE", "element type: uint8, int32, int64, uint64, float32, float64", "float32");
  add_memory_order_option(o, "blocks");
}

KernelSetup Noncontig3dKernel::build(const OptionSet& o, int rank, int ranks) const {
  const uint64_t datasets = positive_count_option(o, "datasets");
  const std::vector<uint64_t> grid = parse_shape(o.get("grid"), "--grid", 3, 3);
  const uint64_t edge = positive_count_option(o, "block");
  const ElemType type = elem_type_from_name(o.get("type"));
  const std::string order = memory_order_option(o);
  for (uint64_t g : grid) {
    if (g % edge != 0) {
      throw_usage("--grid " + o.get("grid") + " is not a multiple of --block " + std::to_string(edge) +
                  " in every dimension");
    }
  }
  const uint64_t seed = parse_count(o.get("seed"), "--seed");
  const uint64_t per[3] = {grid[0] / edge, grid[1] / edge, grid[2] / edge};
  const uint64_t cubes = per[0] * per[1] * per[2];
  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  SeededRandom g(seed * 0x9FB21C651E98DF25ULL + 3);
  for (uint64_t v = 0; v < datasets; ++v) {
    char name[32];
    std::snprintf(name, sizeof name, "dataset%04llu", static_cast<unsigned long long>(v));
    d.variables.push_back({name, type, grid});
    for (uint64_t c = 0; c < cubes; ++c) {
      const int owner = static_cast<int>(g.below(static_cast<uint64_t>(ranks)));
      if (owner != rank) continue;
      const uint64_t i = c / (per[1] * per[2]), j = c / per[2] % per[1], k = c % per[2];
      d.blocks.push_back({static_cast<int>(v), {i * edge, j * edge, k * edge}, {edge, edge, edge}});
    }
  }
  apply_memory_order(order, d.blocks, seed, rank, 0xC2B2AE3D27D4EB4FULL);
  setup.params = {{"datasets", datasets},    {"grid", o.get("grid")}, {"block", edge},
                  {"type", elem_name(type)}, {"memory_order", order}, {"blocks_per_dataset", cubes}};
  return setup;
}

std::vector<KernelTest> Noncontig3dKernel::tests() const {
  return {{.name = "multidataset.n3d.{BACKEND}",
           .args = {"--datasets", "4", "--grid", "16x16x8", "--block", "4", "--seed", "3"},
           .ranks = {1, 3, 4},
           .backends = {.collective_only = true, .with_options = true}}};
}

}  // namespace strata
