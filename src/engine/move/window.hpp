// The aggregation buffers: N_buff × S_buff bytes exposed in an MPI RMA window. On main memory
// (every aggregator on dram) MPI allocates them (MPI_Win_allocate: shared memory between ranks
// of a node, RDMA across nodes); when some aggregator holds its buffers on another tier (hbm,
// an mmap'ed nvr or tmpfs file), each rank brings its own memory and MPI_Win_create exposes it.
// Other ranks expose nothing. When every rank of the communicator shares one node's memory,
// MPI allocates the window as shared memory (MPI_Win_allocate_shared) and every rank can reach
// every segment by address: a rank then copies its runs into an aggregator's buffer itself
// (move/packing.hpp), no one-sided operation and no datatype needed.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "arch/memory_tier.hpp"

namespace strata::engine {

// Every window segment is a whole number of these.
constexpr uint64_t kWindowAlignment = 4096;

// The bytes a rank asks MPI_Win_allocate for: `bytes` rounded up to whole pages. MPICH 4.0.2
// lays a node's segments end to end in one shared mapping and hands each rank the address after
// the lower ranks' sizes, but its one-sided operations address that rank from the same sum rounded
// down to 16 bytes: at a rank whose lower ranks' sizes do not add up to a multiple of 16, puts
// land up to 15 bytes before where the rank reads them (staged writes' buffers of S_buff plus an odd
// number of 8-byte runs did). MPI promises no alignment of the segments, so the engine asks only
// for whole pages, under every MPI.
uint64_t window_request_bytes(uint64_t bytes);

class Window {
 public:
  Window() = default;
  // Collective over `comm`: at least `bytes` here (window_request_bytes(bytes) from MPI);
  // `shared`: every rank of `comm` on one node, the segments reachable by address (peer()).
  Window(MPI_Comm comm, uint64_t bytes, bool shared = false);
  // Collective over `comm`: exposes `memory` (null: nothing) and owns it.
  Window(MPI_Comm comm, std::unique_ptr<TierMemory> memory);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  Window(Window&& o) noexcept;
  Window& operator=(Window&& o) noexcept;
  MPI_Win get() const { return win_; }
  std::byte* base() const { return base_; }
  // A shared window: rank `r`'s segment in this process's address space (else null).
  bool shared() const { return !peers_.empty(); }
  std::byte* peer(int r) const { return peers_[static_cast<size_t>(r)]; }
  // The tier memory under the window, when it is not MPI's (else null).
  TierMemory* memory() const { return memory_.get(); }
  // Collective.
  void free();

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;
  std::vector<std::byte*> peers_;       // shared windows: every rank's segment
  std::unique_ptr<TierMemory> memory_;  // freed after the window
};

}  // namespace strata::engine
