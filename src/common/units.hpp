// Sizes with units ("4M", "64KiB", "100K", "1g") and their printing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// Parses a byte count: a non-negative integer with an optional binary suffix
// K, M, G, T (optionally followed by "i", "B" or "iB"; k = 1024 as in IOR).
// Throws a usage Error naming `what` on anything else.
uint64_t parse_size(const std::string& text, const std::string& what);
// Parses a non-negative integer without units.
uint64_t parse_count(const std::string& text, const std::string& what);
// Parses a shape: between `min_dims` and `max_dims` positive counts separated by 'x' or ','
// ("24x20x16" or "24,20,16": every shape option of every kernel takes both spellings).
std::vector<uint64_t> parse_shape(const std::string& text, const std::string& what, size_t min_dims, size_t max_dims);
// Parses a floating-point number.
double parse_real(const std::string& text, const std::string& what);
// "4 MiB", "512 B", "1.50 GiB".
std::string format_size(uint64_t bytes);

}  // namespace strata
