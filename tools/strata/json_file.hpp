// The JSON file a command writes with --json FILE (rank 0): the document, indented, or a usage
// error naming the file when it cannot be written.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace strata::cli {

void write_json_file(const std::string& path, const nlohmann::json& doc);

}  // namespace strata::cli
