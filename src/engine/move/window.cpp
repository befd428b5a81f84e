#include "engine/move/window.hpp"

#include <optional>
#include <string>
#include <utility>

#include "common/error.hpp"

namespace strata::engine {

uint64_t window_request_bytes(uint64_t bytes) {
  return (bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment;
}

namespace {

// Runs one window-creating call with errors returned, not fatal: an MPI whose one-sided
// components cannot serve the window (Open MPI 4.1's osc/pt2pt under MPI_THREAD_MULTIPLE)
// answers MPI_ERR_WIN, which the caller turns into an agreed error or a fallback.
template <class F>
int returning_errors(MPI_Comm comm, F&& create) {
  MPI_Errhandler before = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(comm, &before);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int rc = create();
  MPI_Comm_set_errhandler(comm, before);
  MPI_Errhandler_free(&before);
  return rc;
}

// Collective: whether every rank created its part of the window. A window that only some
// ranks got cannot be used, nor freed without the others: it is let go unfreed.
void agree_created(MPI_Comm comm, int rc, MPI_Win& win, const std::string& what) {
  int ok = rc == MPI_SUCCESS ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (ok != 0) return;
  win = MPI_WIN_NULL;
  const std::optional<Error> local = caught([&] {
    if (rc != MPI_SUCCESS) throw_mpi(what, rc);
  });
  agree(comm, local ? &*local : nullptr);
  throw_runtime(what + " failed on another rank");  // not reached: agree() threw
}

}  // namespace

Window::Window(MPI_Comm comm, uint64_t bytes, bool shared) {
  bytes = window_request_bytes(bytes);
  MPI_Info info;
  MPI_Info_create(&info);
  // No accumulate ordering is needed: rounds never overlap within a buffer.
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "no_locks", "true");
  // Each segment where its rank first touches it (its own NUMA domain), not one block.
  if (shared) MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const int rc = returning_errors(comm, [&] {
    return shared ? MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, comm, &base, &win_)
                  : MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, info, comm, &base, &win_);
  });
  MPI_Info_free(&info);
  agree_created(
      comm, rc, win_,
      std::string(shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate") + " of " + std::to_string(bytes) + " bytes");
  base_ = static_cast<std::byte*>(base);
  if (shared) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    peers_.resize(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) {
      MPI_Aint segment = 0;
      int unit = 1;
      void* at = nullptr;
      check_mpi(MPI_Win_shared_query(win_, r, &segment, &unit, &at), "MPI_Win_shared_query");
      peers_[static_cast<size_t>(r)] = static_cast<std::byte*>(at);
    }
  }
}

Window::Window(MPI_Comm comm, std::unique_ptr<TierMemory> memory) : memory_(std::move(memory)) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  MPI_Info_set(info, "no_locks", "true");
  void* base = memory_ ? memory_->data() : nullptr;
  const MPI_Aint bytes = memory_ ? static_cast<MPI_Aint>(memory_->size()) : 0;
  const int rc = returning_errors(comm, [&] { return MPI_Win_create(base, bytes, 1, info, comm, &win_); });
  MPI_Info_free(&info);
  agree_created(comm, rc, win_, "MPI_Win_create of " + std::to_string(bytes) + " bytes");
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
      peers_(std::move(o.peers_)),
      memory_(std::move(o.memory_)) {}

Window& Window::operator=(Window&& o) noexcept {
  if (this != &o) {
    free();
    win_ = std::exchange(o.win_, MPI_WIN_NULL);
    base_ = std::exchange(o.base_, nullptr);
    peers_ = std::move(o.peers_);
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
  peers_.clear();
  memory_.reset();
}

}  // namespace strata::engine
