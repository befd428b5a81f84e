#include "engine/plan/write_calibration.hpp"

#include <algorithm>
#include <cmath>

namespace strata::engine {

namespace {

void keep_last(std::vector<double>& v) {
  if (v.size() > WriteCalibration::kKept) v.erase(v.begin(), v.end() - WriteCalibration::kKept);
}

bool usable(double r) { return std::isfinite(r) && r > 0; }

}  // namespace

void WriteCalibration::seed(const std::vector<WriteRecord>& earlier) {
  for (const WriteRecord& w : earlier) {
    std::vector<double>& kept = earlier_[{w.key, w.recycled}];
    kept.clear();
    for (double r : w.ratios) {
      if (usable(r)) kept.push_back(std::clamp(r, kLowest, kHighest));
    }
    keep_last(kept);
  }
}

bool WriteCalibration::observe(bool recycled, uint64_t key, double model_s, double measured_s) {
  if (!(model_s >= kShortest_s) || !(measured_s > 0) || !std::isfinite(measured_s) || !std::isfinite(model_s))
    return false;
  const double r = std::clamp(measured_s / model_s, kLowest, kHighest);
  std::vector<double>& kept = recent_[recycled ? 1 : 0];
  kept.push_back(r);
  keep_last(kept);
  std::vector<double>& by_plan = mine_[{key, recycled}];
  by_plan.push_back(r);
  keep_last(by_plan);
  return true;
}

double WriteCalibration::ratio(bool recycled, uint64_t key) const {
  std::vector<double> v;
  if (auto it = earlier_.find({key, recycled}); it != earlier_.end()) v = it->second;
  const std::vector<double>& recent = recent_[recycled ? 1 : 0];
  v.insert(v.end(), recent.begin(), recent.end());
  keep_last(v);
  if (v.empty()) return 1;
  std::sort(v.begin(), v.end());
  // Of two, their mean: a launch's recycled writes alternate between the output's two files, one
  // often slower than the other (IOR -b 4M: 7.3-8.2 ms, then 4.6-5.4 ms, then 5.6-7.7 ms, the
  // same in five launches, 2026-12-02); the lower of the two predicted the third at 1.33 of it.
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

std::vector<WriteRecord> WriteCalibration::learned(int64_t now) const {
  std::vector<WriteRecord> out;
  for (const auto& [key, ratios] : mine_) {
    WriteRecord w{key.first, key.second, {}, now};
    if (auto it = earlier_.find(key); it != earlier_.end()) w.ratios = it->second;
    w.ratios.insert(w.ratios.end(), ratios.begin(), ratios.end());
    keep_last(w.ratios);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace strata::engine
