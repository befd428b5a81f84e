#include "kernels/trace/trace_kernel.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "common/error.hpp"
#include "common/units.hpp"

namespace strata {

namespace {

struct Request {
  uint64_t rank = 0, offset = 0, length = 0;
};

struct TracedVariable {
  std::string name;
  std::vector<Request> requests;            // in time order
  std::vector<std::vector<Request>> reads;  // read phases: layers of disjoint read requests
};

struct Trace {
  uint64_t ranks = 0;
  std::vector<TracedVariable> variables;
};

uint64_t count_at(const nlohmann::json& j, const std::string& where) {
  if (!j.is_number_unsigned()) throw_usage(where + " must be a non-negative integer");
  return j.get<uint64_t>();
}

Request request_at(const nlohmann::json& j, const std::string& at, uint64_t ranks) {
  if (!j.is_array() || j.size() != 3) throw_usage(at + " must be [rank, offset, length]");
  Request r{count_at(j[0], at + " rank"), count_at(j[1], at + " offset"), count_at(j[2], at + " length")};
  if (r.rank >= ranks)
    throw_usage(at + " names rank " + std::to_string(r.rank) + " of a " + std::to_string(ranks) + "-rank job");
  if (r.length == 0) throw_usage(at + " has length 0");
  return r;
}

Trace read_trace(const std::string& path) {
  if (path.empty()) throw_usage("kernel trace needs --trace FILE (python -m strata.replay LOG -o FILE writes one)");
  std::ifstream in(path);
  if (!in) throw_usage("cannot read the trace file \"" + path + "\"");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw_usage("trace file \"" + path + "\" is not JSON: " + e.what());
  }
  const std::string where = "trace file \"" + path + "\": ";
  if (!j.is_object() || j.value("format", "") != "strata-trace") {
    throw_usage(where + "not a strata trace (no \"format\": \"strata-trace\"; docs/replay.md describes it)");
  }
  if (!j.contains("version") || j["version"] != 1) {
    throw_usage(where + "trace version " + j.value("version", nlohmann::json()).dump() +
                " (this strata reads version 1)");
  }
  Trace t;
  t.ranks = count_at(j.value("ranks", nlohmann::json()), where + "\"ranks\"");
  if (t.ranks == 0) throw_usage(where + "\"ranks\" must be at least 1");
  const nlohmann::json& vars = j.value("variables", nlohmann::json());
  if (!vars.is_array() || vars.empty()) throw_usage(where + "\"variables\" must be a non-empty list");
  for (size_t v = 0; v < vars.size(); ++v) {
    const std::string at = where + "variable " + std::to_string(v);
    TracedVariable tv;
    tv.name = vars[v].value("name", "");
    if (tv.name.empty()) throw_usage(at + " has no \"name\"");
    const nlohmann::json& reqs = vars[v].value("requests", nlohmann::json());
    if (!reqs.is_array()) throw_usage(at + " (\"" + tv.name + "\") has no \"requests\" list");
    tv.requests.reserve(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      tv.requests.push_back(request_at(reqs[i], at + " (\"" + tv.name + "\") request " + std::to_string(i), t.ranks));
    }
    const nlohmann::json& reads = vars[v].value("reads", nlohmann::json::array());
    if (!reads.is_array()) throw_usage(at + " (\"" + tv.name + "\"): \"reads\" must be a list of read phases");
    for (size_t k = 0; k < reads.size(); ++k) {
      const std::string kat = at + " (\"" + tv.name + "\") read phase " + std::to_string(k);
      if (!reads[k].is_array()) throw_usage(kat + " must be a list of [rank, offset, length]");
      std::vector<Request>& layer = tv.reads.emplace_back();
      for (size_t i = 0; i < reads[k].size(); ++i)
        layer.push_back(request_at(reads[k][i], kat + " request " + std::to_string(i), t.ranks));
    }
    t.variables.push_back(std::move(tv));
  }
  return t;
}

// Throws a usage Error naming the first two requests of `requests` (variable v's writes, or
// a read phase of it) that overlap.
void check_disjoint(const TracedVariable& v, const std::vector<Request>& requests, const std::string& path) {
  std::vector<size_t> order(requests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return requests[a].offset < requests[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const Request& a = requests[order[k - 1]];
    const Request& b = requests[order[k]];
    if (a.offset + a.length > b.offset) {
      throw_usage("trace file \"" + path + "\": variable \"" + v.name + "\": request " + std::to_string(order[k]) +
                  " (rank " + std::to_string(b.rank) + ", offset " + std::to_string(b.offset) + ") overlaps request " +
                  std::to_string(order[k - 1]) + " (rank " + std::to_string(a.rank) + ", bytes " +
                  std::to_string(a.offset) + ".." + std::to_string(a.offset + a.length) +
                  "): put rewrites in a variable of their own, as python -m strata.replay does");
    }
  }
}

}  // namespace

void TraceKernel::add_options(OptionSet& o) const {
  o.section("trace options");
  o.add("trace", "FILE", "the trace to replay (JSON: python -m strata.replay LOG.darshan -o FILE writes one)", "");
  o.add("trace-reads", "K",
        "the trace's read phase K (0, 1, ...: the job's reads, in layers of disjoint requests) instead of its "
        "writes: with --read, on the output the writes made",
        "");
}

KernelSetup TraceKernel::build(const OptionSet& o, int rank, int ranks) const {
  const std::string path = o.get("trace");
  const Trace t = read_trace(path);
  const bool reading = !o.get("trace-reads").empty();
  const uint64_t phase = reading ? parse_count(o.get("trace-reads"), "--trace-reads") : 0;
  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  d.blocks_apart = true;
  uint64_t requests = 0, bytes = 0, all_requests = 0;
  for (size_t v = 0; v < t.variables.size(); ++v) {
    const TracedVariable& tv = t.variables[v];
    check_disjoint(tv, tv.requests, path);
    uint64_t end = 1;
    for (const Request& r : tv.requests) end = std::max(end, r.offset + r.length);
    d.variables.push_back({tv.name, ElemType::u8, {end}});
    all_requests += tv.requests.size();
    if (reading && phase < tv.reads.size()) {
      check_disjoint(tv, tv.reads[phase], path);
      for (const Request& r : tv.reads[phase]) {
        if (r.offset + r.length > end) {
          throw_usage("trace file \"" + path + "\": variable \"" + tv.name + "\": a read of bytes " +
                      std::to_string(r.offset) + ".." + std::to_string(r.offset + r.length) +
                      " reaches past the bytes it writes (" + std::to_string(end) + ")");
        }
      }
    }
  }
  // Blocks in the trace's time order across variables: the trace lists each variable's requests
  // in time order; a rank's requests of different variables follow the variables' order.
  for (size_t v = 0; v < t.variables.size(); ++v) {
    const TracedVariable& tv = t.variables[v];
    static const std::vector<Request> none;
    const std::vector<Request>& phase_requests = !reading                  ? tv.requests
                                                 : phase < tv.reads.size() ? tv.reads[phase]
                                                                           : none;
    for (const Request& r : phase_requests) {
      if (r.rank % static_cast<uint64_t>(ranks) != static_cast<uint64_t>(rank)) continue;
      Block b;
      b.var = static_cast<int>(v);
      b.start = {r.offset};
      b.count = {r.length};
      d.blocks.push_back(b);
      ++requests;
      bytes += r.length;
    }
  }
  setup.params = {{"trace", path},
                  {"job_ranks", t.ranks},
                  {"folded", t.ranks != static_cast<uint64_t>(ranks)},
                  {"variables", t.variables.size()},
                  {"requests", all_requests}};
  if (reading) {
    setup.params["read_phase"] = phase;
    setup.own_read_layout = true;  // the job's reads, not the engine index's even share
  }
  return setup;
}

}  // namespace strata
