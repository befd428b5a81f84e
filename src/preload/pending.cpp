#include "preload/pending.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace strata::preload {

namespace {
constexpr uint64_t kBlock = uint64_t{8} << 20;
}

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

void PendingRuns::to_map() {
  for (const Run& r : ordered_) runs_.emplace_hint(runs_.end(), r.offset, Piece{r.length, r.data});
  ordered_ = {};
  mapped_ = true;
}

void PendingRuns::insert(uint64_t offset, uint64_t length, const char* source) {
  if (length == 0) return;
  if (!mapped_) {
    if (ordered_.empty() || offset >= ordered_.back().offset + ordered_.back().length) {
      const char* data = keep(source, length);
      bytes_ += length;
      Run* last = ordered_.empty() ? nullptr : &ordered_.back();
      if (last != nullptr && last->offset + last->length == offset && last->data + last->length == data) {
        last->length += length;
      } else {
        ordered_.push_back({offset, length, data});
      }
      return;
    }
    to_map();  // a run before the end: overlaps and order need the map from now on
  }
  if (runs_.empty() || offset >= end()) {  // past everything gathered: no search
    const char* data = keep(source, length);
    bytes_ += length;
    if (!runs_.empty()) {
      auto& last = *runs_.rbegin();
      if (last.first + last.second.length == offset && last.second.data + last.second.length == data) {
        last.second.length += length;
        return;
      }
    }
    runs_.emplace_hint(runs_.end(), offset, Piece{length, data});
    return;
  }
  const char* data = keep(source, length);
  const uint64_t end = offset + length;
  // Cut what the new run overlaps out of the existing runs.
  auto it = runs_.lower_bound(offset);
  if (it != runs_.begin()) {
    auto prev = std::prev(it);
    const uint64_t pend = prev->first + prev->second.length;
    if (pend > offset) {
      if (pend > end) {  // the new run lies inside: the tail stays a run of its own
        runs_.emplace(end, Piece{pend - end, prev->second.data + (end - prev->first)});
      }
      bytes_ -= std::min(pend, end) - offset;
      prev->second.length = offset - prev->first;
    }
  }
  it = runs_.lower_bound(offset);
  while (it != runs_.end() && it->first < end) {
    const uint64_t rend = it->first + it->second.length;
    if (rend <= end) {  // wholly replaced
      bytes_ -= it->second.length;
      it = runs_.erase(it);
    } else {  // its head is replaced: the rest stays
      const Piece rest{rend - end, it->second.data + (end - it->first)};
      bytes_ -= end - it->first;
      runs_.erase(it);
      runs_.emplace(end, rest);
      break;
    }
  }
  bytes_ += length;
  // Merged with the run it continues, on the file and in the arena.
  auto next = runs_.lower_bound(offset);
  if (next != runs_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.length == offset && prev->second.data + prev->second.length == data) {
      prev->second.length += length;
      return;
    }
  }
  runs_.emplace_hint(next, offset, Piece{length, data});
}

bool PendingRuns::overlaps(uint64_t offset, uint64_t length) const {
  if (length == 0 || empty()) return false;
  if (!mapped_) {
    // The first run starting at or after offset + length, and the one before it.
    auto it = std::lower_bound(ordered_.begin(), ordered_.end(), offset + length,
                               [](const Run& r, uint64_t at) { return r.offset < at; });
    if (it == ordered_.begin()) return false;
    --it;
    return it->offset + it->length > offset;
  }
  auto it = runs_.lower_bound(offset);
  if (it != runs_.end() && it->first < offset + length) return true;
  if (it == runs_.begin()) return false;
  --it;
  return it->first + it->second.length > offset;
}

uint64_t PendingRuns::end() const {
  if (!mapped_) return ordered_.empty() ? 0 : ordered_.back().offset + ordered_.back().length;
  if (runs_.empty()) return 0;
  const auto& last = *runs_.rbegin();
  return last.first + last.second.length;
}

void PendingRuns::for_each(const std::function<void(uint64_t, uint64_t, const char*)>& f) const {
  if (!mapped_) {
    for (const Run& r : ordered_) f(r.offset, r.length, r.data);
    return;
  }
  for (const auto& [offset, piece] : runs_) f(offset, piece.length, piece.data);
}

void PendingRuns::clear() {
  runs_.clear();
  ordered_ = {};
  mapped_ = false;
  bytes_ = 0;
  blocks_.clear();
  tail_ = nullptr;
  tail_left_ = 0;
}

}  // namespace strata::preload
