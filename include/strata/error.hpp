// Strata's error type, C++ API: every failure in the library is a strata::Error carrying the
// class of the failure, which is also the `strata` program's exit status. Collective calls
// agree on failures, so every rank throws the same Error (the lowest failing rank's message).
#pragma once

#include <stdexcept>
#include <string>

namespace strata {

enum class ErrorKind : int {
  runtime = 1,       // I/O or system failure
  usage = 2,         // bad input: options, hints, sizes, unsupported layout
  verification = 3,  // data read back differs from what was written
  timeout = 4,       // the watchdog (STRATA_TIMEOUT) found a rank stuck in a collective operation
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_status() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

}  // namespace strata
