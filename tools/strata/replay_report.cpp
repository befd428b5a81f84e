#include "replay_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "common/units.hpp"

namespace strata::cli {

namespace {

using nlohmann::json;

// Sums two {bin: count} histograms.
void add_histogram(json& into, const json& h) {
  if (h.is_null()) return;
  for (auto it = h.begin(); it != h.end(); ++it)
    into[it.key()] = into.value(it.key(), 0ULL) + it.value().get<uint64_t>();
}

double mean_size(uint64_t bytes, uint64_t requests) {
  return requests > 0 ? static_cast<double>(bytes) / static_cast<double>(requests) : 0.0;
}

// Per replay rank: [requests, bytes] the trace's variables give it (job rank r on rank r mod ranks).
std::vector<std::pair<uint64_t, uint64_t>> expected_per_rank(const json& variables, int ranks) {
  std::vector<std::pair<uint64_t, uint64_t>> out(static_cast<size_t>(ranks));
  for (const json& v : variables) {
    for (const json& r : v["requests"]) {  // [job rank, offset, length], checked by the kernel
      auto& slot = out[r[0].get<uint64_t>() % static_cast<uint64_t>(ranks)];
      slot.first += 1;
      slot.second += r[2].get<uint64_t>();
    }
  }
  return out;
}

// Per replay rank: [requests, bytes] of the trace's read phases (every variable's "reads" layers).
std::vector<std::pair<uint64_t, uint64_t>> expected_reads_per_rank(const json& variables, int ranks) {
  std::vector<std::pair<uint64_t, uint64_t>> out(static_cast<size_t>(ranks));
  for (const json& v : variables) {
    for (const json& layer : v.value("reads", json::array())) {
      for (const json& r : layer) {
        auto& slot = out[r[0].get<uint64_t>() % static_cast<uint64_t>(ranks)];
        slot.first += 1;
        slot.second += r[2].get<uint64_t>();
      }
    }
  }
  return out;
}

// The log's and the trace's figures summed over the trace's files, and one row per file.
struct Figures {
  json log = {{"writes", 0ULL},
              {"bytes", 0ULL},
              {"write_time_s", 0.0},
              {"reads", 0ULL},
              {"read_bytes", 0ULL},
              {"read_time_s", 0.0},
              {"histogram_posix", json::object()}};
  json trace = {{"writes", 0ULL}, {"bytes", 0ULL}, {"histogram_posix", json::object()}};
  json file_rows = json::array();
  uint64_t rewrites = 0, dxt_files = 0;
};

Figures file_figures(const json& files) {
  Figures g;
  for (const json& f : files) {
    const json& l = f["log"];
    const json& t = f["trace"];
    for (const char* k : {"writes", "bytes", "reads", "read_bytes"})
      g.log[k] = g.log[k].get<uint64_t>() + l[k].get<uint64_t>();
    for (const char* k : {"write_time_s", "read_time_s"}) g.log[k] = g.log[k].get<double>() + l[k].get<double>();
    if (!l["histogram"].is_null()) {  // sizes are compared where the log has them: POSIX files
      add_histogram(g.log["histogram_posix"], l["histogram"]);
      add_histogram(g.trace["histogram_posix"], t["histogram"]);
    }
    g.rewrites += f.value("rewrites", 0ULL);
    g.dxt_files += f["origin"] == "dxt";
    json row = {{"name", f["name"]},
                {"origin", f["origin"]},
                {"variables", f["variables"]},
                {"rewrites", f.value("rewrites", 0ULL)},
                {"log", l},
                {"trace", t}};
    row["trace"].erase("per_rank");
    g.file_rows.push_back(row);
  }
  return g;
}

// A backend's read phases against the reads the trace gives each rank: requests, bytes, time and
// verification summed over the phases.
void add_reads(json& row, const std::vector<RunRecord>& phases,
               const std::vector<std::pair<uint64_t, uint64_t>>& per_rank) {
  if (phases.empty()) return;
  uint64_t requests = 0, bytes = 0;
  double summed_s = 0, time_s = 0;
  bool verified = true, requested = false;
  std::vector<uint64_t> rank_bytes(per_rank.size(), 0);
  for (const RunRecord& record : phases) {
    requested = requested || record.verify_requested;
    verified = verified && record.verified && !record.failure;
    for (const Repetition& r : record.repetitions) {
      if (!r.read) continue;
      requests += r.read->requests;
      bytes += r.read->bytes;
      time_s += r.read->time_s;
      for (double s : r.read->rank_xfer_s) summed_s += s;
      for (size_t k = 0; k < rank_bytes.size() && k < r.read->rank_bytes.size(); ++k)
        rank_bytes[k] += r.read->rank_bytes[k];
    }
  }
  bool bytes_equal = true;
  for (size_t r = 0; r < per_rank.size(); ++r) bytes_equal = bytes_equal && rank_bytes[r] == per_rank[r].second;
  row["reads"] = {{"phases", phases.size()},
                  {"requests", requests},
                  {"bytes", bytes},
                  {"rank_bytes", rank_bytes},
                  {"read_time_all_ranks_s", summed_s},
                  {"time_s", time_s},
                  {"mean_request_bytes", mean_size(bytes, requests)},
                  {"rank_bytes_equal_trace", bytes_equal},
                  {"verify_requested", requested},
                  {"verified", requested && verified}};
}

// One backend's replay against what the trace gives each rank.
json replay_row(const std::string& backend, const RunRecord& record,
                const std::vector<std::pair<uint64_t, uint64_t>>& per_rank) {
  const PhaseTiming* w = nullptr;
  for (const Repetition& r : record.repetitions) {
    if (r.write) w = &*r.write;
  }
  json row = {{"backend", backend}, {"verify_requested", record.verify_requested}, {"verified", record.verified}};
  if (record.failure) row["failure"] = *record.failure;
  if (w != nullptr) {
    bool requests_equal = w->rank_requests.size() == per_rank.size();
    bool bytes_equal = w->rank_bytes.size() == per_rank.size();
    for (size_t r = 0; r < per_rank.size(); ++r) {
      requests_equal = requests_equal && w->rank_requests[r] == per_rank[r].first;
      bytes_equal = bytes_equal && w->rank_bytes[r] == per_rank[r].second;
    }
    double summed_s = 0;  // time in the transfer step, summed over ranks, as Darshan sums its write time
    for (double s : w->rank_xfer_s) summed_s += s;
    row.update({{"bytes", w->bytes},
                {"requests", w->requests},
                {"rank_requests", w->rank_requests},
                {"write_time_all_ranks_s", summed_s},
                {"rank_bytes", w->rank_bytes},
                {"time_s", w->time_s},
                {"xfer_s", w->xfer_s},
                {"bandwidth_mib_s", w->bandwidth_mib_s()},
                {"mean_request_bytes", mean_size(w->bytes, w->requests)},
                {"rank_requests_equal_trace", requests_equal},
                {"rank_bytes_equal_trace", bytes_equal}});
  }
  row["record"] = to_json(record);
  return row;
}

// What the trace keeps of the log, in words.
json trace_notes(const json& trace, const Figures& g, int ranks, bool file_per_process) {
  json notes = json::array();
  const json files = trace.value("files", json::array());
  const json scale = trace.value("scale", json::object());
  const uint64_t job_ranks = trace.value("ranks", 0ULL);
  if (files.empty())
    notes.push_back("the trace describes no log (written by hand?): its requests are replayed as they are");
  if (!files.empty())
    notes.push_back(std::to_string(g.dxt_files) + " of " + std::to_string(files.size()) +
                    " file(s) replay DXT's exact requests; the others a synthetic pattern matching their counters "
                    "(sizes from the access-size histogram, consecutive and sequential writes, bytes per rank)");
  const uint64_t divided = scale.value("bytes_divided_by", 1ULL), sampled = scale.value("one_request_in", 1ULL);
  if (divided > 1 || sampled > 1) {
    notes.push_back(
        "scaled down: " + (divided > 1 ? "offsets and lengths divided by " + std::to_string(divided) : std::string()) +
        (divided > 1 && sampled > 1 ? ", " : "") +
        (sampled > 1 ? "one request in " + std::to_string(sampled) + " kept per rank" : std::string()) +
        ": the trace is a miniature of the job");
  }
  uint64_t overwritten = 0;  // counters-only files that wrote more bytes than they span: rewrites
  for (const json& f : files) {
    const json& l = f["log"];
    overwritten += f["origin"] == "counters" && l["bytes"].get<int64_t>() > l["max_byte"].get<int64_t>() + 1;
  }
  if (overwritten > 0) {
    notes.push_back(std::to_string(overwritten) +
                    " file(s) without DXT wrote more bytes than they span (rewrites "
                    "the counters do not place, or a stream such as stdout whose offsets each rank counts): their "
                    "synthetic pattern writes each byte once, "
                    "further out");
  }
  if (g.rewrites > 0) {
    notes.push_back(std::to_string(g.rewrites) +
                    " rewrite(s) of bytes written before went into variables of their own "
                    "(every request is replayed, at its size and rank, but not over the bytes it rewrote)");
  }
  uint64_t shared = 0;
  for (const json& f : files) shared += f["log"].value("shared", false);
  if (files.size() > 1 || (!files.empty() && file_per_process)) {
    notes.push_back("the job wrote " + std::to_string(files.size()) + " file(s), " + std::to_string(shared) +
                    " shared by several ranks and " + std::to_string(files.size() - shared) + " by one rank each; " +
                    (file_per_process ? "the replay writes each rank's requests one after another into a file of its "
                                        "own (--file-per-process: the log's offsets are not kept)"
                                      : "the replay writes them as variables of one output (--file-per-process "
                                        "gives each rank a file of its own)"));
  }
  if (job_ranks != static_cast<uint64_t>(ranks)) {
    notes.push_back("the job's " + std::to_string(job_ranks) + " ranks are folded onto " + std::to_string(ranks) +
                    ": job rank r writes from rank r mod " + std::to_string(ranks));
  }
  return notes;
}

// What each replay kept of the trace, in words.
void replay_notes(json& notes, const Figures& g, const json& runs, bool has_log) {
  if (has_log)
    notes.push_back(g.trace["writes"] == g.log["writes"] && g.trace["bytes"] == g.log["bytes"]
                        ? "the trace holds the log's write requests and bytes exactly"
                        : "the trace holds " + std::to_string(g.trace["writes"].get<uint64_t>()) + " of the log's " +
                              std::to_string(g.log["writes"].get<uint64_t>()) + " write requests and " +
                              format_size(g.trace["bytes"]) + " of its " + format_size(g.log["bytes"]));
  if (!g.log["histogram_posix"].empty()) {
    notes.push_back(g.log["histogram_posix"] == g.trace["histogram_posix"]
                        ? "the POSIX files' access-size histogram is the log's"
                        : "the POSIX files' access-size histogram differs from the log's (scaling moves sizes to "
                          "smaller bins, or the counters could not all be met)");
  }
  for (const json& r : runs) {
    if (!r.contains("rank_requests_equal_trace")) continue;
    const std::string b = r["backend"];
    if (r["rank_requests_equal_trace"].get<bool>() && r["rank_bytes_equal_trace"].get<bool>()) {
      notes.push_back(b + ": every rank issued the trace's requests and bytes, one I/O call per request");
    } else if (r["rank_bytes_equal_trace"].get<bool>()) {
      notes.push_back(b + ": every rank moved the trace's bytes, in " + std::to_string(r["requests"].get<uint64_t>()) +
                      " I/O call(s) of its own making instead of the trace's " +
                      std::to_string(g.trace["writes"].get<uint64_t>()) + " requests");
    } else {
      notes.push_back(b + ": the ranks' bytes differ from the trace's");
    }
  }
}

// What of the job's reads and of its MPI-IO calls the replay reproduces, in words.
void read_notes(json& notes, const json& trace, const Figures& g, const json& runs, bool file_per_process,
                bool no_reads) {
  const uint64_t log_reads = g.log["reads"], trace_reads = g.trace["reads"];
  if (log_reads > 0 && trace_reads == 0) {
    notes.push_back("the log's " + std::to_string(log_reads) + " read(s) of the files written are not replayed: " +
                    (no_reads
                         ? std::string("--no-reads")
                         : "without DXT read records only their counts are known (--verify reads back the writes)"));
  } else if (trace_reads > 0) {
    notes.push_back(
        "reads: the trace replays " + std::to_string(trace_reads) + " of the log's " + std::to_string(log_reads) +
        " read(s) of the files written (" + format_size(g.trace["read_bytes"].get<uint64_t>()) + " of " +
        format_size(g.log["read_bytes"].get<uint64_t>()) + "), DXT's requests on the bytes the trace writes, in " +
        std::to_string(g.trace["read_phases"].get<uint64_t>()) + " phase(s) of disjoint requests after each write" +
        (trace_reads < log_reads ? " (reads of bytes the trace does not write have nothing to compare)" : ""));
    if (file_per_process || no_reads) {
      notes.push_back(std::string("reads: not replayed (") + (no_reads ? "--no-reads" : "--file-per-process") + ")");
    }
    for (const json& r : runs) {
      if (!r.contains("reads")) continue;
      const json& rd = r["reads"];
      notes.push_back(r["backend"].get<std::string>() + ": " +
                      (rd["rank_bytes_equal_trace"].get<bool>()
                           ? std::string("every rank read the bytes of the trace's reads")
                           : "moved " + format_size(rd["bytes"].get<uint64_t>()) + " for the trace's " +
                                 format_size(g.trace["read_bytes"].get<uint64_t>()) +
                                 " of reads (its aggregators read whole ranges and hand each rank its part)") +
                      ", in " + std::to_string(rd["requests"].get<uint64_t>()) + " I/O call(s)" +
                      (rd["verify_requested"].get<bool>()
                           ? (rd["verified"].get<bool>() ? ", verified" : ", verification FAILED")
                           : ", not verified (add --verify)"));
    }
  }
  for (const json& f : trace.value("files", json::array())) {
    if (!f.contains("mpiio")) continue;
    const json& m = f["mpiio"];
    const uint64_t coll = m.value("collective_writes", 0ULL), indep = m.value("independent_writes", 0ULL);
    const uint64_t creads = m.value("collective_reads", 0ULL), ireads = m.value("independent_reads", 0ULL);
    std::string through;
    for (const json& r : runs) {
      const std::string b = r["backend"];
      if (b.rfind("mpiio-", 0) == 0) through += (through.empty() ? "" : ", ") + b;
    }
    notes.push_back("MPI-IO: " + f["name"].get<std::string>() + ": the job's " + std::to_string(coll) +
                    " collective and " + std::to_string(indep) + " independent write call(s), " +
                    std::to_string(creads) + " collective and " + std::to_string(ireads) +
                    " independent read call(s) (DXT_MPIIO: " + std::to_string(m.value("dxt_writes", 0ULL)) +
                    " writes, " + std::to_string(m.value("dxt_reads", 0ULL)) + " reads); " +
                    (through.empty() ? std::string("no MPI-IO backend replayed it")
                                     : "replayed through " + through +
                                           (coll == 0    ? " (the job's writes were independent: mpiio-ind's are)"
                                            : indep == 0 ? " (the job's writes were collective: mpiio-coll's are)"
                                                         : " (the job mixed both: mpiio-coll makes every write "
                                                           "collective, mpiio-ind none)")));
  }
}

}  // namespace

json replay_report(const std::string& log, const std::string& trace_path, const json& trace, int ranks,
                   const std::vector<std::pair<std::string, RunRecord>>& replays,
                   const std::vector<std::vector<RunRecord>>& reads, bool file_per_process, bool no_reads) {
  if (trace.is_null()) return nullptr;
  const json files = trace.value("files", json::array());
  Figures g = file_figures(files);
  const auto per_rank = expected_per_rank(trace.value("variables", json::array()), ranks);
  json expected = json::array();
  g.trace["writes"] = g.trace["bytes"] = 0ULL;  // what is replayed: every variable's requests
  for (const auto& [n, b] : per_rank) {
    expected.push_back({n, b});
    g.trace["writes"] = g.trace["writes"].get<uint64_t>() + n;
    g.trace["bytes"] = g.trace["bytes"].get<uint64_t>() + b;
  }
  g.trace["per_rank"] = expected;
  g.trace["mean_request_bytes"] = mean_size(g.trace["bytes"], g.trace["writes"]);
  g.log["mean_request_bytes"] = mean_size(g.log["bytes"], g.log["writes"]);
  // The reads the trace replays (DXT's reads of the bytes it writes), per rank and in all.
  const auto reads_per_rank = expected_reads_per_rank(trace.value("variables", json::array()), ranks);
  json expected_reads = json::array();
  uint64_t trace_reads = 0, trace_read_bytes = 0;
  for (const auto& [n, b] : reads_per_rank) {
    expected_reads.push_back({n, b});
    trace_reads += n;
    trace_read_bytes += b;
  }
  g.trace["reads"] = trace_reads;
  g.trace["read_bytes"] = trace_read_bytes;
  g.trace["read_phases"] = trace.value("read_phases", 0ULL);
  g.trace["reads_per_rank"] = expected_reads;
  g.trace["read_mean_request_bytes"] = mean_size(trace_read_bytes, trace_reads);
  g.log["read_mean_request_bytes"] = mean_size(g.log["read_bytes"], g.log["reads"]);
  json runs = json::array();
  for (size_t b = 0; b < replays.size(); ++b) {
    runs.push_back(replay_row(replays[b].first, replays[b].second, per_rank));
    if (b < reads.size()) add_reads(runs.back(), reads[b], reads_per_rank);
  }
  json notes = trace_notes(trace, g, ranks, file_per_process);
  read_notes(notes, trace, g, runs, file_per_process, no_reads);
  replay_notes(notes, g, runs, !files.empty());
  return {{"log", log},
          {"trace", trace_path},
          {"job", trace.value("job", json::object())},
          {"scale", trace.value("scale", json::object())},
          {"ranks", ranks},
          {"job_ranks", trace.value("ranks", 0ULL)},
          {"log_figures", g.log},
          {"trace_figures", g.trace},
          {"replays", runs},
          {"files", g.file_rows},
          {"faithful", notes},
          {"file_per_process", file_per_process}};
}

namespace {

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string num(uint64_t v) { return std::to_string(v); }

void header_lines(std::ostringstream& out, const json& report) {
  const json& job = report["job"];
  out << "strata replay " << report["log"].get<std::string>() << "\n";
  if (!report["files"].empty()) {
    out << "  job " << job.value("jobid", 0ULL) << ": " << report["job_ranks"].get<uint64_t>() << " ranks, run time "
        << job.value("run_time_s", 0.0) << " s, " << report["files"].size() << " file(s) written"
        << (job.value("exe", std::string()).empty() ? "" : ", " + job["exe"].get<std::string>()) << "\n";
  } else {  // a hand-written trace describes no log
    out << "  a trace of a " << report["job_ranks"].get<uint64_t>() << "-rank job that describes no log\n";
  }
  out << "  replayed on " << report["ranks"].get<int>() << " rank(s); trace " << report["trace"].get<std::string>()
      << "\n\n";
}

// The log, the trace and each replay side by side, one figure a row.
void figure_rows(std::ostringstream& out, const json& report) {
  const json& l = report["log_figures"];
  const json& t = report["trace_figures"];
  const json& runs = report["replays"];
  const bool has_log = !report["files"].empty();
  char line[512];
  std::snprintf(line, sizeof line, "%-22s %12s %12s", "", "log", "trace");
  out << line;
  for (const json& r : runs) {
    std::snprintf(line, sizeof line, " %12s", r["backend"].get<std::string>().c_str());
    out << line;
  }
  out << "\n";
  auto row = [&](const char* name, const std::string& lv, const std::string& tv, auto&& cell) {
    std::snprintf(line, sizeof line, "%-22s %12s %12s", name, has_log ? lv.c_str() : "-", tv.c_str());
    out << line;
    for (const json& r : runs) {
      std::snprintf(line, sizeof line, " %12s", r.contains("bytes") ? cell(r).c_str() : "-");
      out << line;
    }
    out << "\n";
  };
  auto mean = [](const json& figures) {
    return format_size(static_cast<uint64_t>(figures["mean_request_bytes"].get<double>()));
  };
  auto yes_no = [](const json& v) { return std::string(v.get<bool>() ? "yes" : "no"); };
  row("write requests", num(l["writes"]), num(t["writes"]), [&](const json& r) { return num(r["requests"]); });
  row("write bytes", format_size(l["bytes"]), format_size(t["bytes"]),
      [&](const json& r) { return format_size(r["bytes"]); });
  row("mean request", mean(l), mean(t), [&](const json& r) { return mean(r); });
  row("write s, all ranks", fixed(l["write_time_s"], 4), "-",
      [&](const json& r) { return fixed(r["write_time_all_ranks_s"], 4); });
  row("write s, slowest rank", "-", "-", [&](const json& r) { return fixed(r["time_s"], 4); });
  row("bandwidth (MiB/s)", "-", "-", [&](const json& r) { return fixed(r["bandwidth_mib_s"], 1); });
  row("ranks' requests=trace", "-", "-", [&](const json& r) { return yes_no(r["rank_requests_equal_trace"]); });
  row("ranks' bytes=trace", "-", "-", [&](const json& r) { return yes_no(r["rank_bytes_equal_trace"]); });
  row("verified", "-", "-", [&](const json& r) {
    return std::string(!r["verify_requested"].get<bool>() ? "not asked" : r["verified"].get<bool>() ? "yes" : "FAILED");
  });
  if (t["reads"].get<uint64_t>() > 0) {
    auto read_cell = [](auto&& f) {
      return [f](const json& r) { return r.contains("reads") ? f(r["reads"]) : std::string("-"); };
    };
    row("read requests", num(l["reads"]), num(t["reads"]),
        read_cell([](const json& rd) { return num(rd["requests"]); }));
    row("read bytes", format_size(l["read_bytes"]), format_size(t["read_bytes"]),
        read_cell([](const json& rd) { return format_size(rd["bytes"]); }));
    row("read s, all ranks", fixed(l["read_time_s"], 4), "-",
        read_cell([](const json& rd) { return fixed(rd["read_time_all_ranks_s"], 4); }));
    row("ranks' read bytes=trace", "-", "-",
        read_cell([](const json& rd) { return std::string(rd["rank_bytes_equal_trace"].get<bool>() ? "yes" : "no"); }));
    row("reads verified", "-", "-", read_cell([](const json& rd) {
          return std::string(!rd["verify_requested"].get<bool>() ? "not asked"
                             : rd["verified"].get<bool>()        ? "yes"
                                                                 : "FAILED");
        }));
  }
  out << "  all ranks: time in write calls summed over ranks (the log's: Darshan's write time of every file; a\n"
         "  replay's: its transfer step, collective waits included); slowest rank: a replay's open + write + close.\n"
         "  Requests: the log's write calls; a replay's, its backend's I/O calls (posix: pwrite, mpiio-coll:\n"
         "  MPI-IO calls, strata: its aggregators' file requests).\n";
  if (l["reads"].get<uint64_t>() > 0 && t["reads"].get<uint64_t>() == 0) {
    out << "  the log also reads " << format_size(l["read_bytes"]) << " in " << l["reads"].get<uint64_t>()
        << " request(s) (" << fixed(l["read_time_s"], 4) << " s): not replayed (no DXT read records); --verify reads"
        << " back the writes\n";
  } else if (t["reads"].get<uint64_t>() > 0) {
    out << "  Reads: DXT's read requests of the bytes the trace writes, read from each replay's output after its\n"
           "  write, in "
        << t["read_phases"].get<uint64_t>() << " phase(s) of disjoint requests.\n";
  }
}

void histogram_lines(std::ostringstream& out, const json& report) {
  const json& l = report["log_figures"];
  const json& t = report["trace_figures"];
  if (l["histogram_posix"].empty()) return;
  // Darshan's bins, in its order (the JSON object sorts its keys)
  out << "\naccess sizes of the POSIX files (Darshan's bins), log / trace:\n ";
  for (const char* bin :
       {"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"}) {
    const uint64_t lv = l["histogram_posix"].value(bin, 0ULL), tv = t["histogram_posix"].value(bin, 0ULL);
    if (lv + tv > 0) out << " " << bin << " " << lv << " / " << tv << ";";
  }
  out << "\n";
}

void file_lines(std::ostringstream& out, const json& report) {
  char line[512];
  out << "\nper file (the " << std::min<size_t>(10, report["files"].size()) << " largest of " << report["files"].size()
      << "; --json lists all):\n";
  std::snprintf(line, sizeof line, "  %-36s %-8s %9s %9s %11s %11s %11s %11s\n", "file", "origin", "writes", "(trace)",
                "bytes", "(trace)", "consec/seq", "(trace)");
  out << line;
  std::vector<const json*> files;
  for (const json& f : report["files"]) files.push_back(&f);
  std::stable_sort(files.begin(), files.end(), [](const json* a, const json* b) {
    return (*a)["log"]["bytes"].get<uint64_t>() > (*b)["log"]["bytes"].get<uint64_t>();
  });
  for (size_t i = 0; i < files.size() && i < 10; ++i) {
    const json& f = *files[i];
    std::string name = f["name"];
    if (name.size() > 36) name = "..." + name.substr(name.size() - 33);
    const json& fl = f["log"];
    const json& ft = f["trace"];
    const std::string lcs = fl["consecutive"].is_null() ? "-" : num(fl["consecutive"]) + "/" + num(fl["sequential"]);
    std::snprintf(line, sizeof line, "  %-36s %-8s %9llu %9llu %11s %11s %11s %11s\n", name.c_str(),
                  f["origin"].get<std::string>().c_str(), static_cast<unsigned long long>(fl["writes"].get<uint64_t>()),
                  static_cast<unsigned long long>(ft["writes"].get<uint64_t>()), format_size(fl["bytes"]).c_str(),
                  format_size(ft["bytes"]).c_str(), lcs.c_str(),
                  (num(ft["consecutive"]) + "/" + num(ft["sequential"])).c_str());
    out << line;
  }
}

}  // namespace

std::string replay_table(const json& report) {
  if (report.is_null()) return {};
  std::ostringstream out;
  header_lines(out, report);
  figure_rows(out, report);
  histogram_lines(out, report);
  file_lines(out, report);
  out << "\nfaithful?\n";
  for (const json& n : report["faithful"]) out << "  - " << n.get<std::string>() << "\n";
  return out.str();
}

}  // namespace strata::cli
