#include "preload/pending.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>

namespace strata::preload {

namespace {

constexpr uint64_t kBlock = uint64_t{8} << 20;

struct Piece {
  uint64_t length = 0;
  const char* data = nullptr;
};

// Writes run [offset, offset + length) over the disjoint runs of m: the bytes it overlaps are cut
// out of them (the later write wins).
void overwrite(std::map<uint64_t, Piece>& m, uint64_t offset, uint64_t length, const char* data) {
  const uint64_t end = offset + length;
  auto it = m.lower_bound(offset);
  if (it != m.begin()) {
    auto prev = std::prev(it);
    const uint64_t pend = prev->first + prev->second.length;
    if (pend > offset) {
      if (pend > end)  // the new run lies inside: the tail stays a run of its own
        m.emplace(end, Piece{pend - end, prev->second.data + (end - prev->first)});
      prev->second.length = offset - prev->first;
    }
  }
  it = m.lower_bound(offset);
  while (it != m.end() && it->first < end) {
    const uint64_t rend = it->first + it->second.length;
    if (rend <= end) {  // wholly replaced
      it = m.erase(it);
    } else {  // its head is replaced: the rest stays
      const Piece rest{rend - end, it->second.data + (end - it->first)};
      m.erase(it);
      m.emplace(end, rest);
      break;
    }
  }
  m.emplace(offset, Piece{length, data});
}

}  // namespace

const char* PendingRuns::keep(const char* data, uint64_t length) {
  if (length > tail_left_) {
    const uint64_t size = std::max(length, kBlock);
    blocks_.emplace_back(new char[size]);
    tail_ = blocks_.back().get();
    tail_left_ = size;
  }
  char* at = tail_;
  std::memcpy(at, data, length);
  tail_ += length;
  tail_left_ -= length;
  return at;
}

void PendingRuns::insert(uint64_t offset, uint64_t length, const char* source) {
  if (length == 0) return;
  const char* data = keep(source, length);
  bytes_ += length;
  if (sorted_ && (runs_.empty() || offset >= end_)) {  // past everything gathered: an append
    Run* last = runs_.empty() ? nullptr : &runs_.back();
    if (last != nullptr && last->offset + last->length == offset && last->data + last->length == data) {
      last->length += length;
    } else {
      runs_.push_back({offset, length, data});
    }
  } else {
    runs_.push_back({offset, length, data});
    sorted_ = false;
  }
  end_ = std::max(end_, offset + length);
}

void PendingRuns::resolve() const {
  if (sorted_) return;
  std::vector<Run> by_offset(runs_);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const Run& a, const Run& b) { return a.offset < b.offset; });
  bool overlap = false;
  for (size_t i = 1; i < by_offset.size() && !overlap; ++i)
    overlap = by_offset[i].offset < by_offset[i - 1].offset + by_offset[i - 1].length;
  if (overlap) {  // replayed in write order (rare: a program that writes bytes twice)
    std::map<uint64_t, Piece> m;
    for (const Run& r : runs_) overwrite(m, r.offset, r.length, r.data);
    by_offset.clear();
    for (const auto& [offset, piece] : m)
      if (piece.length > 0) by_offset.push_back({offset, piece.length, piece.data});
  }
  runs_.clear();
  bytes_ = 0;
  for (const Run& r : by_offset) {  // continuations, on the file and in the arena, merged
    bytes_ += r.length;
    if (!runs_.empty() && runs_.back().offset + runs_.back().length == r.offset &&
        runs_.back().data + runs_.back().length == r.data) {
      runs_.back().length += r.length;
    } else {
      runs_.push_back(r);
    }
  }
  sorted_ = true;
}

uint64_t PendingRuns::bytes() const {
  resolve();
  return bytes_;
}

size_t PendingRuns::runs() const {
  resolve();
  return runs_.size();
}

bool PendingRuns::overlaps(uint64_t offset, uint64_t length) const {
  if (length == 0 || empty()) return false;
  resolve();
  // The first run starting at or after offset + length, and the one before it.
  auto it = std::lower_bound(runs_.begin(), runs_.end(), offset + length,
                             [](const Run& r, uint64_t at) { return r.offset < at; });
  if (it == runs_.begin()) return false;
  --it;
  return it->offset + it->length > offset;
}

void PendingRuns::clear() {
  runs_ = {};
  sorted_ = true;
  bytes_ = 0;
  end_ = 0;
  blocks_.clear();
  tail_ = nullptr;
  tail_left_ = 0;
}

}  // namespace strata::preload
