#include "kernels/e3sm/synthetic_maps.hpp"

#include <algorithm>
#include <utility>

#include "common/seeded_random.hpp"

namespace strata {

PioMap column_map(const ColumnMapSpec& s) {
  SeededRandom g(s.seed * 0xD1B54A32D192ED03ULL + 0x51ED27);
  // Runs of columns, each owned by a random rank.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> runs(static_cast<size_t>(s.npes));
  for (uint64_t c = 0; c < s.columns;) {
    const uint64_t len = std::min(s.columns - c, 1 + g.below(std::max<uint64_t>(s.max_run, 1)));
    runs[g.below(static_cast<uint64_t>(s.npes))].push_back({c, len});
    c += len;
  }
  PioMap map;
  map.npes = s.npes;
  if (s.levels == 0) {
    map.dims = {s.columns};
  } else if (s.levels_fastest) {
    map.dims = {s.levels, s.columns};
  } else {
    map.dims = {s.columns, s.levels};
  }
  map.offsets.resize(static_cast<size_t>(s.npes));
  for (int r = 0; r < s.npes; ++r) {
    auto& mine = runs[static_cast<size_t>(r)];
    if (s.shuffled) g.shuffle(mine);
    auto& out = map.offsets[static_cast<size_t>(r)];
    if (s.levels == 0) {
      for (const auto& [c, n] : mine)
        for (uint64_t k = 0; k < n; ++k) out.push_back(c + k + 1);
    } else if (s.levels_fastest) {
      for (const auto& [c, n] : mine)
        for (uint64_t k = 0; k < n; ++k)
          for (uint64_t l = 0; l < s.levels; ++l) out.push_back((c + k) * s.levels + l + 1);
    } else {
      for (uint64_t l = 0; l < s.levels; ++l)
        for (const auto& [c, n] : mine)
          for (uint64_t k = 0; k < n; ++k) out.push_back(l * s.columns + c + k + 1);
    }
  }
  return map;
}

}  // namespace strata
