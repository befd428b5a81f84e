// A run's record (src/run/run_record.hpp) for people: IOR-like, per repetition and a
// min/max/mean/median summary, then the engine's and the collective calls' breakdowns.
#pragma once

#include <string>

#include "run/run_record.hpp"

namespace strata::cli {

std::string to_table(const RunRecord& r);

}  // namespace strata::cli
