#include "common/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"

namespace strata {

namespace {

uint64_t parse_digits(const std::string& text, size_t& pos, const std::string& what) {
  if (!text.empty() && text[0] == '-') {
    throw_usage(what + " must not be negative (got \"" + text + "\")");
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) throw_usage(what + " is too large (\"" + text + "\")");
  if (ec != std::errc() || end == text.data()) {
    throw_usage(what + " must be a number (got \"" + text + "\")");
  }
  pos = static_cast<size_t>(end - text.data());
  return value;
}

}  // namespace

uint64_t parse_size(const std::string& text, const std::string& what) {
  size_t pos = 0;
  uint64_t value = parse_digits(text, pos, what);
  std::string suffix = text.substr(pos);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  uint64_t mult = 1;
  if (!suffix.empty() && suffix != "B") {
    const std::string letters = "KMGT";
    size_t which = letters.find(suffix[0]);
    std::string rest = suffix.substr(1);
    if (which == std::string::npos || !(rest.empty() || rest == "B" || rest == "I" || rest == "IB")) {
      throw_usage(what + " has an unknown unit in \"" + text + "\" (use K, M, G or T)");
    }
    mult = 1ULL << (10 * (which + 1));
  }
  if (value != 0 && mult > UINT64_MAX / value) throw_usage(what + " is too large (\"" + text + "\")");
  return value * mult;
}

uint64_t parse_count(const std::string& text, const std::string& what) {
  size_t pos = 0;
  uint64_t value = parse_digits(text, pos, what);
  if (pos != text.size()) throw_usage(what + " must be a whole number (got \"" + text + "\")");
  return value;
}

std::vector<uint64_t> parse_shape(const std::string& text, const std::string& what, size_t min_dims, size_t max_dims) {
  const std::string count =
      min_dims == max_dims ? std::to_string(min_dims) : std::to_string(min_dims) + " to " + std::to_string(max_dims);
  const std::string example = max_dims >= 3 ? "24x20x16" : max_dims == 2 ? "24x20" : "24";
  auto bad = [&](const std::string& why = "") {
    throw_usage(what + " needs " + count + " positive sizes separated by x or , like " + example + why + " (got \"" +
                text + "\")");
  };
  std::vector<uint64_t> shape;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find_first_of("x,", begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) bad();
    const uint64_t n = parse_count(item, what);
    if (n == 0) bad(": sizes must be greater than zero");
    shape.push_back(n);
    begin = end + 1;
  }
  if (shape.size() < min_dims || shape.size() > max_dims) bad();
  return shape;
}

double parse_real(const std::string& text, const std::string& what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    throw_usage(what + " must be a number (got \"" + text + "\")");
  }
  return value;
}

std::string format_size(uint64_t bytes) {
  static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024.0 && i < 4) {
    v /= 1024.0;
    ++i;
  }
  char buf[32];
  if (i == 0 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, names[i]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, names[i]);
  }
  return buf;
}

}  // namespace strata
