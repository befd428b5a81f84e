// What this build of Strata offers, for programs (`strata info --catalogue --json`): the kernels
// with their options, the run options, the backend table with each row's capabilities, the
// layouts and the hints. The harness (python/strata/catalogue.py) and the tests read it instead
// of scraping help text.
#pragma once

#include <nlohmann/json.hpp>

namespace strata {

nlohmann::json catalogue();

}  // namespace strata
