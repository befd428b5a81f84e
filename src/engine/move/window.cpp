#include "engine/move/window.hpp"

#include <utility>

#include "common/error.hpp"

namespace strata::engine {

uint64_t window_request_bytes(uint64_t bytes) {
  return (bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment;
}

Window::Window(MPI_Comm comm, uint64_t bytes) {
  bytes = window_request_bytes(bytes);
  MPI_Info info;
  MPI_Info_create(&info);
  // No accumulate ordering is needed: rounds never overlap within a buffer.
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "no_locks", "true");
  void* base = nullptr;
  int rc = MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, info, comm, &base, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) throw_mpi("MPI_Win_allocate of " + std::to_string(bytes) + " bytes", rc);
  base_ = static_cast<std::byte*>(base);
}

Window::Window(MPI_Comm comm, std::unique_ptr<TierMemory> memory) : memory_(std::move(memory)) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "no_locks", "true");
  void* base = memory_ ? memory_->data() : nullptr;
  const MPI_Aint bytes = memory_ ? static_cast<MPI_Aint>(memory_->size()) : 0;
  int rc = MPI_Win_create(base, bytes, 1, info, comm, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) throw_mpi("MPI_Win_create of " + std::to_string(bytes) + " bytes", rc);
  base_ = static_cast<std::byte*>(base);
}

Window::~Window() {
  int finalized = 0;
  MPI_Finalized(&finalized);  // an engine outliving MPI_Finalize must not call MPI
  if (win_ != MPI_WIN_NULL && !finalized) MPI_Win_free(&win_);
}

Window::Window(Window&& o) noexcept
    : win_(std::exchange(o.win_, MPI_WIN_NULL)),
      base_(std::exchange(o.base_, nullptr)),
      memory_(std::move(o.memory_)) {}

Window& Window::operator=(Window&& o) noexcept {
  if (this != &o) {
    free();
    win_ = std::exchange(o.win_, MPI_WIN_NULL);
    base_ = std::exchange(o.base_, nullptr);
    memory_ = std::move(o.memory_);
  }
  return *this;
}

void Window::free() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (win_ != MPI_WIN_NULL && !finalized) MPI_Win_free(&win_);
  win_ = MPI_WIN_NULL;
  base_ = nullptr;
  memory_.reset();
}

}  // namespace strata::engine
