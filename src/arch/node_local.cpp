#include "arch/node_local.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace strata {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

[[noreturn]] void refuse(const std::string& dir, const std::string& why) {
  throw_runtime("node-local directory \"" + dir + "\" " + why +
                " (node-local data must go to a directory of your own: remove it, or set STRATA_LOCAL_DIR to one)");
}

}  // namespace

std::string node_local_root() {
  const std::string chosen = env("STRATA_LOCAL_DIR");
  if (!chosen.empty()) return chosen;
  std::string base = env("SLURM_TMPDIR");
  if (base.empty()) base = env("TMPDIR");
  if (base.empty()) base = "/tmp";
  return (std::filesystem::path(base) / ("strata-" + std::to_string(::geteuid()))).string();
}

void check_private_directory(const std::string& dir, bool create) {
  if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw_runtime("cannot create the node-local directory \"" + dir + "\": " + std::strerror(errno) +
                  " (set STRATA_LOCAL_DIR to a folder you can write)");
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    throw_runtime("cannot examine the node-local directory \"" + dir + "\": " + std::strerror(errno) +
                  " (set STRATA_LOCAL_DIR to a folder you can write)");
  }
  if (S_ISLNK(st.st_mode)) refuse(dir, "is a symbolic link");
  if (!S_ISDIR(st.st_mode)) refuse(dir, "is not a directory");
  if (st.st_uid != ::geteuid()) refuse(dir, "belongs to another user (uid " + std::to_string(st.st_uid) + ")");
}

std::string node_local_dir(int node) {
  const std::string root = node_local_root();
  // The root's own parents are the user's choice (STRATA_LOCAL_DIR) or the system's scratch;
  // only the folders this code creates and writes into are checked.
  if (!env("STRATA_LOCAL_DIR").empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(root).parent_path(), ec);
  }
  check_private_directory(root, true);
  const std::string dir = (std::filesystem::path(root) / std::to_string(node)).string();
  check_private_directory(dir, true);
  return dir;
}

}  // namespace strata
