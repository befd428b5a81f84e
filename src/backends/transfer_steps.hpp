// Pieces shared by the backends: a rank's data in file order, and collective transfer steps.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "decomp/selection.hpp"

namespace strata {

// The rank's buffer as a stream in file order (variables in order, elements ascending).
// When memory already is in file order the user's buffer is used as it is; otherwise data is
// packed into a staging copy before a write and unpacked after a read.
class FileOrderBuffer {
 public:
  // With `stage_if_needed` false, memory order is taken as file order (per-process and
  // per-node files hold a rank's buffer as it is).
  FileOrderBuffer(const Decomposition& d, std::byte* user, Access access, bool stage_if_needed = true);
  // Extents in file order; mem_offset is into data().
  const std::vector<Extent>& extents() const { return extents_; }
  std::byte* data() { return data_; }
  bool staged() const { return !staging_.empty(); }
  // After a read: copies staged data back to the user's buffer.
  void finish_read();

 private:
  std::vector<Extent> extents_;      // file order, offsets into data_
  std::vector<Extent> user_extents_; // same order, offsets into the user's buffer
  std::byte* user_;
  std::byte* data_;
  std::vector<std::byte> staging_;
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

// Largest bytes per single MPI call, so counts stay within int.
constexpr uint64_t kMaxRequestBytes = uint64_t{1} << 30;

}  // namespace strata
