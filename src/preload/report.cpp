#include "preload/report.hpp"

#include <cstdio>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::preload {

namespace {
constexpr const char* kReasonNames[] = {
    "independent",
    "read",
    "nonblocking collective",
    "split collective",
    "shared file pointer",
    "atomic mode",
    "data representation",
    "sequential mode",
    "view not decoded",
    "view not monotonic",
    "disabled",
    "cost model",
    "engine error",
    "written alone",
    "read-only file",
};
static_assert(sizeof kReasonNames / sizeof kReasonNames[0] == static_cast<size_t>(Reason::count_));
}  // namespace

const char* reason_name(Reason r) { return kReasonNames[static_cast<int>(r)]; }

Reason reason_from_name(const std::string& name) {
  for (int i = 0; i < static_cast<int>(Reason::count_); ++i) {
    if (name == kReasonNames[i]) return static_cast<Reason>(i);
  }
  return Reason::view_not_decoded;
}

Counters& counters() {
  static Counters c;
  return c;
}

void count_passthrough(Reason r, uint64_t bytes) {
  Counters& c = counters();
  ++c.passthrough_calls;
  c.passthrough_bytes += bytes;
  ++c.reasons[static_cast<size_t>(r)];
}

void write_report(const std::string& path) {
  const Counters& c = counters();
  std::vector<uint64_t> local = {
      c.calls,        c.engine_calls, c.passthrough_calls, c.engine_bytes, c.passthrough_bytes, c.alone_bytes,
      c.files_opened, c.errors};
  local.insert(local.end(), c.reasons.begin(), c.reasons.end());
  std::vector<uint64_t> sum(local.size());
  PMPI_Reduce(local.data(), sum.data(), static_cast<int>(local.size()), MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  double times[3] = {c.engine_s, c.gather_s, c.view_s}, slowest[3] = {0, 0, 0};
  PMPI_Reduce(times, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  const double engine_s = slowest[0], gather_s = slowest[1], view_s = slowest[2];
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) return;
  nlohmann::json j = {
      {"format", "strata-preload-report"},
      {"version", 1},
      {"ranks", size},
      {"calls", sum[0]},
      {"engine_calls", sum[1]},
      {"passthrough_calls", sum[2]},
      {"engine_bytes", sum[3]},
      {"passthrough_bytes", sum[4]},
      {"alone_bytes", sum[5]},
      {"files_opened", sum[6]},
      {"errors", sum[7]},
      {"engine_phases", c.engine_phases},
      {"plans_reused", c.plans_reused},
      {"budget_flushes", c.budget_flushes},
      {"cost_passthroughs", c.cost_passthroughs},
      {"engine_predicted_s", c.engine_predicted_s},
      {"mpiio_predicted_s", c.mpiio_predicted_s},
      {"engine_s", engine_s},
      {"gather_s", gather_s},
      {"view_s", view_s},
  };
  nlohmann::json reasons = nlohmann::json::object();
  for (size_t i = 0; i < c.reasons.size(); ++i) {
    if (sum[8 + i] > 0) reasons[kReasonNames[i]] = sum[8 + i];
  }
  j["passthrough_reasons"] = reasons;
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) std::fprintf(stderr, "libstrata_preload: cannot write the report \"%s\"\n", path.c_str());
}

}  // namespace strata::preload
