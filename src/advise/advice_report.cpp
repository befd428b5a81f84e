#include "advise/advice_report.hpp"

#include <sstream>

#include "common/units.hpp"

namespace strata::advise {

namespace {

nlohmann::json hints_object(const Hints& h) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : h) j[k] = v;
  return j;
}

std::string hint_line(const Hints& h, const std::string& sep, const std::string& prefix = "") {
  std::string out;
  for (const auto& [k, v] : h) out += (out.empty() ? "" : sep) + prefix + k + (prefix.empty() ? "=" : " ") + v;
  return out;
}

// Wraps `text` into lines of at most `width` characters, each after `indent`.
std::string wrap(const std::string& text, size_t width, const std::string& indent, bool indent_first) {
  std::istringstream words(text);
  std::string word, line, out;
  bool first = true;
  auto flush = [&] {
    out += (first && !indent_first ? "" : indent) + line + "\n";
    first = false;
    line.clear();
  };
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) flush();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) flush();
  return out;
}

std::string pad(const std::string& s, size_t n) { return s.size() >= n ? s + " " : s + std::string(n - s.size(), ' '); }

}  // namespace

nlohmann::json input_json(const AdviceInput& in) {
  return {
      {"fs_type", in.fs_type},
      {"targets", in.targets},
      {"nodes", in.nodes},
      {"ranks_per_node", in.ranks_per_node},
      {"block_bytes", in.block_bytes},
      {"stripe_ratio", in.stripe_divisor == 1 ? "1" : "1/" + std::to_string(in.stripe_divisor)},
      {"stripe_count_fit", in.rule ? "calibrated: " + in.rule->text : fit_name(in.fit)},
      {"variables", in.variables},
      {"dataset_bytes", dataset_size(in)},
      {"strategy", strategy_name(in.strategy)},
      {"files", in.files},
      {"memory_budget_bytes", in.memory_budget_bytes},
  };
}

nlohmann::json to_json(const Advice& a, const AdviceInput& in) {
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& r : a.reasons) reasons.push_back({{"rule", r.rule}, {"advice", r.advice}, {"source", r.source}});
  return {
      {"fs_type", a.fs_type},
      {"striping_applies", a.striping_applies},
      {"stripe_count", a.stripe_count},
      {"stripe_size_bytes", a.stripe_size_bytes},
      {"cb_buffer_size_bytes", a.cb_buffer_size_bytes},
      {"cb_nodes", a.cb_nodes},
      {"cb_config_list", a.cb_config_list},
      {"lock_ahead_multiplier", a.lock_ahead_multiplier},
      {"layout", layout_name(a.layout)},
      {"hints", hints_object(a.all_hints())},
      {"romio_hints", hints_object(a.romio_hints)},
      {"ompio_hints", hints_object(a.ompio_hints)},
      {"ompio_mca", hints_object(a.ompio_mca)},
      {"cray_hints", hints_object(a.cray_hints)},
      {"lfs_setstripe", in.fs_type == "lustre" ? a.stripe_command : ""},
      {"stripe_command", a.stripe_command},
      {"mpich_mpiio_hints", a.mpich_mpiio_hints},
      {"reasons", reasons},
      {"input", input_json(in)},
  };
}

std::string to_table(const Advice& a, const AdviceInput& in) {
  std::ostringstream o;
  o << "Strata advisor: " << in.fs_type;
  if (in.targets > 0) o << ", " << in.targets << " OSTs";
  o << "; " << in.nodes << " node(s) x " << in.ranks_per_node << " rank(s); block " << format_size(in.block_bytes)
    << " per rank per write; " << in.variables << " variable(s) of " << format_size(dataset_size(in)) << ", "
    << strategy_name(in.strategy) << "\n\n";
  const size_t w = 22;
  if (a.striping_applies) {
    o << pad("stripe count", w) << a.stripe_count << "\n";
    o << pad("stripe size", w) << format_size(a.stripe_size_bytes) << " (" << a.stripe_size_bytes << " B)\n";
  } else {
    o << pad("striping", w) << "does not apply on " << a.fs_type << " (see why, below)\n";
  }
  o << pad("cb_buffer_size", w) << format_size(a.cb_buffer_size_bytes) << " (" << a.cb_buffer_size_bytes << " B)\n";
  o << pad("cb_nodes", w) << (a.cb_nodes > 0 ? std::to_string(a.cb_nodes) : "library default") << "\n";
  if (!a.cb_config_list.empty()) o << pad("cb_config_list", w) << a.cb_config_list << "\n";
  o << pad("lock-ahead multiplier", w)
    << (a.lock_ahead_multiplier > 0 ? std::to_string(a.lock_ahead_multiplier) : "no advice") << "\n";
  o << pad("layout", w) << layout_name(a.layout) << "\n\n";

  o << pad("ROMIO hints", w) << hint_line(a.romio_hints, ",") << "\n";
  o << pad("OMPIO hints", w) << hint_line(a.ompio_hints, ",") << "\n";
  o << pad("Open MPI MCA", w) << hint_line(a.ompio_mca, " ", "--mca ") << "\n";
  if (!a.stripe_command.empty()) o << pad(in.fs_type == "lustre" ? "lfs" : "beegfs-ctl", w) << a.stripe_command << "\n";
  o << pad("Cray MPICH", w) << "MPICH_MPIIO_HINTS=\"" << a.mpich_mpiio_hints << "\"\n";
  o << "\n";

  o << "why\n";
  for (const auto& r : a.reasons) {
    o << "  " << pad(r.rule, w) << wrap(r.advice, 76, std::string(w + 2, ' '), false);
    o << std::string(w + 2, ' ') << "[" << r.source << "]\n";
  }
  return o.str();
}

}  // namespace strata::advise
