// FNV-1a, 64 bits: a small, stable hash for names and signatures that ranks compare (not for
// data integrity: the engine's checksums use XXH3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata {

inline constexpr uint64_t kFnvOffset = 0xCBF29CE484222325ULL;

inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ULL;
  }
  return h;
}

inline uint64_t fnv1a(std::string_view s, uint64_t h = kFnvOffset) { return fnv1a(s.data(), s.size(), h); }

}  // namespace strata
