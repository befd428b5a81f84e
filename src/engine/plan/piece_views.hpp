// A selection's pieces in file order held as views instead of one array: blocks of a base array
// of declared pieces, each moved by a file shift and a memory shift. A variable declared like
// another's runs (Phase::add_extents_like) is such a block, so the plan walks it where it lies
// instead of copying and sorting 32 bytes a piece (a real E3SM map: 260 000 pieces a rank, all
// but a few hundred declared like their map's first variable). What needs one flat array asks
// for flatten(); PieceCursor walks either form in file order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/plan/extents.hpp"

namespace strata::engine {

struct PieceBlock {
  size_t begin = 0, end = 0;  // base pieces [begin, end): sorted, disjoint, none empty
  uint64_t shift = 0;         // added to their file offsets (modulo 2^64)
  std::ptrdiff_t memory = 0;  // added to their memory
  uint64_t lo = 0, hi = 0;    // the block's first and one-past-last file byte, moved
};

struct PieceViews {
  std::vector<Piece> base;
  std::vector<PieceBlock> blocks;  // in file order, disjoint ([lo, hi) ascending)
  size_t count = 0;                // pieces in all the blocks
  uint64_t bytes = 0;

  static Piece moved(const Piece& p, const PieceBlock& b) {
    Piece q = p;
    q.file_offset += b.shift;
    if (q.memory != nullptr) q.memory += b.memory;
    return q;
  }
  bool empty() const { return blocks.empty(); }
  // fn(piece) for every piece, in file order.
  template <class F>
  void for_each(F&& fn) const {
    for (const PieceBlock& b : blocks) {
      for (size_t i = b.begin; i < b.end; ++i) fn(moved(base[i], b));
    }
  }
  // fn(piece as declared, shift, memory shift) for every piece from the first that ends after file
  // byte `a`, in file order, while fn returns true (a tight walk: nothing copied or moved).
  template <class F>
  void walk_from(uint64_t a, F&& fn) const {
    auto b = std::partition_point(blocks.begin(), blocks.end(), [a](const PieceBlock& k) { return k.hi <= a; });
    for (bool first = true; b != blocks.end(); ++b, first = false) {
      const Piece* q = base.data() + b->begin;
      const Piece* const last = base.data() + b->end;
      if (first) {
        const uint64_t shift = b->shift;
        q = std::partition_point(q, last, [&](const Piece& p) { return p.file_offset + shift + p.length <= a; });
      }
      for (; q != last; ++q) {
        if (!fn(*q, b->shift, b->memory)) return;
      }
    }
  }
  std::vector<Piece> flatten() const {
    std::vector<Piece> out;
    out.reserve(count);
    for_each([&](const Piece& p) { out.push_back(p); });
    return out;
  }
};

// The extents of viewed pieces (as for_each_extent of a flat array): pieces that touch merge,
// across blocks too.
template <class F>
void for_each_extent(const PieceViews& v, F&& fn) {
  bool any = false;
  uint64_t offset = 0, length = 0;
  v.for_each([&](const Piece& p) {
    if (!any) {
      any = true;
      offset = p.file_offset;
    } else if (p.file_offset != offset + length) {
      fn(offset, length);
      offset = p.file_offset;
      length = 0;
    }
    length += p.length;
  });
  if (any) fn(offset, length);
}

// Walks pieces in file order, flat (`views` null) or viewed.
class PieceCursor {
 public:
  PieceCursor(const std::vector<Piece>& flat, const PieceViews* views) : flat_(&flat), views_(views) {}
  // To the first piece that ends after file byte `a`.
  void seek(uint64_t a) {
    const auto ends_by = [a](const Piece& q, uint64_t shift) { return q.file_offset + shift + q.length <= a; };
    if (views_ == nullptr) {
      i_ = static_cast<size_t>(
          std::partition_point(flat_->begin(), flat_->end(), [&](const Piece& q) { return ends_by(q, 0); }) -
          flat_->begin());
      return;
    }
    const auto& blocks = views_->blocks;
    block_ = static_cast<size_t>(
        std::partition_point(blocks.begin(), blocks.end(), [a](const PieceBlock& b) { return b.hi <= a; }) -
        blocks.begin());
    if (block_ >= blocks.size()) return;
    const PieceBlock& b = blocks[block_];
    const auto first = views_->base.begin() + static_cast<std::ptrdiff_t>(b.begin);
    const auto last = views_->base.begin() + static_cast<std::ptrdiff_t>(b.end);
    i_ = static_cast<size_t>(std::partition_point(first, last, [&](const Piece& q) { return ends_by(q, b.shift); }) -
                             views_->base.begin());
  }
  bool done() const { return views_ == nullptr ? i_ >= flat_->size() : block_ >= views_->blocks.size(); }
  Piece piece() const {
    return views_ == nullptr ? (*flat_)[i_] : PieceViews::moved(views_->base[i_], views_->blocks[block_]);
  }
  void next() {
    ++i_;
    if (views_ != nullptr && i_ >= views_->blocks[block_].end && ++block_ < views_->blocks.size())
      i_ = views_->blocks[block_].begin;
  }

 private:
  const std::vector<Piece>* flat_;
  const PieceViews* views_;
  size_t block_ = 0, i_ = 0;
};

}  // namespace strata::engine
