#include "engine/plan/extents.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/run_copy.hpp"

namespace strata::engine {

namespace {

[[noreturn]] void overlap(const Piece& p, const Piece& q, const NameAt& name_at) {
  throw_usage("variable \"" + name_at(p.file_offset) + "\" bytes at file offset " + std::to_string(p.file_offset) +
              " overlap variable \"" + name_at(q.file_offset) + "\" bytes [" + std::to_string(q.file_offset) + ", " +
              std::to_string(q.file_offset + q.length) + ") declared by the same rank (declare disjoint blocks)");
}

// The extents sorted non-empty pieces make (those that touch merge); throws on an overlap.
size_t count_runs(const std::vector<Piece>& pieces, const NameAt& name_at) {
  size_t runs = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    if (i > 0) {
      const Piece& q = pieces[i - 1];
      if (p.file_offset < q.file_offset + q.length) overlap(p, q, name_at);
      if (p.file_offset == q.file_offset + q.length) continue;
    }
    ++runs;
  }
  return runs;
}

}  // namespace

std::vector<StreamExtent> extents_of(const std::vector<Piece>& pieces) {
  size_t runs = 0;
  for_each_extent(pieces, [&](uint64_t, uint64_t) { ++runs; });
  std::vector<StreamExtent> out;
  out.reserve(runs);
  uint64_t stream = 0;
  for_each_extent(pieces, [&](uint64_t offset, uint64_t length) {
    out.push_back({offset, length, stream});
    stream += length;
  });
  return out;
}

Selection normalise(std::vector<Piece> pieces, const NameAt& name_at, std::vector<uint32_t>* order, bool with_extents) {
  Selection s;
  if (order != nullptr) order->clear();
  // One pass over the pieces as declared: whether any is empty, whether they come in file order
  // (usually: then no sort, and the identity order), and the extents they make when they do.
  bool empty = false, sorted = true;
  size_t runs = 0;
  uint64_t total = 0;  // the pieces' bytes
  const Piece* q = nullptr;
  for (const Piece& p : pieces) {
    if (p.length == 0) {
      empty = true;
      continue;
    }
    total += p.length;
    if (q != nullptr && p.file_offset < q->file_offset) sorted = false;
    if (q != nullptr && p.file_offset >= q->file_offset) {
      if (p.file_offset < q->file_offset + q->length) overlap(p, *q, name_at);
      if (p.file_offset == q->file_offset + q->length) {
        q = &p;
        continue;
      }
    }
    ++runs;
    q = &p;
  }
  if (empty) {
    pieces.erase(std::remove_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.length == 0; }),
                 pieces.end());
  }
  if (!sorted) {
    auto before = [](const Piece& a, const Piece& b) { return a.file_offset < b.file_offset; };
    if (order == nullptr) {
      std::sort(pieces.begin(), pieces.end(), before);
    } else {
      std::vector<uint32_t> by_offset(pieces.size());
      for (uint32_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
      std::sort(by_offset.begin(), by_offset.end(),
                [&](uint32_t a, uint32_t b) { return pieces[a].file_offset < pieces[b].file_offset; });
      std::vector<Piece> in_order;
      in_order.reserve(pieces.size());
      order->assign(pieces.size(), 0);
      for (uint32_t k = 0; k < by_offset.size(); ++k) {
        in_order.push_back(pieces[by_offset[k]]);
        (*order)[by_offset[k]] = k;
      }
      pieces = std::move(in_order);
    }
    runs = count_runs(pieces, name_at);
  }
  uint64_t stream = 0;
  if (with_extents) {
    s.extents.reserve(runs);
    for (const Piece& p : pieces) {
      if (!s.extents.empty() && s.extents.back().file_offset + s.extents.back().length == p.file_offset) {
        s.extents.back().length += p.length;
      } else {
        s.extents.push_back({p.file_offset, p.length, stream});
      }
      stream += p.length;
    }
  } else {
    stream = total;
  }
  s.bytes = stream;
  if (!pieces.empty()) {
    s.lo = pieces.front().file_offset;
    s.hi = pieces.back().file_offset + pieces.back().length;
  }
  s.pieces = std::move(pieces);
  return s;
}

void pack(const Selection& s, std::byte* stream) {
  for (const Piece& p : s.pieces) {
    if (p.stride == p.element_size) {
      copy_run(stream, p.memory, p.length);
    } else {
      const uint64_t n = p.length / p.element_size;
      for (uint64_t k = 0; k < n; ++k)
        std::memcpy(stream + k * p.element_size, p.memory + k * p.stride, p.element_size);
    }
    stream += p.length;
  }
}

void unpack(const Selection& s, const std::byte* stream) {
  for (const Piece& p : s.pieces) {
    if (p.stride == p.element_size) {
      copy_run(p.memory, stream, p.length);
    } else {
      const uint64_t n = p.length / p.element_size;
      for (uint64_t k = 0; k < n; ++k)
        std::memcpy(p.memory + k * p.stride, stream + k * p.element_size, p.element_size);
    }
    stream += p.length;
  }
}

}  // namespace strata::engine
