#include "kernels/array1d/array1d_kernel.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "common/units.hpp"

namespace strata {

namespace {

constexpr uint64_t kElem = 4;  // int32, as the paper's "25K integers per process (100 KB)"

}  // namespace

std::vector<uint64_t> array1d_counts(const std::string& dist, uint64_t size_elems, double stddev_elems, uint64_t seed,
                                     int ranks) {
  std::vector<uint64_t> counts(static_cast<size_t>(ranks), size_elems);
  SeededRandom g(seed ^ 0xA5A5A5A5DEADBEEFULL);
  if (dist == "uniform") return counts;
  for (auto& c : counts) {
    if (dist == "random") {
      c = g.next() % (size_elems + 1);
    } else {  // normal, Box-Muller
      double u1 = g.unit(), u2 = g.unit();
      double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
      double x = std::round(static_cast<double>(size_elems) + stddev_elems * z);
      c = static_cast<uint64_t>(std::clamp(x, 0.0, 2.0 * static_cast<double>(size_elems)));
    }
  }
  return counts;
}

void Array1dKernel::add_options(OptionSet& o) const {
  o.section("array1d options (aggregation paper, section 5.3)");
  o.add("size", "BYTES", "bytes per rank: exact (uniform), maximum (random) or mean (normal)", "100K");
  o.add("dist", "uniform|random|normal", "distribution of the per-rank sizes", "uniform");
  o.add("stddev", "BYTES", "standard deviation for --dist normal (default: size/4)");
}

KernelSetup Array1dKernel::build(const OptionSet& o, int rank, int ranks) const {
  const uint64_t size = positive_size_option(o, "size");
  const std::string dist = o.get("dist");
  if (dist != "uniform" && dist != "random" && dist != "normal") {
    throw_usage("--dist must be uniform, random or normal (got \"" + dist + "\")");
  }
  if (size % kElem != 0)
    throw_usage("--size must be a multiple of 4 bytes (int32 elements), got " + std::to_string(size));
  double stddev = static_cast<double>(size) / 4.0;
  if (o.given("stddev")) {
    if (dist != "normal") throw_usage("--stddev applies only to --dist normal");
    stddev = static_cast<double>(parse_size(o.get("stddev"), "--stddev"));
  }
  const uint64_t seed = parse_count(o.get("seed"), "--seed");
  const auto counts = array1d_counts(dist, size / kElem, stddev / kElem, seed, ranks);
  uint64_t total = 0, start = 0;
  for (int r = 0; r < ranks; ++r) {
    if (r == rank) start = total;
    total += counts[static_cast<size_t>(r)];
  }
  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  if (total == 0) throw_usage("every rank drew an empty chunk; use a larger --size");
  d.variables.push_back({"array", ElemType::i32, {total}});
  const uint64_t mine = counts[static_cast<size_t>(rank)];
  if (mine > 0) d.blocks.push_back({0, {start}, {mine}});
  setup.params = {{"size", size}, {"dist", dist}, {"total_bytes", total * kElem}};
  if (dist == "normal") setup.params["stddev"] = stddev;
  return setup;
}

std::vector<KernelTest> Array1dKernel::tests() const {
  std::vector<KernelTest> t = matrix_tests(name(), {"--dist", "random", "--size", "48K", "--seed", "7"});
  t.push_back(identical_test(name(), 5, {"--dist", "random", "--size", "40K", "--seed", "11"}));
  t.push_back(identical_test(name(), 8, {"--dist", "normal", "--size", "8K", "--seed", "3"}));
  t.push_back(identical_test(name(), 7, {"--dist", "random", "--size", "16", "--seed", "5"}));
  return t;
}

}  // namespace strata
