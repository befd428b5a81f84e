#include "collective_report.hpp"

#include <cstdio>

#include "common/units.hpp"

namespace strata::cli {

std::string collective_lines(const RunRecord& r) {
  std::string out;
  for (bool write : {true, false}) {
    const PhaseTiming* last = nullptr;
    for (const auto& rep : r.repetitions) {
      const auto& p = write ? rep.write : rep.read;
      if (p && !p->collective.is_null()) last = &*p;
    }
    if (last == nullptr) continue;
    const auto& c = last->collective;
    const auto& t = c["split_s"];
    char line[512];
    std::snprintf(line, sizeof line,
                  "collective, last %s: %llu call(s), %llu round(s) (%s: %llu aggregator(s) x %s); "
                  "I/O %.4f s, communication %.4f s, collective overhead %.4f s, library %.4f s\n",
                  write ? "write" : "read", c["calls"].get<unsigned long long>(), c["rounds"].get<unsigned long long>(),
                  c["rounds_kind"].get<std::string>().c_str(), c["aggregators"].get<unsigned long long>(),
                  format_size(c["round_bytes"].get<uint64_t>()).c_str(), t["io"].get<double>(), t["comm"].get<double>(),
                  t["collective_overhead"].get<double>(), t["library"].get<double>());
    out += line;
  }
  return out;
}

}  // namespace strata::cli
