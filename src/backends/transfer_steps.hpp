// Pieces shared by the backends: a rank's data in file order, and collective transfer steps.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "decomp/selection.hpp"

namespace strata {

// A rank's decomposition in file order (variables in order, elements ascending), worked out
// once when a backend is made, as PIO does when a decomposition is initialised and E3SM-IO when it
// reads its map: the flattened extents sorted, and where memory order differs, the pieces to copy
// between the user's buffer and a staged copy in file order. Runs that meet in the file are
// merged once staged (unless the decomposition keeps its blocks apart): E3SM's F case maps have
// 4.2 million runs in memory order and 2 million in file order, and every library below (HDF5's
// selections, PnetCDF's requests, OMPIO's sort of its aggregators' pieces) pays by the run.
class FileOrder {
 public:
  // With `stage_if_needed` false, memory order is taken as file order (per-process and
  // per-node files hold a rank's buffer as it is).
  explicit FileOrder(const Decomposition& d, bool stage_if_needed = true);
  // Extents in file order; mem_offset is into the staged copy when staged(), else the user's buffer.
  const std::vector<Extent>& extents() const { return extents_; }
  bool staged() const { return !pieces_.empty(); }
  // When staged(): what to copy, in file order (`user`: offset in the user's buffer; `staged`:
  // in the staged copy, where the pieces follow each other).
  struct Piece {
    uint64_t user = 0;
    uint64_t staged = 0;
    uint64_t bytes = 0;
  };
  const std::vector<Piece>& pieces() const { return pieces_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<Extent> extents_;
  std::vector<Piece> pieces_;
  uint64_t bytes_ = 0;
};

// The rank's buffer as a stream in file order, for one transfer: the user's buffer itself when
// memory already is in file order; otherwise a staging copy, packed before a write and unpacked
// after a read (finish_read).
class FileOrderBuffer {
 public:
  FileOrderBuffer(const FileOrder& order, std::byte* user, Access access);
  // Extents in file order; mem_offset is into data().
  const std::vector<Extent>& extents() const { return order_.extents(); }
  std::byte* data() { return data_; }
  bool staged() const { return staging_ != nullptr; }
  // After a read: copies staged data back to the user's buffer.
  void finish_read();

 private:
  const FileOrder& order_;
  std::byte* user_;
  std::byte* data_;
  std::unique_ptr<std::byte[]> staging_;  // left uninitialised: every byte is written before it is read
};

// Collective calls move at most `step_bytes` per rank each; every rank makes `count` calls.
struct TransferSteps {
  uint64_t step_bytes = 0;
  uint64_t count = 0;
};

// The transfer size of the decomposition (or 1 GiB, keeping every count within int), and the
// largest number of steps over `comm`. Collective.
TransferSteps transfer_steps(MPI_Comm comm, const Decomposition& d);
// The same for this rank alone (count: its own steps), for a backend that agrees on the count
// together with something else. Local.
TransferSteps local_transfer_steps(const Decomposition& d);

// IOR's stonewalling (-D, --deadline SECONDS): once the seconds have passed since the transfer
// began, no further request starts, and the backend reports what moved. Independent requests stop
// on each rank's own clock. A collective call is made by every rank or by none, so with a
// communicator rank 0 decides and broadcasts its decision before each call (IOR's rule for -c);
// reached() is then collective, called by every rank as many times. Without --deadline it is
// never reached and costs nothing.
class Stonewall {
 public:
  explicit Stonewall(const std::string& seconds, MPI_Comm collective = MPI_COMM_NULL);
  bool reached();

 private:
  double seconds_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::chrono::steady_clock::time_point start_;
  bool reached_ = false;
};

// Largest bytes per single MPI call, so counts stay within int.
constexpr uint64_t kMaxRequestBytes = uint64_t{1} << 30;

}  // namespace strata
