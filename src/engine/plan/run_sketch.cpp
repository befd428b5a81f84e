#include "engine/plan/run_sketch.hpp"

#include <algorithm>
#include <cmath>

#include "common/xxh3.hpp"

namespace strata::engine {

void RunSketch::add(uint64_t value) {
  const uint64_t h = XXH3_64bits(&value, sizeof value);
  const size_t index = static_cast<size_t>(h >> (64 - kBits));
  const uint64_t rest = (h << kBits) | (uint64_t{1} << (kBits - 1));  // never all zero
  const auto rank = static_cast<uint8_t>(__builtin_clzll(rest) + 1);
  registers_[index] = std::max(registers_[index], rank);
}

void RunSketch::add_run(uint64_t offset, uint64_t length) {
  add(offset);
  add(offset + length);
}

void RunSketch::merge(const RunSketch& other) {
  for (size_t i = 0; i < kRegisters; ++i) registers_[i] = std::max(registers_[i], other.registers_[i]);
}

double RunSketch::distinct() const {
  const double m = static_cast<double>(kRegisters);
  double sum = 0;
  size_t zeros = 0;
  for (uint8_t r : registers_) {
    sum += std::ldexp(1.0, -static_cast<int>(r));
    zeros += r == 0 ? 1 : 0;
  }
  const double alpha = 0.7213 / (1.0 + 1.079 / m);
  const double raw = alpha * m * m / sum;
  // Few values: linear counting of the empty registers is the better estimate.
  if (raw <= 2.5 * m && zeros > 0) return m * std::log(m / static_cast<double>(zeros));
  return raw;
}

uint64_t RunSketch::intervals(uint64_t runs) const {
  if (runs == 0) return 0;
  const double u = distinct() - static_cast<double>(runs);
  return static_cast<uint64_t>(std::clamp(u, 1.0, static_cast<double>(runs)));
}

}  // namespace strata::engine
