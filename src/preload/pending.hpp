// The bytes one rank has written through gathered collective calls and not yet put on the file:
// disjoint runs by file offset, their data copied (MPI lets the caller reuse its buffer as soon
// as the call returns) into an arena of large blocks, so a call's millions of small runs cost
// one copy, not an allocation each. A later write replaces the overlapped bytes of earlier ones
// (the later write wins, as on the file), and a run that continues the previous one on the file
// and in the arena is merged with it, so IOR's 4 KiB transfers of a block become one run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace strata::preload {

class PendingRuns {
 public:
  void insert(uint64_t offset, uint64_t length, const char* data);
  uint64_t bytes() const { return bytes_; }
  bool empty() const { return ordered_.empty() && runs_.empty(); }
  size_t runs() const { return mapped_ ? runs_.size() : ordered_.size(); }
  // Whether any pending byte lies in [offset, offset + length).
  bool overlaps(uint64_t offset, uint64_t length) const;
  // One past the last pending byte (0 when empty).
  uint64_t end() const;
  // Calls f(offset, length, data) for every run in increasing offset order.
  void for_each(const std::function<void(uint64_t, uint64_t, const char*)>& f) const;
  void clear();

 private:
  struct Piece {
    uint64_t length = 0;
    const char* data = nullptr;
  };
  struct Run {
    uint64_t offset = 0;
    uint64_t length = 0;
    const char* data = nullptr;
  };
  const char* keep(const char* data, uint64_t length);
  void to_map();

  // While every run came past all earlier ones (a program writing forward: the usual case), a
  // sorted vector, appended to; from the first run that did not, an ordered map (mapped_).
  std::vector<Run> ordered_;
  bool mapped_ = false;
  std::map<uint64_t, Piece> runs_;
  uint64_t bytes_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* tail_ = nullptr;  // free space of the last block
  uint64_t tail_left_ = 0;
};

}  // namespace strata::preload
