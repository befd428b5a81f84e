#include "decomp/decomposition.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "decomp/selection.hpp"

namespace strata {

size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::u8: return 1;
    case ElemType::i32: return 4;
    case ElemType::f32: return 4;
    case ElemType::i64: return 8;
    case ElemType::u64: return 8;
    case ElemType::f64: return 8;
    case ElemType::u16: return 2;
  }
  return 1;
}

std::string elem_name(ElemType t) {
  switch (t) {
    case ElemType::u8: return "uint8";
    case ElemType::i32: return "int32";
    case ElemType::f32: return "float32";
    case ElemType::i64: return "int64";
    case ElemType::u64: return "uint64";
    case ElemType::f64: return "float64";
    case ElemType::u16: return "uint16";
  }
  return "?";
}

ElemType elem_type_from_name(const std::string& name) {
  for (ElemType t :
       {ElemType::u8, ElemType::i32, ElemType::f32, ElemType::i64, ElemType::u64, ElemType::f64, ElemType::u16}) {
    if (elem_name(t) == name) return t;
  }
  throw_usage("unknown element type \"" + name + "\" (uint8, uint16, int32, float32, int64, uint64 or float64)");
}

uint64_t record_bytes(const std::vector<RecordField>& fields) {
  uint64_t n = 0;
  for (const auto& f : fields) n += elem_size(f.type);
  return n;
}

uint64_t Variable::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

uint64_t Block::elements() const {
  uint64_t n = 1;
  for (uint64_t d : count) n *= d;
  return n;
}

uint64_t Decomposition::local_bytes() const {
  uint64_t n = 0;
  for (const auto& b : blocks) n += b.elements() * elem_size(variables[static_cast<size_t>(b.var)].type);
  return n;
}

uint64_t Decomposition::variable_offset(int v) const {
  uint64_t off = 0;
  for (int u = 0; u < v; ++u) off += variables[static_cast<size_t>(u)].bytes();
  return off;
}

uint64_t Decomposition::global_bytes() const { return variable_offset(static_cast<int>(variables.size())); }

void Decomposition::check_blocks_like() const {
  if (blocks_like.size() > variables.size()) throw_usage("blocks_like names more variables than are declared");
  // Each variable's blocks: where they start and how many (a promised variable's are one run).
  std::vector<size_t> first(variables.size(), SIZE_MAX), count(variables.size(), 0);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const size_t v = static_cast<size_t>(blocks[i].var);
    if (first[v] == SIZE_MAX) first[v] = i;
    ++count[v];
  }
  for (size_t v = 0; v < blocks_like.size(); ++v) {
    const int like = blocks_like[v];
    if (like < 0) continue;
    const std::string where = "variable \"" + variables[v].name + "\" ";
    if (static_cast<size_t>(like) >= v) throw_usage(where + "is declared like a variable after it");
    const Variable& a = variables[static_cast<size_t>(like)];
    if (a.shape != variables[v].shape || a.type != variables[v].type) {
      throw_usage(where + "is declared like \"" + a.name + "\", of another shape or type");
    }
    const size_t l = static_cast<size_t>(like);
    bool same = count[v] == count[l] && (count[v] == 0 || first[v] + count[v] <= blocks.size());
    for (size_t k = 0; same && k < count[v]; ++k) {
      const Block& mine = blocks[first[v] + k];
      const Block& theirs = blocks[first[l] + k];
      same = mine.var == static_cast<int>(v) && theirs.var == like && mine.start == theirs.start &&
             mine.count == theirs.count;
    }
    if (!same) throw_usage(where + "does not have the blocks of \"" + a.name + "\" in one run, as declared");
  }
}

void Decomposition::validate() const {
  if (variables.empty()) throw_usage("the decomposition declares no variable");
  for (const auto& v : variables) {
    if (v.shape.empty()) throw_usage("variable \"" + v.name + "\" has no dimensions");
    if (!v.record.empty() && (v.type != ElemType::u8 || v.shape.back() != record_bytes(v.record))) {
      throw_usage("variable \"" + v.name + "\" holds records of " + std::to_string(record_bytes(v.record)) +
                  " bytes: declare it uint8 with that last dimension");
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    std::string where = "block " + std::to_string(i);
    if (b.var < 0 || static_cast<size_t>(b.var) >= variables.size()) {
      throw_usage(where + " names variable " + std::to_string(b.var) + ", which is not declared");
    }
    const Variable& v = variables[static_cast<size_t>(b.var)];
    where = "variable \"" + v.name + "\" " + where;
    if (b.start.size() != v.shape.size() || b.count.size() != v.shape.size()) {
      throw_usage(where + " has " + std::to_string(b.count.size()) + " dimensions, the variable " +
                  std::to_string(v.shape.size()));
    }
    for (size_t d = 0; d < v.shape.size(); ++d) {
      if (b.count[d] == 0) throw_usage(where + " has a zero count in dimension " + std::to_string(d));
      if (b.start[d] > v.shape[d] || b.count[d] > v.shape[d] - b.start[d]) {
        throw_usage(where + " reaches past the variable's shape in dimension " + std::to_string(d) + " (start " +
                    std::to_string(b.start[d]) + " + count " + std::to_string(b.count[d]) + " > " +
                    std::to_string(v.shape[d]) + ")");
      }
    }
  }
  if (!blocks_like.empty()) check_blocks_like();
  if (transfer_bytes != 0) {
    for (const auto& v : variables) {
      if (transfer_bytes % elem_size(v.type) != 0) {
        throw_usage("transfer size " + std::to_string(transfer_bytes) + " is not a multiple of variable \"" + v.name +
                    "\"'s element size " + std::to_string(elem_size(v.type)));
      }
    }
  }
  // Overlap among this rank's own blocks: sort the flattened extents by file position.
  auto extents = flatten(*this);
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return a.var != b.var ? a.var < b.var : a.elem_begin < b.elem_begin;
  });
  for (size_t i = 1; i < extents.size(); ++i) {
    const Extent& a = extents[i - 1];
    const Extent& b = extents[i];
    if (a.var == b.var && a.elem_begin + a.elems > b.elem_begin) {
      const Variable& v = variables[static_cast<size_t>(a.var)];
      throw_usage("variable \"" + v.name + "\": two blocks of this rank overlap at element " +
                  std::to_string(b.elem_begin) + " (declare disjoint blocks)");
    }
  }
}

uint64_t linear_index(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& index) {
  uint64_t li = 0;
  for (size_t d = 0; d < shape.size(); ++d) li = li * shape[d] + index[d];
  return li;
}

std::vector<uint64_t> unravel_index(const std::vector<uint64_t>& shape, uint64_t linear) {
  std::vector<uint64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

}  // namespace strata
