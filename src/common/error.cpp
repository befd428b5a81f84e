#include "common/error.hpp"

#include <cstring>
#include <optional>
#include <vector>

namespace strata {

void throw_usage(const std::string& message) { throw Error(ErrorKind::usage, message); }
void throw_runtime(const std::string& message) { throw Error(ErrorKind::runtime, message); }

void throw_system(const std::string& message, int errnum) {
  throw Error(ErrorKind::runtime, message + ": " + std::strerror(errnum));
}

void throw_mpi(const std::string& message, int mpi_code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_code, text, &len) != MPI_SUCCESS) {
    len = std::snprintf(text, sizeof text, "MPI error %d", mpi_code);
  }
  throw Error(ErrorKind::runtime, message + ": " + std::string(text, static_cast<size_t>(len)));
}

void agree(MPI_Comm comm, const Error* local) {
  watchdog::Scope scope(watchdog::kAgreementScope);
  // A peer the error left inside a collective never comes: after a grace, the watchdog ends the job.
  std::optional<watchdog::HeldError> held;
  if (local != nullptr) held.emplace(local->what(), local->exit_status());
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    int ok;
    int rank;
  } mine{local == nullptr ? 1 : 0, rank}, all{1, 0};
  MPI_Allreduce(&mine, &all, 1, MPI_2INT, MPI_MINLOC, comm);
  if (all.ok == 1) return;
  raise_from(comm, all.rank, local);
}

void raise_from(MPI_Comm comm, int failing, const Error* local) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    int rank;
  } all{failing};
  // The failing rank tells everyone what went wrong.
  int header[2] = {static_cast<int>(ErrorKind::runtime), 0};
  std::string text;
  if (rank == all.rank && local != nullptr) {
    text = local->what();
    header[0] = local->exit_status();
    header[1] = static_cast<int>(text.size());
  }
  MPI_Bcast(header, 2, MPI_INT, all.rank, comm);
  text.resize(static_cast<size_t>(header[1]));
  MPI_Bcast(text.data(), header[1], MPI_CHAR, all.rank, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (size > 1 && text.find("(rank ") == std::string::npos) {
    text += " (rank " + std::to_string(all.rank) + ")";
  }
  throw Error(static_cast<ErrorKind>(header[0]), text);
}

}  // namespace strata
