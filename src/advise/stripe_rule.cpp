// A calibrated stripe-count rule: read from strata-bench calibrate's JSON, applied exactly.
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "advise/advice.hpp"
#include "common/error.hpp"

namespace strata::advise {

namespace {

struct Fraction {
  int64_t num = 0, den = 1;
};

[[noreturn]] void bad_rule(const std::string& file, const std::string& what) {
  throw_usage("--rule " + file + ": " + what + " (write the file with: strata-bench calibrate RESULTS.sqlite --json " +
              file + ")");
}

Fraction reduced(int64_t num, int64_t den, const std::string& file, const std::string& key) {
  if (den == 0) bad_rule(file, "\"" + key + "\" has a zero denominator");
  if (den < 0) {
    if (num == std::numeric_limits<int64_t>::min() || den == std::numeric_limits<int64_t>::min()) {
      bad_rule(file, "\"" + key + "\" is too large");
    }
    num = -num;
    den = -den;
  }
  const int64_t g = std::gcd(num, den);
  return {num / (g == 0 ? 1 : g), den / (g == 0 ? 1 : g)};
}

// "235/42", "-3", "5.6": an exact fraction.
Fraction parse_fraction(const std::string& text, const std::string& file, const std::string& key) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      size_t used_n = 0, used_d = 0;
      const std::string n = text.substr(0, slash), d = text.substr(slash + 1);
      const int64_t num = std::stoll(n, &used_n), den = std::stoll(d, &used_d);
      if (used_n != n.size() || used_d != d.size()) throw std::invalid_argument(text);
      return reduced(num, den, file, key);
    }
    // A decimal: digits before and after the point, no exponent.
    const auto dot = text.find('.');
    const std::string whole = text.substr(0, dot), frac = dot == std::string::npos ? "" : text.substr(dot + 1);
    if (frac.size() > 15 || frac.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument(text);
    }
    size_t used = 0;
    const bool negative = !whole.empty() && whole[0] == '-';
    const int64_t w = whole.empty() || whole == "-" ? 0 : std::stoll(whole, &used);
    if (!whole.empty() && whole != "-" && used != whole.size()) throw std::invalid_argument(text);
    int64_t den = 1;
    for (size_t i = 0; i < frac.size(); ++i) den *= 10;
    const int64_t f = frac.empty() ? 0 : std::stoll(frac);
    int64_t num = 0;
    if (__builtin_mul_overflow(w, den, &num) || __builtin_add_overflow(num, negative ? -f : f, &num)) {
      bad_rule(file, "\"" + key + "\" is too large");
    }
    return reduced(num, den, file, key);
  } catch (const std::logic_error&) {
    bad_rule(file, "\"" + key + "\" must be a number or a fraction like 235/42 (got \"" + text + "\")");
  }
}

Fraction fraction_of(const nlohmann::json& doc, const std::string& key, const std::string& file) {
  const std::string exact = key + "_exact";
  if (doc.contains(exact)) {
    if (!doc[exact].is_string()) bad_rule(file, "\"" + exact + "\" must be a string like \"235/42\"");
    return parse_fraction(doc[exact].get<std::string>(), file, exact);
  }
  if (!doc.contains(key)) bad_rule(file, "no \"" + key + "\" (a stripe-count rule needs a slope and an intercept)");
  if (!doc[key].is_number()) bad_rule(file, "\"" + key + "\" must be a number");
  const double v = doc[key].get<double>();
  if (!std::isfinite(v)) bad_rule(file, "\"" + key + "\" must be finite");
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", v);
  return parse_fraction(text, file, key);
}

// floor(num / den) for den > 0.
int64_t floor_div(int64_t num, int64_t den) {
  const int64_t q = num / den;
  return (num % den != 0 && num < 0) ? q - 1 : q;
}

}  // namespace

StripeRule stripe_rule_from_json(const std::string& json_text, const std::string& file) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    bad_rule(file, std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) bad_rule(file, "expected a JSON object with \"slope\" and \"intercept\"");
  const Fraction a = fraction_of(doc, "slope", file), b = fraction_of(doc, "intercept", file);
  StripeRule r{a.num, a.den, b.num, b.den, "", ""};
  char text[96];
  const double slope = static_cast<double>(a.num) / static_cast<double>(a.den);
  const double intercept = static_cast<double>(b.num) / static_cast<double>(b.den);
  std::snprintf(text, sizeof text, "%.4g N %c %.4g", slope, intercept < 0 ? '-' : '+', std::fabs(intercept));
  r.text = text;
  r.source = "calibration fit " + file + " (strata-bench calibrate";
  if (doc.contains("node_counts") && doc["node_counts"].is_number_integer()) {
    r.source += ", over " + std::to_string(doc["node_counts"].get<int64_t>()) + " node counts";
  }
  if (doc.contains("r2") && doc["r2"].is_number()) {
    char r2[32];
    std::snprintf(r2, sizeof r2, ", R2 %.3f", doc["r2"].get<double>());
    r.source += r2;
  }
  r.source += ")";
  return r;
}

int64_t stripe_count_for_nodes(int64_t nodes, int64_t targets, const StripeRule& rule) {
  // round(sn/sd · N + in/id) halves up = floor((2·(sn·N·id + in·sd) + sd·id) / (2·sd·id)).
  int64_t a = 0, b = 0, num = 0, den = 0;
  const bool overflow = __builtin_mul_overflow(rule.slope_num, nodes, &a) ||
                        __builtin_mul_overflow(a, rule.intercept_den, &a) ||
                        __builtin_mul_overflow(rule.intercept_num, rule.slope_den, &b) ||
                        __builtin_add_overflow(a, b, &num) || __builtin_mul_overflow(num, int64_t{2}, &num) ||
                        __builtin_mul_overflow(rule.slope_den, rule.intercept_den, &den) ||
                        __builtin_add_overflow(num, den, &num) || __builtin_mul_overflow(den, int64_t{2}, &den);
  if (overflow || den <= 0) {
    throw_usage("the stripe-count rule " + rule.text + " overflows 64-bit arithmetic at " + std::to_string(nodes) +
                " nodes (" + rule.source + ")");
  }
  int64_t count = std::max<int64_t>(floor_div(num, den), 1);
  if (targets > 0) count = std::min(count, targets);
  return count;
}

}  // namespace strata::advise
