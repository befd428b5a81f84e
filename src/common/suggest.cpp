#include "common/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace strata {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(const std::string& given, const std::vector<std::string>& valid) {
  const std::string g = lower(given);
  if (g.empty()) return "";
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& name : valid) {
    const std::string n = lower(name);
    size_t d = distance(g, n);
    // A prefix or a part of a longer name ("--block" for "--block-size") counts as close.
    if (g.size() >= 3 && n.find(g) != std::string::npos) d = std::min<size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = name;
    }
  }
  // Close enough: a third of the longer name's letters at most (at least one edit allowed).
  const size_t allowed = std::max<size_t>(1, std::max(g.size(), best.size()) / 3);
  return best_d <= allowed ? best : "";
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& valid, const std::string& prefix) {
  const std::string n = nearest_name(given, valid);
  return n.empty() ? "" : " (did you mean \"" + prefix + n + "\"?)";
}

}  // namespace strata
