// The value generator: value(variable, global element index, step) from a seed, needing no
// communication, so any rank can check any element whatever decomposition wrote it.
// Values are exact in their type (floats come from small integers), so equality is bitwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decomp/decomposition.hpp"

namespace strata {

struct ValueStream {
  uint64_t seed = 0;
  uint64_t step = 0;
};

// Writes the value of element `index` of variable `var` into `out` (elem_size(var.type) bytes).
void generate_value(const Variable& var, uint64_t index, const ValueStream& vs, std::byte* out);
// The value as text, for messages.
std::string format_value(ElemType type, const std::byte* in);

// Fills a rank's buffer (Decomposition::local_bytes()) with its blocks' values.
void fill(const Decomposition& d, const ValueStream& vs, std::byte* buffer);

struct Mismatch {
  uint64_t count = 0;           // mismatching elements on this rank
  std::string variable;         // the first one found (lowest memory offset)
  std::vector<uint64_t> index;  // its global index
  std::string expected, found;
  std::string describe() const;
};

// Compares a read-back buffer with the generator; returns the first mismatch, if any.
std::optional<Mismatch> verify(const Decomposition& d, const ValueStream& vs, const std::byte* buffer);

}  // namespace strata
