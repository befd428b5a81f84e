// What a run measured (strata::run's result): per repetition, the write and read phases' times,
// bytes and requests, and a header describing the run. Its JSON form is the record `strata run
// --json` writes and the harness stores; tools/strata/run_report.hpp prints it as a table.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata {

struct PhaseTiming {
  uint64_t bytes = 0;  // over all ranks
  double open_s = 0;   // max over ranks
  double xfer_s = 0;
  double close_s = 0;
  double time_s = 0;                    // open + transfer + close, max over ranks
  uint64_t requests = 0;                // I/O library calls, summed over ranks
  nlohmann::json engine;                // the engine's statistics (backend strata), or null
  nlohmann::json collective;            // collective calls, rounds, Equation 1's split (collective_calls.hpp), or null
  nlohmann::json kernel;                // an application kernel's own measurements, or null
  std::vector<double> rank_time_s;      // per-rank times, when known (the harness stores them)
  std::vector<uint64_t> rank_requests;  // per-rank I/O library calls, bytes and transfer time, when known
  std::vector<uint64_t> rank_bytes;
  std::vector<double> rank_xfer_s;
  double bandwidth_mib_s() const { return time_s > 0 ? static_cast<double>(bytes) / time_s / 1048576.0 : 0.0; }
  nlohmann::json to_json() const;
};

// One checkpoint of a kernel that writes a new output every few steps (see run_outputs.hpp).
struct CheckpointTiming {
  uint64_t step = 0;
  std::string output;  // its path (the prefix of its files per process or node)
  std::optional<PhaseTiming> write;
  std::optional<PhaseTiming> read;
};

struct Repetition {
  std::optional<PhaseTiming> write;  // with checkpoints: summed over them
  std::optional<PhaseTiming> read;
  std::vector<CheckpointTiming> checkpoints;  // empty for a single output
};

// A campaign-wide switch as the run had it (run_switches(), run_options.hpp): the record's JSON
// has `name`: on, and its table prints `line`.
struct RunSwitch {
  std::string name;
  bool on = false;
  std::string line;  // the report's line for this state
};

struct RunRecord {
  nlohmann::json header;  // kernel, backend, params, ranks, nodes, hints, mpi, ... (run.cpp)
  std::vector<Repetition> repetitions;
  bool verify_requested = false;
  bool verified = false;
  std::vector<RunSwitch> switches;     // campaign-wide switches (--fsync), from their rows
  std::optional<std::string> failure;  // the verification's first mismatch (the same on every rank)
  std::string kernel_text;             // an application kernel's own report, for people
};

// For the record's header.
std::string now_iso8601();
std::string hostname();

// {"min","max","mean","median"} of the values.
nlohmann::json describe(std::vector<double> values);
// `get` of every repetition's write (or read) phase.
std::vector<double> phase_values(const RunRecord& r, bool write, double (*get)(const PhaseTiming&));
nlohmann::json to_json(const RunRecord& r);

}  // namespace strata
