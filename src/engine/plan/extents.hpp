// Normalising a rank's declarations: pieces of memory mapped to file bytes, sorted and
// coalesced into extents of a "stream" (the rank's bytes packed in file order), which is what
// the mover sends or receives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::engine {

// A run of elements: `length` bytes at `file_offset`, element k of which lives at
// memory + k·stride (stride == element_size: contiguous). 32 bytes: a real decomposition declares
// hundreds of thousands a rank (the variable a piece belongs to is the one whose bytes hold it).
struct Piece {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  std::byte* memory = nullptr;
  uint32_t element_size = 1;
  uint32_t stride = 1;
};

// Names the variable whose bytes hold a file offset (for errors).
using NameAt = std::function<std::string(uint64_t file_offset)>;

struct StreamExtent {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  uint64_t stream_offset = 0;
};

struct Selection {
  std::vector<Piece> pieces;          // sorted by file offset
  std::vector<StreamExtent> extents;  // coalesced, file order
  uint64_t bytes = 0;
  uint64_t lo = 0, hi = 0;  // first and one-past-last byte (0, 0 when empty)
};

// Sorts and coalesces. Throws a usage Error naming the variables (by `name_at`) when two pieces
// overlap.
// `order` (when given) receives where each non-empty piece went, in declaration order:
// pieces[order[k]] is the k-th non-empty piece declared; empty when they came sorted (the
// identity), which is also when no sort is done.
// `with_extents` false: the extents are left to extents_of() (a plan that may never need them).
Selection normalise(std::vector<Piece> pieces, const NameAt& name_at, std::vector<uint32_t>* order = nullptr,
                    bool with_extents = true);
// The extents of sorted, disjoint, non-empty pieces (Selection::extents): fn(file_offset, length)
// for each, in file order, pieces that touch merged.
template <class F>
void for_each_extent(const std::vector<Piece>& pieces, F&& fn) {
  if (pieces.empty()) return;
  uint64_t offset = pieces.front().file_offset, length = 0;
  for (const Piece& p : pieces) {
    if (p.file_offset != offset + length) {
      fn(offset, length);
      offset = p.file_offset;
      length = 0;
    }
    length += p.length;
  }
  fn(offset, length);
}
std::vector<StreamExtent> extents_of(const std::vector<Piece>& pieces);
// Packs memory into the stream (file order), or unpacks the stream into memory.
void pack(const Selection& s, std::byte* stream);
void unpack(const Selection& s, const std::byte* stream);

}  // namespace strata::engine
