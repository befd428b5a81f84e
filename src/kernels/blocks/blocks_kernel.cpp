#include "kernels/blocks/blocks_kernel.hpp"

#include <algorithm>
#include <numeric>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "common/units.hpp"

namespace strata {

namespace {

// Sorted cut positions splitting [0, n) into `parts` non-empty pieces.
std::vector<uint64_t> cuts(uint64_t n, uint64_t parts, SeededRandom& g) {
  parts = std::min(parts, n);
  std::vector<uint64_t> inner(n - 1);
  std::iota(inner.begin(), inner.end(), 1);
  g.shuffle(inner);
  std::vector<uint64_t> c(inner.begin(), inner.begin() + static_cast<long>(parts - 1));
  c.push_back(0);
  c.push_back(n);
  std::sort(c.begin(), c.end());
  return c;
}

}  // namespace

void BlocksKernel::add_options(OptionSet& o) const {
  o.section("blocks options");
  o.add("vars", "N", "number of variables", "3");
  o.add("shape", "AxBxC", "global shape of every variable", "24x20x16");
  o.add("tiles-per-rank", "K", "about how many tiles each rank holds", "3");
  add_memory_order_option(o, "tiles");
  o.add("transfer-size", "BYTES", "largest request per I/O call (0: one call)", "0");
}

KernelSetup BlocksKernel::build(const OptionSet& o, int rank, int ranks) const {
  const uint64_t nvars = positive_count_option(o, "vars");
  const std::vector<uint64_t> shape = parse_shape(o.get("shape"), "--shape", 1, 6);
  const uint64_t per_rank = positive_count_option(o, "tiles-per-rank");
  const std::string order = memory_order_option(o);
  const uint64_t seed = parse_count(o.get("seed"), "--seed");
  static const ElemType types[] = {ElemType::f64, ElemType::i32, ElemType::f32,
                                   ElemType::i64, ElemType::u8,  ElemType::u64};

  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  d.transfer_bytes = parse_size(o.get("transfer-size"), "--transfer-size");
  if (d.transfer_bytes % 8 != 0) throw_usage("--transfer-size must be a multiple of 8 bytes");
  SeededRandom g(seed * 0x2545F4914F6CDD1DULL + 17);
  const uint64_t want_tiles = per_rank * static_cast<uint64_t>(ranks);
  for (uint64_t v = 0; v < nvars; ++v) {
    d.variables.push_back({"var" + std::to_string(v), types[v % 6], shape});
    // Parts per dimension: spread want_tiles over the dimensions, at random.
    std::vector<uint64_t> parts(shape.size(), 1);
    uint64_t tiles = 1;
    for (int guard = 0; tiles < want_tiles && guard < 1000; ++guard) {
      size_t k = g.below(shape.size());
      if (parts[k] < shape[k]) {
        tiles = tiles / parts[k] * (parts[k] + 1);
        ++parts[k];
      }
    }
    std::vector<std::vector<uint64_t>> c;
    for (size_t k = 0; k < shape.size(); ++k) c.push_back(cuts(shape[k], parts[k], g));
    // Tile owners: a shuffled round-robin.
    std::vector<int> owner(tiles);
    for (uint64_t t = 0; t < tiles; ++t) owner[t] = static_cast<int>(t % static_cast<uint64_t>(ranks));
    g.shuffle(owner);
    for (uint64_t t = 0; t < tiles; ++t) {
      if (owner[t] != rank) continue;
      Block b;
      b.var = static_cast<int>(v);
      uint64_t rest = t;
      for (size_t k = shape.size(); k-- > 0;) {
        const uint64_t i = rest % parts[k];
        rest /= parts[k];
        b.start.insert(b.start.begin(), c[k][i]);
        b.count.insert(b.count.begin(), c[k][i + 1] - c[k][i]);
      }
      d.blocks.push_back(b);
    }
  }
  apply_memory_order(order, d.blocks, seed, rank, 0x9E3779B97F4A7C15ULL);
  setup.params = {{"vars", nvars},
                  {"shape", o.get("shape")},
                  {"tiles_per_rank", per_rank},
                  {"memory_order", order},
                  {"transfer_size", d.transfer_bytes}};
  return setup;
}

std::vector<KernelTest> BlocksKernel::tests() const {
  std::vector<KernelTest> t =
      matrix_tests(name(), {"--vars", "3", "--shape", "12x10x8", "--tiles-per-rank", "3", "--seed", "7"});
  t.push_back(identical_test(name(), 4, {"--vars", "3", "--shape", "10x9x7", "--tiles-per-rank", "3", "--seed", "21"}));
  t.push_back(identical_test(
      name(), 3, {"--vars", "2", "--shape", "33x17", "--tiles-per-rank", "4", "--transfer-size", "72", "--seed", "8"}));
  // Random N-D tiles split into transfer steps: the step and box paths of every backend.
  t.push_back(
      {.name = "steps.blocks.{BACKEND}",
       .args = {"--vars", "2", "--shape", "9x7x5", "--tiles-per-rank", "2", "--transfer-size", "264", "--seed", "{NP}"},
       .ranks = {3, 8}});
  // One variable in transfer steps, collective and independent, on the backends with --independent
  // (pnetcdf: a blocking put/get_vara_all per box, zero-sized calls for the ranks with fewer boxes
  // in a step; more boxes than that: posted and waited for).
  for (const std::string mode : {"collective", "independent"}) {
    for (const std::string transfer : {"64", "1000"}) {
      KernelTest one{.name = "steps.one-variable.{BACKEND}." + mode + ".t" + transfer,
                     .args = {"--vars", "1", "--shape", "9x7x5", "--tiles-per-rank", "2", "--transfer-size", transfer,
                              "--seed", "{NP}"},
                     .ranks = {3, 8},
                     .backends = {.option = "independent"}};
      if (mode == "independent") one.args.push_back("--independent");
      t.push_back(one);
    }
  }
  return t;
}

}  // namespace strata
