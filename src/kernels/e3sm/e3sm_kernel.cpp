#include "kernels/e3sm/e3sm_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/error.hpp"
#include "common/units.hpp"
#include "kernels/e3sm/pio_map.hpp"
#include "kernels/e3sm/synthetic_maps.hpp"

namespace strata {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string numbered(const char* prefix, uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%03llu", prefix, static_cast<unsigned long long>(i));
  return buf;
}

// Adds `n` variables of `type` on `map` (shape {1} + map shape), and this rank's blocks of each.
void add_mapped(Decomposition& d, const PioMap& map, uint64_t n, ElemType type, const char* prefix, int rank,
                int ranks) {
  std::vector<uint64_t> shape{1};
  for (uint64_t s : map.shape()) shape.push_back(s);
  const std::vector<Block> blocks = pio_map_blocks(map, 0, rank, ranks, 1);
  const int first = static_cast<int>(d.variables.size());
  for (uint64_t k = 0; k < n; ++k) {
    const int var = static_cast<int>(d.variables.size());
    d.variables.push_back({numbered(prefix, d.variables.size()), type, shape});
    d.blocks_like.resize(d.variables.size(), -1);
    d.blocks_like.back() = k > 0 ? first : -1;  // the map's variables share its blocks
    for (Block b : blocks) {
      b.var = var;
      d.blocks.push_back(std::move(b));
    }
  }
}

// Small fixed variables (coordinates, coefficients) written whole by rank 0.
void add_fixed(Decomposition& d, uint64_t n, uint64_t lev, int rank) {
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t len = k % 3 == 0 ? lev : k % 3 == 1 ? lev + 1 : 2;
    const int var = static_cast<int>(d.variables.size());
    d.variables.push_back({numbered("fixed", d.variables.size()), ElemType::f64, {len}});
    d.blocks_like.resize(d.variables.size(), -1);
    if (rank == 0) d.blocks.push_back({var, {0}, {len}});
  }
}

}  // namespace

void E3smKernel::add_options(OptionSet& o) const {
  o.section("e3sm options");
  o.add("case", "f|g", "F case (atmosphere: ~400 variables) or G case (ocean: ~50 variables on a mesh)", "f");
  o.add("vars", "N", "number of variables (F: 400, G: 50)");
  o.add("ncol", "N", "columns (F) or mesh cells (G)", "1024");
  o.add("lev", "N", "vertical levels (F: 72, G: 100)");
  o.add("max-run", "N", "longest run of neighbouring columns one rank owns (F: 16, G: 4)");
  o.add("maps", "FILE,FILE",
        "real decomposition maps instead of the synthetic case: PIO's piodecomp*.dat, or E3SM-IO's "
        "FILE.nc from its dat2nc (each of its decompositions a map)");
  o.add("map-vars", "N,N", "with --maps: how many variables on each map (default 1 each)");
}

KernelSetup E3smKernel::build(const OptionSet& o, int rank, int ranks) const {
  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  const uint64_t seed = parse_count(o.get("seed"), "--seed");
  if (o.given("maps")) {
    const auto files = split_list(o.get("maps"));
    if (files.empty()) throw_usage("--maps needs at least one map file");
    // A PIO .dat is one map; an E3SM-IO .nc holds several (its decompositions D1, D2, ...).
    auto check_counts = [&](size_t maps) {
      const size_t words = split_list(o.get("map-vars")).size();
      if (o.given("map-vars") && words != maps) {
        throw_usage("--map-vars lists " + std::to_string(words) + " counts for " + std::to_string(maps) +
                    " maps (give one count per map; a .nc file holds several)");
      }
    };
    if (std::none_of(files.begin(), files.end(), is_e3sm_map_file)) check_counts(files.size());  // before reading
    std::vector<std::pair<std::string, PioMap>> loaded;
    for (const std::string& file : files) {
      if (!is_e3sm_map_file(file)) {
        loaded.emplace_back(file, read_pio_map(file));
        continue;
      }
      std::vector<PioMap> all = read_e3sm_maps(file);
      for (size_t k = 0; k < all.size(); ++k)
        loaded.emplace_back(file + "#D" + std::to_string(k + 1), std::move(all[k]));
    }
    check_counts(loaded.size());
    std::vector<uint64_t> counts(loaded.size(), 1);
    if (o.given("map-vars")) {
      const auto words = split_list(o.get("map-vars"));
      for (size_t i = 0; i < words.size(); ++i) counts[i] = parse_count(words[i], "--map-vars");
    }
    nlohmann::json maps = nlohmann::json::array();
    for (size_t i = 0; i < loaded.size(); ++i) {
      const PioMap& map = loaded[i].second;
      add_mapped(d, map, counts[i], ElemType::f32, "map", rank, ranks);
      maps.push_back({{"file", loaded[i].first}, {"npes", map.npes}, {"dims", map.dims}, {"vars", counts[i]}});
    }
    setup.params = {{"case", "maps"}, {"maps", maps}};
    return setup;
  }
  const std::string which = o.get("case");
  if (which != "f" && which != "g") throw_usage("--case must be f or g (got \"" + which + "\")");
  const bool f = which == "f";
  const uint64_t vars = o.given("vars") ? positive_count_option(o, "vars") : (f ? 400 : 50);
  const uint64_t ncol = positive_count_option(o, "ncol");
  const uint64_t lev = o.given("lev") ? positive_count_option(o, "lev") : (f ? 72 : 100);
  const uint64_t max_run = o.given("max-run") ? positive_count_option(o, "max-run") : (f ? 16 : 4);
  if (vars < 4) throw_usage("--vars must be at least 4 (fixed, 2-D and 3-D variables)");
  ColumnMapSpec spec{ncol, 0, ranks, max_run, seed, false, false};
  uint64_t n_fixed = 0, n_2d = 0, n_3d = 0;
  if (f) {
    n_3d = static_cast<uint64_t>(std::llround(static_cast<double>(vars) * 63.0 / 400.0));
    n_fixed = std::max<uint64_t>(1, vars / 25);
    n_2d = vars - n_3d - n_fixed;
    ColumnMapSpec d1 = spec;
    d1.seed = seed * 3 + 1;
    d1.shuffled = true;
    ColumnMapSpec d3 = spec;
    d3.levels = lev;
    add_fixed(d, n_fixed, lev, rank);
    add_mapped(d, column_map(d1), 1, ElemType::f32, "d1_", rank, ranks);
    add_mapped(d, column_map(spec), n_2d - 1, ElemType::f32, "d2_", rank, ranks);
    add_mapped(d, column_map(d3), n_3d, ElemType::f32, "d3_", rank, ranks);
  } else {
    n_fixed = std::min<uint64_t>(3, vars / 10 + 1);
    n_2d = std::max<uint64_t>(1, vars / 4);
    n_3d = vars - n_fixed - n_2d;
    spec.shuffled = true;
    ColumnMapSpec cells3 = spec;
    cells3.levels = lev;
    cells3.levels_fastest = true;
    add_fixed(d, n_fixed, lev, rank);
    add_mapped(d, column_map(spec), n_2d, ElemType::f64, "cell", rank, ranks);
    add_mapped(d, column_map(cells3), n_3d, ElemType::f64, "col", rank, ranks);
  }
  setup.params = {{"case", which},      {"vars", vars},          {"ncol", ncol},    {"lev", lev},
                  {"max_run", max_run}, {"fixed_vars", n_fixed}, {"vars_2d", n_2d}, {"vars_3d", n_3d}};
  return setup;
}

std::vector<KernelTest> E3smKernel::tests() const {
  // Every multi-dataset strategy (the collective backends and their options), verified on read-back.
  const TestBackends strategies = {.collective_only = true, .with_options = true};
  return {
      {.name = "multidataset.f.{BACKEND}",
       .args = {"--case", "f", "--vars", "24", "--ncol", "96", "--lev", "6", "--seed", "3"},
       .ranks = {1, 3, 4},
       .backends = strategies},
      {.name = "multidataset.g.{BACKEND}",
       .args = {"--case", "g", "--vars", "12", "--ncol", "64", "--lev", "10", "--seed", "3"},
       .ranks = {3},
       .backends = strategies},
      {.name = "multidataset.map.{BACKEND}",
       .args = {"--maps", "{DATA}/pio_4ranks.dat", "--map-vars", "3", "--seed", "3"},
       .ranks = {3, 4},
       .backends = strategies},
      // A PIO map with interior holes (elements 5 and 11), a rank that owns nothing, a rank whose
      // elements run backwards and trailing elements 53-60 that no rank owns: every file spans the
      // whole array, the holes zero.
      identical_test(name(), 5, {"--maps", "{DATA}/pio_holes_5ranks.dat", "--map-vars", "2", "--seed", "9"}),
  };
}

}  // namespace strata
