// Diagnostics on stderr, controlled by STRATA_LOG=debug|info|warn (default warn).
// Rank 0 speaks unless STRATA_LOG_ALL_RANKS=1.
#pragma once

#include <string>

namespace strata::log {

enum class Level { debug = 0, info = 1, warn = 2 };

void set_rank(int rank);
bool enabled(Level level);
void write(Level level, const std::string& message);
inline void debug(const std::string& m) { write(Level::debug, m); }
inline void info(const std::string& m) { write(Level::info, m); }
inline void warn(const std::string& m) { write(Level::warn, m); }
// "12.345 ms": a duration in seconds as the messages print it.
std::string milliseconds(double seconds);

}  // namespace strata::log
