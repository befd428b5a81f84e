#include "kernels/mslio/mslio_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/mslio/mslio_volume.hpp"

namespace strata::mslio {

bool format_value(double v, char* out) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, kValueFormat, v);
  if (n != static_cast<int>(kValueBytes)) return false;
  std::memcpy(out, buf, kValueBytes);
  return true;
}

bool format_file(const double* memory, uint64_t points, unsigned dims, char* out) {
  for (unsigned d = 0; d < dims; ++d) {
    for (uint64_t p = 0; p < points; ++p) {
      if (!format_value(memory[p * dims + d], out)) return false;
      out += kValueBytes;
    }
  }
  return true;
}

std::optional<std::string> check_file(const char* text, uint64_t length, const double* memory, uint64_t points,
                                      unsigned dims, uint64_t problem) {
  const uint64_t expected = kValueBytes * points * dims;
  if (length != expected) {
    return "local problem " + std::to_string(problem) + ": " + std::to_string(length) + " bytes of text, expected " +
           std::to_string(expected);
  }
  char field[kValueBytes + 1];
  for (unsigned d = 0; d < dims; ++d) {
    for (uint64_t p = 0; p < points; ++p) {
      const uint64_t at = (d * points + p) * kValueBytes;
      std::memcpy(field, text + at, kValueBytes);
      field[kValueBytes] = '\0';
      const double want = memory[p * dims + d];
      char* end = nullptr;
      const double got = std::strtod(field, &end);
      const bool shape_ok = field[kValueBytes - 1] == '\n' && end == field + kValueBytes - 1;
      // %.6e keeps 7 significant digits: the parsed value is within half a unit of the 7th.
      const bool value_ok = std::fabs(got - want) <= 5.0000001e-7 * std::fabs(want) + 1e-300;
      if (!shape_ok || !value_ok) {
        char msg[256];
        field[kValueBytes - 1] = field[kValueBytes - 1] == '\n' ? '\0' : field[kValueBytes - 1];
        std::snprintf(msg, sizeof msg,
                      "local problem %llu, dimension %u, point %llu (byte %llu of its text): found \"%s\", "
                      "expected %.6e",
                      static_cast<unsigned long long>(problem), d, static_cast<unsigned long long>(p),
                      static_cast<unsigned long long>(at), field, want);
        return std::string(msg);
      }
    }
  }
  return std::nullopt;
}

}  // namespace strata::mslio
