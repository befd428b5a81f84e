#include "engine/write_history.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "engine/plan_cache.hpp"

namespace strata::engine {

namespace {

constexpr int kVersion = 1;

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

bool parse_hex(const nlohmann::json& j, uint64_t& v) {
  if (!j.is_string()) return false;
  const std::string s = j.get<std::string>();
  char* end = nullptr;
  v = std::strtoull(s.c_str(), &end, 16);
  return !s.empty() && end != nullptr && *end == '\0';
}

struct Stored {
  uint64_t figures = 0;
  WriteRecord record;
};

std::vector<Stored> parse_all(const std::string& text) {
  std::vector<Stored> out;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("strata_write_history", 0) != kVersion) return out;
  const auto records = j.find("records");
  if (records == j.end() || !records->is_array()) return out;
  for (const nlohmann::json& r : *records) {
    Stored s;
    if (!r.is_object() || !parse_hex(r.value("figures", nlohmann::json()), s.figures) ||
        !parse_hex(r.value("key", nlohmann::json()), s.record.key))
      continue;
    const auto ratios = r.find("ratios");
    const auto time = r.find("time");
    const auto recycled = r.find("recycled");
    if (ratios == r.end() || !ratios->is_array() || time == r.end() || !time->is_number_integer() ||
        recycled == r.end() || !recycled->is_boolean())
      continue;
    for (const nlohmann::json& x : *ratios) {
      if (x.is_number()) s.record.ratios.push_back(x.get<double>());
    }
    s.record.time = time->get<int64_t>();
    s.record.recycled = recycled->get<bool>();
    if (!s.record.ratios.empty()) out.push_back(std::move(s));
  }
  return out;
}

bool fresh(int64_t time, int64_t now) { return time <= now + 60 && now - time <= kMaxAge_s; }

}  // namespace

std::string read_write_history(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return in ? s.str() : std::string();
}

std::string write_history_path() {
  if (const char* e = std::getenv("STRATA_WRITE_HISTORY"); e != nullptr && *e != '\0') {
    const std::string v = e;
    return v == "0" || v == "off" ? std::string() : v;
  }
  const std::string machine = machine_cache_path();
  if (machine.empty()) return {};
  std::filesystem::path p(machine);
  std::string name = p.filename().string();  // machine-HOST.toml
  if (name.rfind("machine-", 0) == 0) name = name.substr(8);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0) name.resize(name.size() - 5);
  return (p.parent_path() / ("writes-" + name + ".json")).string();
}

uint64_t figures_identity(const IoFigures& f) {
  KeyHasher h;
  h.add(static_cast<uint64_t>(f.probed_at));
  h.add(static_cast<uint64_t>(f.cores));
  h.add(static_cast<uint64_t>(f.curve_writers));
  for (const std::vector<WriteFigure>* curve : {&f.write, &f.rewrite}) {
    h.add(static_cast<uint64_t>(curve->size()));
    for (const WriteFigure& w : *curve) {
      h.add(w.request_bytes);
      h.add(&w.seconds, sizeof w.seconds);
    }
  }
  const double figures[] = {f.put_latency_s, f.put_bandwidth_Bps, f.put_run_s, f.fence_s,  f.collective_s,
                            f.memcpy_Bps,    f.copy_run_s,        f.hash_Bps,  f.create_s, f.rename_s,
                            f.spread_run_s,  f.fresh_Bps,         f.fsync_Bps};
  h.add(figures, sizeof figures);
  return h.digest();
}

std::vector<WriteRecord> parse_write_history(const std::string& text, uint64_t figures, int64_t now) {
  std::vector<WriteRecord> out;
  for (Stored& s : parse_all(text)) {
    if (s.figures == figures && fresh(s.record.time, now)) out.push_back(std::move(s.record));
  }
  return out;
}

bool store_write_history(const std::string& path, uint64_t figures, const std::vector<WriteRecord>& learned,
                         int64_t now) {
  if (path.empty() || learned.empty()) return true;
  std::vector<Stored> all;
  for (Stored& s : parse_all(read_write_history(path))) {
    const bool replaced =
        s.figures == figures && std::any_of(learned.begin(), learned.end(), [&](const WriteRecord& w) {
          return w.key == s.record.key && w.recycled == s.record.recycled;
        });
    if (!replaced && fresh(s.record.time, now)) all.push_back(std::move(s));
  }
  for (const WriteRecord& w : learned) all.push_back({figures, w});
  // The newest first, kMaxRecords of them.
  std::stable_sort(all.begin(), all.end(),
                   [](const Stored& a, const Stored& b) { return a.record.time > b.record.time; });
  if (all.size() > kMaxRecords) all.resize(kMaxRecords);
  nlohmann::json records = nlohmann::json::array();
  for (const Stored& s : all) {
    records.push_back({{"figures", hex(s.figures)},
                       {"key", hex(s.record.key)},
                       {"recycled", s.record.recycled},
                       {"ratios", s.record.ratios},
                       {"time", s.record.time}});
  }
  const nlohmann::json j = {{"strata_write_history", kVersion}, {"records", records}};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Written aside then renamed: a job that starts meanwhile reads the old file or the new one.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(1) << '\n';
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace strata::engine
