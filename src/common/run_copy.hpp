// Copying one run of bytes, inline. The engine moves millions of runs of a few bytes (E3SM's F
// maps: two floats a run on average) between a rank's memory, its stream and an aggregator's
// buffer; a call into the C library's memcpy for each costs more than the bytes. Runs of up to
// 16 bytes are copied with two overlapping loads and stores of 8, 4 or 1 bytes; longer ones by
// memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata {

inline void copy_run(std::byte* to, const std::byte* from, uint64_t n) {
  if (n > 16) {
    std::memcpy(to, from, n);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, from, 8);
    std::memcpy(&b, from + n - 8, 8);
    std::memcpy(to, &a, 8);
    std::memcpy(to + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, from, 4);
    std::memcpy(&b, from + n - 4, 4);
    std::memcpy(to, &a, 4);
    std::memcpy(to + n - 4, &b, 4);
  } else {
    for (uint64_t i = 0; i < n; ++i) to[i] = from[i];
  }
}

}  // namespace strata
