// The bytes one rank has written through gathered collective calls and not yet put on the file:
// disjoint runs by file offset, their data copied (MPI lets the caller reuse its buffer as soon
// as the call returns) into an arena of large blocks, so a call's millions of small runs cost
// one copy, not an allocation each. A later write replaces the overlapped bytes of earlier ones
// (the later write wins, as on the file), and a run that continues the previous one on the file
// and in the arena is merged with it, so IOR's 4 KiB transfers of a block become one run.
//
// Runs are kept in a vector, appended as they come. A run that does not lie past every earlier one
// (HDF5 writes datasets in the order a program names them, not in file order) only marks the
// vector unsorted; the order and the overlaps are resolved once, when the runs are next read
// (for_each, overlaps, runs, bytes): a sort, and a replay in write order only where runs overlap.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace strata::preload {

class PendingRuns {
 public:
  void insert(uint64_t offset, uint64_t length, const char* data);
  // The bytes pending (resolves the order first).
  uint64_t bytes() const;
  // At least bytes(), at most the sum of every inserted run: no sort (for a budget check after
  // every call).
  uint64_t held() const { return bytes_; }
  bool empty() const { return runs_.empty(); }
  size_t runs() const;
  // Whether any pending byte lies in [offset, offset + length).
  bool overlaps(uint64_t offset, uint64_t length) const;
  // One past the last pending byte (0 when empty).
  uint64_t end() const { return end_; }
  // Calls f(offset, length, data) for every run in increasing offset order.
  template <class F>
  void for_each(F&& f) const {
    resolve();
    for (const Run& r : runs_) f(r.offset, r.length, r.data);
  }
  void clear();

 private:
  struct Run {
    uint64_t offset = 0;
    uint64_t length = 0;
    const char* data = nullptr;
  };
  const char* keep(const char* data, uint64_t length);
  // Sorts the runs by offset, the later write winning where they overlap; merges continuations.
  void resolve() const;

  // Disjoint and sorted unless sorted_ is false; then in write order.
  mutable std::vector<Run> runs_;
  mutable bool sorted_ = true;
  mutable uint64_t bytes_ = 0;  // exact when sorted_, else the sum of the inserted lengths
  uint64_t end_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* tail_ = nullptr;  // free space of the last block
  uint64_t tail_left_ = 0;
};

}  // namespace strata::preload
