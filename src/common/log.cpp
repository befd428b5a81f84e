#include "common/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata::log {

namespace {

struct Settings {
  Level threshold = Level::warn;
  bool all_ranks = false;
  int rank = 0;
  Settings() {
    if (const char* v = std::getenv("STRATA_LOG")) {
      if (std::strcmp(v, "debug") == 0) threshold = Level::debug;
      if (std::strcmp(v, "info") == 0) threshold = Level::info;
    }
    if (const char* v = std::getenv("STRATA_LOG_ALL_RANKS")) all_ranks = std::strcmp(v, "1") == 0;
  }
};

Settings& settings() {
  static Settings s;  // read once from the environment; the rank is set after MPI_Init
  return s;
}

}  // namespace

void set_rank(int rank) { settings().rank = rank; }

bool enabled(Level level) {
  const auto& s = settings();
  return level >= s.threshold && (s.all_ranks || s.rank == 0);
}

void write(Level level, const std::string& message) {
  if (!enabled(level)) return;
  static const char* names[] = {"debug", "info", "warning"};
  std::fprintf(stderr, "strata: %s: %s\n", names[static_cast<int>(level)], message.c_str());
}

}  // namespace strata::log
