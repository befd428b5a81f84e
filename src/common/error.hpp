// Errors and their collective agreement.
//
// Every failure in Strata is a strata::Error (public: include/strata/error.hpp) carrying an exit
// status class. Collective operations run their local part inside `collectively`, which agrees
// on the outcome with one MPI_Allreduce: if any rank failed, every rank throws the same Error
// (the lowest failing rank's message), so all ranks report the same thing and exit with the
// same status.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <utility>

#include "common/watchdog.hpp"
#include "strata/error.hpp"

namespace strata {

[[noreturn]] void throw_usage(const std::string& message);
[[noreturn]] void throw_runtime(const std::string& message);
// Appends strerror(errnum) to `message`.
[[noreturn]] void throw_system(const std::string& message, int errnum);
// Converts an MPI error code to a readable message and throws.
[[noreturn]] void throw_mpi(const std::string& message, int mpi_code);
// Checks an MPI return code.
inline void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) throw_mpi(what, code);
}

// Agrees on the outcome of a step that every rank of `comm` ran. `local` is null on success.
// Throws the lowest failing rank's error on every rank when any rank failed.
void agree(MPI_Comm comm, const Error* local);

// When every rank already knows that rank `failing` failed (for example from an allgather of
// flags), sends its error to all and throws it everywhere. `local` is that rank's error.
[[noreturn]] void raise_from(MPI_Comm comm, int failing, const Error* local);

// Runs `fn` on this rank alone and returns what it threw, as an Error (any other exception as a
// runtime Error), or nothing: for an error to be agreed on or reported later.
template <class F>
std::optional<Error> caught(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    return Error(ErrorKind::runtime, e.what());
  }
  return std::nullopt;
}

// Runs `fn` on this rank, then agrees on the outcome across `comm`. `what` names the step for
// the watchdog (common/watchdog.hpp).
template <class F>
void collectively(MPI_Comm comm, const std::string& what, F&& fn) {
  watchdog::Scope scope(what);
  const std::optional<Error> local = caught(std::forward<F>(fn));
  agree(comm, local ? &*local : nullptr);
}
template <class F>
void collectively(MPI_Comm comm, F&& fn) {
  collectively(comm, "collective step", std::forward<F>(fn));
}

}  // namespace strata
