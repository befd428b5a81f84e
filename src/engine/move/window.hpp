// The aggregation buffers: N_buff × S_buff bytes exposed in an MPI RMA window
// (MPI_Win_allocate: shared memory between ranks of a node, RDMA across nodes; other ranks
// expose nothing).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace strata::engine {

class Window {
 public:
  Window() = default;
  // Collective over `comm`.
  Window(MPI_Comm comm, uint64_t bytes);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  Window(Window&& o) noexcept;
  Window& operator=(Window&& o) noexcept;
  MPI_Win get() const { return win_; }
  std::byte* base() const { return base_; }
  // Collective.
  void free();

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;
};

}  // namespace strata::engine
