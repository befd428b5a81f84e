// What this build of Strata offers, for programs (`strata info --catalogue --json`): the kernels
// with their options, the run options, the backend table with each row's capabilities, the
// layouts and the hints. The harness (python/strata/catalogue.py) and the tests read it instead
// of scraping help text.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "run/run_options.hpp"

namespace strata {

nlohmann::json catalogue();

// The catalogue's "run_options": one entry per row of `specs`; a campaign-wide switch's entry has
// "campaign_switch" with its report lines and labels.
nlohmann::json run_options_json(const std::vector<RunOptionSpec>& specs = run_option_specs());

}  // namespace strata
