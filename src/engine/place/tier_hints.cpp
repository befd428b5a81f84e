#include "engine/place/tier_hints.hpp"

#include "common/error.hpp"
#include "common/hash.hpp"
#include "engine/place/placement.hpp"

namespace strata::engine {

namespace {

bool parse_bool(const std::string& key, const std::string& v) {
  if (v == "true" || v == "1" || v == "enable") return true;
  if (v == "false" || v == "0" || v == "disable") return false;
  throw_usage("hint " + key + "=" + v + " must be true or false");
}

}  // namespace

uint64_t TierHints::hash() const {
  const uint64_t flags = (forced ? static_cast<uint64_t>(*forced) + 1 : 0) | (persistent ? 1u << 4 : 0) |
                         (node_local ? 1u << 5 : 0) | (drain ? 1u << 6 : 0) | (cost_table ? 1u << 7 : 0) |
                         (dry_run ? 1u << 8 : 0) | (in_place ? 1u << 9 : 0);
  return flags ^ (drain_target.empty() ? 0 : fnv1a(drain_target) << 10);
}

TierHints parse_tier_hints(const std::vector<std::pair<std::string, std::string>>& hints) {
  TierHints h;
  bool target_given = false;
  h.forced = forced_tier_from_environment();
  for (const auto& [k, v] : hints) {
    if (k == "strata_aggr_tier") {
      h.forced = parse_tier(v);
      if (!h.forced) throw_usage("hint strata_aggr_tier=" + v + " is not a tier (hbm, dram, tmpfs or nvr)");
    } else if (k == "strata_persistency") {
      if (v != "job" && v != "none") throw_usage("hint strata_persistency=" + v + " must be job or none");
      h.persistent = v == "job";
    } else if (k == "strata_target") {
      if (v != "node-local" && v != "shared" && v != "in-place") {
        throw_usage("hint strata_target=" + v + " must be shared, node-local or in-place");
      }
      h.node_local = v == "node-local";
      target_given = v != "node-local";
      h.in_place = v == "in-place";
    } else if (k == "strata_drain") {
      if (v.empty()) throw_usage("hint strata_drain= needs a PATH (the target on the shared file system) or true");
      const bool flag = v == "true" || v == "1" || v == "enable" || v == "false" || v == "0" || v == "disable";
      h.drain = flag ? parse_bool(k, v) : true;
      h.drain_target = flag ? std::string() : v;
    } else if (k == "strata_cost_table") {
      h.cost_table = parse_bool(k, v);
    } else if (k == "strata_dry_run") {
      h.dry_run = parse_bool(k, v);
    }
  }
  if (h.drain && target_given) {
    throw_usage(
        "hint strata_drain writes node-local storage first: it cannot go with strata_target=shared or in-place");
  }
  if (h.drain) h.node_local = true;
  return h;
}

std::string node_local_output(const std::string& path) { return path + ".node-local"; }

}  // namespace strata::engine
