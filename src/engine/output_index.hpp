// Writing the output index (the reading side is public, in strata/strata.hpp).
#pragma once

#include <string>

#include "strata/strata.hpp"

namespace strata::engine {

// Writes PATH.strata-index.json atomically (temporary file, then rename).
void write_output_index(const std::string& output, const OutputIndex& index);
// A file named in the index, relative to the output's folder.
std::string resolve_indexed_path(const std::string& output, const std::string& relative);

}  // namespace strata::engine
