#include "arch/node_local.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/error.hpp"

namespace strata {

std::string node_local_root() {
  const char* root = std::getenv("STRATA_LOCAL_DIR");
  return root != nullptr && *root != '\0' ? std::string(root) : std::string("/tmp/strata-local");
}

std::string node_local_dir(int node) {
  std::filesystem::path dir = std::filesystem::path(node_local_root()) / std::to_string(node);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw_runtime("cannot create the node-local directory \"" + dir.string() + "\"" +
                  (ec ? ": " + ec.message() : std::string(": not a directory")) + " (set STRATA_LOCAL_DIR)");
  }
  return dir.string();
}

}  // namespace strata
