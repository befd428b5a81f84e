#include "json_file.hpp"

#include <fstream>

#include "common/error.hpp"

namespace strata::cli {

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  std::ofstream f(path);
  f << doc.dump(2) << "\n";
  if (!f) throw_usage("cannot write the JSON file \"" + path + "\"");
}

}  // namespace strata::cli
