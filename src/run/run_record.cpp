#include "run/run_record.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <numeric>

namespace strata {

nlohmann::json PhaseTiming::to_json() const {
  nlohmann::json j = {{"bytes", bytes},      {"time_s", time_s}, {"bandwidth_mib_s", bandwidth_mib_s()},
                      {"open_s", open_s},    {"xfer_s", xfer_s}, {"close_s", close_s},
                      {"requests", requests}};
  if (!engine.is_null()) j["engine"] = engine;
  if (!collective.is_null()) j["collective"] = collective;
  if (!kernel.is_null()) j["kernel"] = kernel;
  if (!rank_time_s.empty()) j["rank_time_s"] = rank_time_s;
  if (!rank_requests.empty()) j["rank_requests"] = rank_requests;
  if (!rank_bytes.empty()) j["rank_bytes"] = rank_bytes;
  if (!rank_xfer_s.empty()) j["rank_xfer_s"] = rank_xfer_s;
  return j;
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

nlohmann::json describe(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  // The population standard deviation, as IOR's summary reports it.
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(n));
  return {{"min", v.front()}, {"max", v.back()}, {"mean", mean}, {"median", median}, {"stddev", stddev}};
}

std::vector<double> phase_values(const RunRecord& r, bool write, double (*get)(const PhaseTiming&)) {
  std::vector<double> out;
  for (const auto& rep : r.repetitions) {
    const auto& p = write ? rep.write : rep.read;
    if (p) out.push_back(get(*p));
  }
  return out;
}

nlohmann::json to_json(const RunRecord& r) {
  nlohmann::json j = r.header;
  j["verify_requested"] = r.verify_requested;
  j["verified"] = r.verified;
  for (const RunSwitch& s : r.switches) j[s.name] = s.on;
  j["repetitions"] = nlohmann::json::array();
  for (const auto& rep : r.repetitions) {
    nlohmann::json e = nlohmann::json::object();
    if (rep.write) e["write"] = rep.write->to_json();
    if (rep.read) e["read"] = rep.read->to_json();
    if (!rep.checkpoints.empty()) {
      e["checkpoints"] = nlohmann::json::array();
      for (const auto& c : rep.checkpoints) {
        nlohmann::json cj = {{"step", c.step}, {"output", c.output}};
        if (c.write) cj["write"] = c.write->to_json();
        if (c.read) cj["read"] = c.read->to_json();
        e["checkpoints"].push_back(cj);
      }
    }
    j["repetitions"].push_back(e);
  }
  nlohmann::json summary = nlohmann::json::object();
  for (bool write : {true, false}) {
    auto bw = phase_values(r, write, [](const PhaseTiming& p) { return p.bandwidth_mib_s(); });
    if (bw.empty()) continue;
    summary[write ? "write" : "read"] = {
        {"bandwidth_mib_s", describe(bw)},
        {"time_s", describe(phase_values(r, write, [](const PhaseTiming& p) { return p.time_s; }))},
        {"open_s", describe(phase_values(r, write, [](const PhaseTiming& p) { return p.open_s; }))},
        {"xfer_s", describe(phase_values(r, write, [](const PhaseTiming& p) { return p.xfer_s; }))},
        {"close_s", describe(phase_values(r, write, [](const PhaseTiming& p) { return p.close_s; }))},
        {"ops_per_s", describe(phase_values(r, write,
                                            [](const PhaseTiming& p) {
                                              return p.time_s > 0 ? static_cast<double>(p.requests) / p.time_s : 0.0;
                                            }))},
    };
  }
  j["summary"] = summary;
  return j;
}

}  // namespace strata
