#include "engine/plan/write_calibration.hpp"

#include <algorithm>
#include <cmath>

namespace strata::engine {

bool WriteCalibration::observe(bool recycled, double model_s, double measured_s) {
  if (!(model_s >= kShortest_s) || !(measured_s > 0) || !std::isfinite(measured_s) || !std::isfinite(model_s))
    return false;
  std::vector<double>& kept = recent_[recycled ? 1 : 0];
  kept.push_back(std::clamp(measured_s / model_s, kLowest, kHighest));
  if (kept.size() > kKept) kept.erase(kept.begin());
  return true;
}

double WriteCalibration::ratio(bool recycled) const {
  std::vector<double> v = recent_[recycled ? 1 : 0];
  if (v.empty()) return 1;
  std::sort(v.begin(), v.end());
  // Of two, their mean: a launch's recycled writes alternate between the output's two files, one
  // often slower than the other (IOR -b 4M: 7.3-8.2 ms, then 4.6-5.4 ms, then 5.6-7.7 ms, the
  // same in five launches, 2026-12-02); the lower of the two predicted the third at 1.33 of it.
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace strata::engine
