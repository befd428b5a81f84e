// The engine's hints, described: every key a Phase accepts (the MPI_Info-style keys of
// strata.hpp's "Hints" comment), with the values it takes and what it means. What
// `strata info --catalogue` lists under "engine hints", and what a program may show its users.
#pragma once

#include <vector>

namespace strata {

struct HintDescription {
  const char* name;     // "strata_buffers"
  const char* values;   // "1..64"
  const char* meaning;  // "N_buff, buffers per aggregator"
};

// Every engine hint, in a fixed order.
const std::vector<HintDescription>& engine_hints();

}  // namespace strata
