#include "run_report.hpp"

#include <cstdio>
#include <sstream>

#include "collective_report.hpp"
#include "common/units.hpp"

namespace strata::cli {

namespace {

// "k=v k=v" of a JSON object of strings.
std::string key_values(const nlohmann::json& object) {
  std::string text;
  for (auto it = object.begin(); it != object.end(); ++it)
    text += (text.empty() ? "" : " ") + it.key() + "=" + it.value().get<std::string>();
  return text;
}

// What ran where: the command, the ranks, the output, the parameters, the hints and the advice.
void header_lines(std::ostringstream& out, const RunRecord& r) {
  const auto& h = r.header;
  const std::string chooser = h.contains("mode_option") ? h["mode_option"].get<std::string>() : "backend";
  out << "strata run " << h["kernel"].get<std::string>() << " --" << chooser << " " << h["backend"].get<std::string>()
      << "\n";
  out << "  ranks " << h["ranks"].get<int>() << " on " << h["nodes"].get<int>() << " node(s)"
      << (h["node_map"]["virtual"].get<bool>() ? " (virtual: " + h["node_map"]["source"].get<std::string>() + ")" : "")
      << ", MPI " << h["mpi"]["library"].get<std::string>() << " " << h["mpi"]["version"].get<std::string>()
      << ", MPI-IO " << h["io_component"].get<std::string>() << "\n";
  out << "  output " << h["output"].get<std::string>() << " (" << h["fs_type"].get<std::string>() << ")"
      << (h["layout"].get<std::string>() != "shared"
              ? ", " + h["layout"].get<std::string>() + ", " + std::to_string(h["files"].get<int>()) + " files"
              : "")
      << (h["node_local"].get<bool>() ? " on node-local storage" : "") << "\n";
  out << "  params " << h["params"].dump() << "\n";
  if (h.contains("warnings")) {
    for (const auto& w : h["warnings"]) out << "  warning: " << w.get<std::string>() << "\n";
  }
  if (!h["hints"].empty()) out << "  hints in effect: " << key_values(h["hints"]) << "\n";
  if (h.contains("hints_not_recognised") && !h["hints_not_recognised"].empty()) {
    out << "  hints not recognised by " << h["io_component"].get<std::string>()
        << " (ignored): " << key_values(h["hints_not_recognised"]) << "\n";
  }
  if (h.contains("advice") && h["advice"]["applied"].get<bool>()) {
    const std::string advised = key_values(h["advice"]["hints"]);
    out << "  advice applied: " << (advised.empty() ? "none (explicit hints won)" : advised)
        << " (strata advise explains; --no-advice turns it off)\n";
  }
}

// One line per repetition and access, each checkpoint's below it.
void repetition_lines(std::ostringstream& out, const RunRecord& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%-7s %4s %14s %10s %10s %10s %10s %12s\n", "access", "rep", "bw(MiB/s)", "open(s)",
                "xfer(s)", "close(s)", "total(s)", "bytes");
  out << line;
  for (size_t i = 0; i < r.repetitions.size(); ++i) {
    for (bool write : {true, false}) {
      const auto& p = write ? r.repetitions[i].write : r.repetitions[i].read;
      if (!p) continue;
      std::snprintf(line, sizeof line, "%-7s %4zu %14.2f %10.4f %10.4f %10.4f %10.4f %12s\n", write ? "write" : "read",
                    i, p->bandwidth_mib_s(), p->open_s, p->xfer_s, p->close_s, p->time_s,
                    format_size(p->bytes).c_str());
      out << line;
      for (const auto& c : r.repetitions[i].checkpoints) {  // the sum above, checkpoint by checkpoint
        const auto& cp = write ? c.write : c.read;
        if (!cp) continue;
        std::snprintf(line, sizeof line, "  step %-6llu %13.2f %10.4f %10.4f %10.4f %10.4f %12s  %s\n",
                      static_cast<unsigned long long>(c.step), cp->bandwidth_mib_s(), cp->open_s, cp->xfer_s,
                      cp->close_s, cp->time_s, format_size(cp->bytes).c_str(), c.output.c_str());
        out << line;
      }
    }
  }
}

void summary_lines(std::ostringstream& out, const RunRecord& r) {
  char line[256];
  out << "\nSummary of " << r.repetitions.size() << " repetition(s):\n";
  // IOR's columns: bandwidth's max, min, mean and standard deviation, and operations (requests
  // to the file system, all ranks) per second.
  std::snprintf(line, sizeof line, "%-7s %12s %12s %12s %12s %12s %12s %12s\n", "access", "max(MiB/s)", "min(MiB/s)",
                "mean(MiB/s)", "stddev", "median", "mean time(s)", "mean ops/s");
  out << line;
  for (bool write : {true, false}) {
    auto bw = phase_values(r, write, [](const PhaseTiming& p) { return p.bandwidth_mib_s(); });
    if (bw.empty()) continue;
    auto d = describe(bw);
    auto t = describe(phase_values(r, write, [](const PhaseTiming& p) { return p.time_s; }));
    auto ops = describe(phase_values(r, write, [](const PhaseTiming& p) {
      return p.time_s > 0 ? static_cast<double>(p.requests) / p.time_s : 0.0;
    }));
    std::snprintf(line, sizeof line, "%-7s %12.2f %12.2f %12.2f %12.2f %12.2f %12.4f %12.1f\n",
                  write ? "write" : "read", d["max"].get<double>(), d["min"].get<double>(), d["mean"].get<double>(),
                  d["stddev"].get<double>(), d["median"].get<double>(), t["mean"].get<double>(),
                  ops["mean"].get<double>());
    out << line;
  }
}

// The engine's breakdown of the last write and the last read it made.
void engine_lines(std::ostringstream& out, const RunRecord& r) {
  char line[256];
  for (bool write : {true, false}) {
    const PhaseTiming* last = nullptr;
    for (const auto& rep : r.repetitions) {
      const auto& p = write ? rep.write : rep.read;
      if (p && !p->engine.is_null()) last = &*p;
    }
    if (last == nullptr) continue;
    const auto& e = last->engine;
    std::snprintf(line, sizeof line,
                  "engine, last %s: plan %.4f s%s, aggregation %.4f s, I/O %.4f s, wait %.4f s; %llu round(s), "
                  "%llu aggregator(s), %llu x %s buffers, %llu file requests\n",
                  write ? "write" : "read", e["plan_s"].get<double>(),
                  e.value("plan_reused", false) ? " (plan reused)" : "", e["aggregation_s"].get<double>(),
                  e["io_s"].get<double>(), e["wait_s"].get<double>(), e["rounds"].get<unsigned long long>(),
                  e["aggregators"].get<unsigned long long>(), e["buffers"].get<unsigned long long>(),
                  format_size(e["buffer_bytes"].get<uint64_t>()).c_str(), e["fs_requests"].get<unsigned long long>());
    out << line;
    if (e.contains("strategy") && !e["strategy"].get<std::string>().empty()) {  // the plan's choice and its prediction
      const double measured = e.contains("measured_s")
                                  ? e["measured_s"].get<double>()
                                  : e.value("plan_s", 0.0) + e.value("execute_s", 0.0) + e.value("close_s", 0.0);
      std::snprintf(
          line, sizeof line,
          "  strategy %s: predicted %.4f s, measured %.4f s (the slowest rank's plan + %s + close); %llu one-sided "
          "operation(s), %llu collective(s)\n",
          e["strategy"].get<std::string>().c_str(), e.value("predicted_s", 0.0), measured, write ? "write" : "read",
          e.value("operations", 0ULL), e.value("collectives", 0ULL));
      out << line;
    }
    if (e.contains("drain") && e["drain"].is_object()) {  // a burst-buffer write's two moments (docs/drain.md)
      const nlohmann::json& d = e["drain"];
      if (d.value("fallback", false)) {
        out << "  drain: wrote " << d.value("target", std::string()) << " directly ("
            << d.value("note", std::string("node-local space was short")) << ")\n";
      } else if (d.value("drained", false)) {
        std::snprintf(line, sizeof line,
                      "  drain to %s: the program went on after %.4f s, the data was durable after %.4f s (copy "
                      "%.4f s, %s)\n",
                      d.value("target", std::string()).c_str(), d.value("return_s", 0.0), d.value("durable_s", 0.0),
                      d.value("copy_s", 0.0), format_size(d.value("bytes", uint64_t{0})).c_str());
        out << line;
      }
    }
    if (e.contains("tier")) {  // where the aggregation buffers lived (docs/tiers.md)
      out << "  aggregation tier(s) " << e["tier"].get<std::string>();
      if (e.value("tier_fallbacks", 0ULL) > 0)
        out << ", " << e["tier_fallbacks"].get<unsigned long long>() << " capacity fallback(s)";
      out << "\n";
    }
  }
}

}  // namespace

std::string to_table(const RunRecord& r) {
  std::ostringstream out;
  header_lines(out, r);
  out << "\n";
  repetition_lines(out, r);
  summary_lines(out, r);
  engine_lines(out, r);
  out << collective_lines(r);
  out << "\n";
  for (const RunSwitch& s : r.switches) out << s.line << "\n";
  if (!r.verify_requested) {
    out << "verification: NOT verified (add --verify)\n";
  } else {
    out << (r.verified ? "verification: passed, every element read back and compared\n" : "verification: FAILED\n");
  }
  return out.str();
}

}  // namespace strata::cli
