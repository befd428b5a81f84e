// What strata plan found (a dry run of the engine's plan), then its renderings: the tables for
// people and the JSON document.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "strata/strata.hpp"

namespace strata::cli {

struct PlanResult {
  std::string kernel;
  nlohmann::json params;  // the kernel's parameters, as strata run records them
  int ranks = 1;
  PlacementReport placement;
  PhaseStats stats;  // the phase's, closed without writing
};

std::string plan_text(const PlanResult& r);
nlohmann::json plan_json(const PlanResult& r);

}  // namespace strata::cli
