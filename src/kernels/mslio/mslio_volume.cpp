#include "kernels/mslio/mslio_volume.hpp"

#include <cmath>

namespace strata::mslio {

uint64_t local_problems(unsigned ccross) { return uint64_t{1} << (2 * ccross); }

uint64_t points_per_file(uint64_t s) {
  const double S = static_cast<double>(s);
  return static_cast<uint64_t>(std::ceil((0.443 * S * S + 1.32 * S + 1.0) / 2.0));
}

uint64_t values_per_file(uint64_t s, unsigned dims) { return dims * points_per_file(s); }

uint64_t bytes_per_file(uint64_t s, unsigned dims) { return kValueBytes * values_per_file(s, dims); }

Volume volume(unsigned ccross, uint64_t s, unsigned dims) {
  Volume v;
  v.files = local_problems(ccross);
  v.bytes = v.files * bytes_per_file(s, dims);
  return v;
}

const std::vector<TableOneCell>& table_one() {
  static const std::vector<TableOneCell> cells = {
      {3, 64, 1.7, 64},        {3, 128, 6.6, 64},      {4, 32, 1.8, 256},      {4, 64, 6.8, 256},
      {4, 128, 26.6, 256},     {4, 1024, 1668.9, 256}, {5, 32, 7.1, 1024},     {5, 64, 27.2, 1024},
      {5, 128, 106.4, 1024},   {5, 512, 1673.8, 1024}, {6, 32, 28.5, 4096},    {6, 64, 108.9, 4096},
      {6, 128, 425.8, 4096},   {6, 256, 1683.5, 4096}, {7, 32, 113.9, 16384},  {7, 64, 435.7, 16384},
      {7, 128, 1703.2, 16384}, {8, 32, 455.8, 65536},  {8, 64, 1742.8, 65536}, {8, 128, 6815.7, 65536},
      {9, 32, 1823.2, 262144},
  };
  return cells;
}

}  // namespace strata::mslio
