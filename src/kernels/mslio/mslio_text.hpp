// MSLIO's text: every value formatted into 13 characters and a newline, a solution file holding
// its values dimension by dimension (all points of dimension 0, then of dimension 1, ...) while
// memory holds them point by point (all dimensions of a point together), as in the MHM library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace strata::mslio {

// The printf format of one value: 13 characters ("-1.234567e+03") and a newline.
constexpr const char* kValueFormat = "%13.6e\n";

// Writes exactly kValueBytes bytes of `v` to `out` (no terminating NUL); false if the text would
// not be 14 bytes long (never for the generator's values, whose exponents have two digits).
bool format_value(double v, char* out);

// Formats one local problem's file: `points` points of `dims` values each, taken from `memory`
// (point by point), written dimension by dimension into `out` (kValueBytes·points·dims bytes).
// False on a value that does not fit 14 bytes.
bool format_file(const double* memory, uint64_t points, unsigned dims, char* out);

// Checks one local problem's text against its values in memory: every value parses back to
// the one generated, to the 7 significant digits the format keeps. Returns a description of
// the first difference.
std::optional<std::string> check_file(const char* text, uint64_t length, const double* memory, uint64_t points,
                                      unsigned dims, uint64_t problem);

}  // namespace strata::mslio
