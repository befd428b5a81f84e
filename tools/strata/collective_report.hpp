// The table lines of a run's collective calls: count, rounds, and Equation 1's time split
// (I/O, communication, collective overhead, library overhead) of its last write and read.
#pragma once

#include <string>

#include "run_report.hpp"

namespace strata::cli {

std::string collective_lines(const RunRecord& r);

}  // namespace strata::cli
