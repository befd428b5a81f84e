#include "decomp/selection.hpp"

#include <algorithm>

namespace strata {

std::vector<Extent> flatten(const Decomposition& d) {
  std::vector<Extent> out;
  out.reserve(d.blocks.size());  // at least one extent a block, often exactly one: no regrowth copies
  uint64_t mem = 0;
  bool block_start = false;  // the next extent opens a block (never merged when blocks stay apart)
  auto push = [&out, &d, &block_start](const Extent& e, size_t esize) {
    const bool may_merge = !(d.blocks_apart && block_start);
    block_start = false;
    if (may_merge && !out.empty()) {
      Extent& last = out.back();
      if (last.var == e.var && last.elem_begin + last.elems == e.elem_begin &&
          last.mem_offset + last.elems * esize == e.mem_offset) {
        last.elems += e.elems;
        return;
      }
    }
    out.push_back(e);
  };
  for (const Block& b : d.blocks) {
    if (b.var < 0 || static_cast<size_t>(b.var) >= d.variables.size()) continue;  // validate() reports it
    const Variable& v = d.variables[static_cast<size_t>(b.var)];
    const size_t nd = v.shape.size();
    if (b.count.size() != nd || b.start.size() != nd) continue;
    const size_t esize = elem_size(v.type);
    // Innermost dimensions that the block covers entirely merge into one run.
    size_t run_dims = 1;  // number of trailing dims forming one contiguous run
    uint64_t run = b.count[nd - 1];
    while (run_dims < nd && b.count[nd - run_dims] == v.shape[nd - run_dims] && b.start[nd - run_dims] == 0) {
      run *= b.count[nd - run_dims - 1];
      ++run_dims;
    }
    uint64_t runs = b.elements() / (run == 0 ? 1 : run);
    if (b.elements() == 0) continue;
    block_start = true;
    // Iterate over the outer (nd - run_dims) dimensions.
    std::vector<uint64_t> idx(b.start);
    const size_t outer = nd - run_dims;
    for (uint64_t r = 0; r < runs; ++r) {
      Extent e{b.var, linear_index(v.shape, idx), run, mem};
      push(e, esize);
      mem += run * esize;
      for (size_t k = outer; k-- > 0;) {  // odometer over outer dims
        if (++idx[k] < b.start[k] + b.count[k]) break;
        idx[k] = b.start[k];
      }
    }
  }
  return out;
}

bool memory_in_file_order(const std::vector<Extent>& extents) {
  for (size_t i = 1; i < extents.size(); ++i) {
    const Extent& a = extents[i - 1];
    const Extent& b = extents[i];
    if (b.var < a.var || (b.var == a.var && b.elem_begin < a.elem_begin + a.elems)) return false;
  }
  return true;
}

std::vector<Extent> clip_to_memory(const Decomposition& d, const std::vector<Extent>& extents, uint64_t mem_begin,
                                   uint64_t mem_end) {
  std::vector<Extent> out;
  for (const Extent& e : extents) {
    const uint64_t esize = elem_size(d.variables[static_cast<size_t>(e.var)].type);
    const uint64_t e_end = e.mem_offset + e.elems * esize;
    const uint64_t lo = std::max(mem_begin, e.mem_offset);
    const uint64_t hi = std::min(mem_end, e_end);
    if (lo >= hi) continue;
    // Steps are multiples of every element size (validate() checks), so cuts fall on elements.
    const uint64_t skip = (lo - e.mem_offset) / esize;
    out.push_back({e.var, e.elem_begin + skip, (hi - lo) / esize, lo});
  }
  return out;
}

std::vector<Extent> split_extents(const Decomposition& d, const std::vector<Extent>& extents, uint64_t max_bytes) {
  if (max_bytes == 0) return extents;
  std::vector<Extent> out;
  for (const Extent& e : extents) {
    const uint64_t esize = elem_size(d.variables[static_cast<size_t>(e.var)].type);
    const uint64_t per = std::max<uint64_t>(1, max_bytes / esize);
    for (uint64_t done = 0; done < e.elems; done += per) {
      const uint64_t n = std::min(per, e.elems - done);
      out.push_back({e.var, e.elem_begin + done, n, e.mem_offset + done * esize});
    }
  }
  return out;
}

std::vector<Box> linear_range_to_boxes(const std::vector<uint64_t>& shape, uint64_t begin, uint64_t n) {
  const size_t nd = shape.size();
  std::vector<uint64_t> stride(nd, 1);
  for (size_t d = nd - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  std::vector<Box> out;
  uint64_t pos = begin;
  const uint64_t end = begin + n;
  while (pos < end) {
    std::vector<uint64_t> idx = unravel_index(shape, pos);
    // The outermost dimension d at which pos is aligned and a whole slab of stride[d] fits.
    size_t d = 0;
    while (d < nd && (pos % stride[d] != 0 || end - pos < stride[d])) ++d;
    // d < nd always: stride[nd-1] == 1 divides everything and fits since pos < end.
    const uint64_t c = std::min(shape[d] - idx[d], (end - pos) / stride[d]);
    Box box;
    box.start = idx;
    box.count.assign(nd, 1);
    box.count[d] = c;
    for (size_t k = d + 1; k < nd; ++k) box.count[k] = shape[k];
    out.push_back(std::move(box));
    pos += c * stride[d];
  }
  return out;
}

Decomposition even_share(const std::vector<Variable>& variables, int rank, int ranks) {
  Decomposition d;
  d.variables = variables;
  for (size_t v = 0; v < variables.size(); ++v) {
    const uint64_t n = variables[v].elements();
    const uint64_t r = static_cast<uint64_t>(rank), k = static_cast<uint64_t>(ranks);
    const uint64_t begin = n * r / k, end = n * (r + 1) / k;
    if (end <= begin) continue;
    for (Box& b : linear_range_to_boxes(variables[v].shape, begin, end - begin)) {
      d.blocks.push_back({static_cast<int>(v), std::move(b.start), std::move(b.count)});
    }
  }
  return d;
}

void add_coverage(Coverage& into, size_t var, uint64_t begin, uint64_t end) {
  if (end <= begin) return;
  if (into.size() <= var) into.resize(var + 1);
  into[var].emplace_back(begin, end);
}

void merge_coverage(Coverage& c) {
  for (auto& list : c) {
    std::sort(list.begin(), list.end());
    size_t out = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      if (out > 0 && list[i].first <= list[out - 1].second) {
        list[out - 1].second = std::max(list[out - 1].second, list[i].second);
      } else {
        list[out++] = list[i];
      }
    }
    list.resize(out);
  }
}

void add_coverage(const Decomposition& d, Coverage& into) {
  if (into.size() < d.variables.size()) into.resize(d.variables.size());
  for (const Extent& e : flatten(d))
    add_coverage(into, static_cast<size_t>(e.var), e.elem_begin, e.elem_begin + e.elems);
  merge_coverage(into);
}

Decomposition even_share(const std::vector<Variable>& variables, const Coverage& covered, int rank, int ranks) {
  Decomposition d;
  d.variables = variables;
  const uint64_t r = static_cast<uint64_t>(rank), k = static_cast<uint64_t>(ranks);
  for (size_t v = 0; v < variables.size() && v < covered.size(); ++v) {
    uint64_t n = 0;
    for (const auto& [b, e] : covered[v]) n += e - b;
    // This reader's elements [first, last) counted over the covered ones only.
    const uint64_t first = n * r / k, last = n * (r + 1) / k;
    uint64_t seen = 0;
    for (const auto& [b, e] : covered[v]) {
      const uint64_t lo = std::max(first, seen), hi = std::min(last, seen + (e - b));
      if (lo < hi) {
        for (Box& box : linear_range_to_boxes(variables[v].shape, b + (lo - seen), hi - lo)) {
          d.blocks.push_back({static_cast<int>(v), std::move(box.start), std::move(box.count)});
        }
      }
      seen += e - b;
      if (seen >= last) break;
    }
  }
  return d;
}

}  // namespace strata
