// The report of strata replay: the log's figures (from the trace's description of it), the
// trace's, and each backend's replay, side by side, with what is and is not faithful.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "run/run_record.hpp"

namespace strata::cli {

// The report as JSON (rank 0: `trace` is the parsed trace; null elsewhere, and so is the result).
// `ranks`: the replay's rank count; `replays`: each backend's record, in order; `reads`: per
// backend, the record of each read phase that followed its write (empty: none ran);
// `file_per_process`: each rank wrote a file of its own; `no_reads`: --no-reads.
nlohmann::json replay_report(const std::string& log, const std::string& trace_path, const nlohmann::json& trace,
                             int ranks, const std::vector<std::pair<std::string, RunRecord>>& replays,
                             const std::vector<std::vector<RunRecord>>& reads, bool file_per_process, bool no_reads);
// The report for people.
std::string replay_table(const nlohmann::json& report);

}  // namespace strata::cli
