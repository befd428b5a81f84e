#include "common/log.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata::log {

namespace {

struct Settings {
  Level threshold = Level::warn;
  bool all_ranks = false;
  int rank = -1;  // -1: not set; the rank in MPI_COMM_WORLD once MPI is initialised
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

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

void set_rank(int rank) { settings().rank = rank; }

bool enabled(Level level) {
  auto& s = settings();
  if (level < s.threshold) return false;
  if (s.all_ranks) return true;
  if (s.rank < 0) {  // a program that never called set_rank(): ask MPI (before MPI_Init, every process speaks)
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init == 0 || fin != 0) return true;
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  }
  return s.rank == 0;
}

void write(Level level, const std::string& message) {
  if (!enabled(level)) return;
  static const char* names[] = {"debug", "info", "warning"};
  std::fprintf(stderr, "strata: %s: %s\n", names[static_cast<int>(level)], message.c_str());
}

}  // namespace strata::log
