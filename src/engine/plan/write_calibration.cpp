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
  // Of two, the lower: a write meets slow moments (a flush, faults, a neighbour) far more often
  // than fast ones.
  return v[(v.size() - 1) / 2];
}

}  // namespace strata::engine
