#include "decomp/values.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "common/hash.hpp"
#include "common/seeded_random.hpp"
#include "decomp/selection.hpp"

namespace strata {

namespace {

uint64_t name_hash(const std::string& s) { return fnv1a(s); }

struct Generator {
  uint64_t key;
  ElemType type;
  // A record variable: each byte comes from the field that covers it, generated as a variable
  // named after the field at the record's row.
  std::vector<Generator> fields;
  std::vector<uint64_t> field_offset;  // byte offset of each field in the record
  std::vector<uint8_t> field_of_byte;  // which field covers each byte of the record

  Generator(const std::string& name, ElemType t, const ValueStream& vs)
      : key(splitmix64(vs.seed ^ splitmix64(name_hash(name) ^ splitmix64(vs.step)))), type(t) {}
  Generator(const Variable& v, const ValueStream& vs) : Generator(v.name, v.type, vs) {
    uint64_t offset = 0;
    for (size_t f = 0; f < v.record.size(); ++f) {
      fields.emplace_back(v.record[f].name, v.record[f].type, vs);
      field_offset.push_back(offset);
      offset += elem_size(v.record[f].type);
      field_of_byte.resize(offset, static_cast<uint8_t>(f));
    }
  }

  // The record field covering byte `index` of a record variable.
  size_t field_at(uint64_t index) const { return field_of_byte[index % field_of_byte.size()]; }

  void operator()(uint64_t index, std::byte* out) const {
    if (!fields.empty()) {
      const uint64_t row = index / field_of_byte.size();
      const size_t f = field_at(index);
      std::byte value[8];
      fields[f](row, value);
      *out = value[index % field_of_byte.size() - field_offset[f]];
      return;
    }
    const uint64_t h = splitmix64(key ^ (index * 0xD6E8FEB86659FD93ULL));
    switch (type) {
      case ElemType::u8: {
        auto v = static_cast<uint8_t>(h);
        std::memcpy(out, &v, 1);
        break;
      }
      case ElemType::u16: {
        auto v = static_cast<uint16_t>(h);
        std::memcpy(out, &v, 2);
        break;
      }
      case ElemType::i32: {
        auto v = static_cast<int32_t>(static_cast<uint32_t>(h));
        std::memcpy(out, &v, 4);
        break;
      }
      case ElemType::i64:
      case ElemType::u64: std::memcpy(out, &h, 8); break;
      case ElemType::f32: {  // 24 significant bits: exact
        float v = static_cast<float>(static_cast<int32_t>(h >> 40) - (1 << 23)) / 1024.0f;
        std::memcpy(out, &v, 4);
        break;
      }
      case ElemType::f64: {  // 53 significant bits: exact
        double v = static_cast<double>(static_cast<int64_t>(h >> 11) - (int64_t{1} << 52)) / 1048576.0;
        std::memcpy(out, &v, 8);
        break;
      }
    }
  }
};

}  // namespace

void generate_value(const Variable& var, uint64_t index, const ValueStream& vs, std::byte* out) {
  Generator(var, vs)(index, out);
}

std::string format_value(ElemType type, const std::byte* in) {
  char buf[64];
  switch (type) {
    case ElemType::u8: {
      uint8_t v;
      std::memcpy(&v, in, 1);
      std::snprintf(buf, sizeof buf, "%u", v);
      break;
    }
    case ElemType::u16: {
      uint16_t v;
      std::memcpy(&v, in, 2);
      std::snprintf(buf, sizeof buf, "%u", v);
      break;
    }
    case ElemType::i32: {
      int32_t v;
      std::memcpy(&v, in, 4);
      std::snprintf(buf, sizeof buf, "%" PRId32, v);
      break;
    }
    case ElemType::i64: {
      int64_t v;
      std::memcpy(&v, in, 8);
      std::snprintf(buf, sizeof buf, "%" PRId64, v);
      break;
    }
    case ElemType::u64: {
      uint64_t v;
      std::memcpy(&v, in, 8);
      std::snprintf(buf, sizeof buf, "%" PRIu64, v);
      break;
    }
    case ElemType::f32: {
      float v;
      std::memcpy(&v, in, 4);
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
      break;
    }
    case ElemType::f64: {
      double v;
      std::memcpy(&v, in, 8);
      std::snprintf(buf, sizeof buf, "%.17g", v);
      break;
    }
  }
  return buf;
}

void fill(const Decomposition& d, const ValueStream& vs, std::byte* buffer) {
  std::vector<Generator> gens;
  gens.reserve(d.variables.size());
  for (const auto& v : d.variables) gens.emplace_back(v, vs);
  for (const Extent& e : flatten(d)) {
    const Generator& g = gens[static_cast<size_t>(e.var)];
    const size_t es = elem_size(g.type);
    std::byte* p = buffer + e.mem_offset;
    for (uint64_t i = 0; i < e.elems; ++i) g(e.elem_begin + i, p + i * es);
  }
}

std::string Mismatch::describe() const {
  std::ostringstream out;
  out << "variable \"" << variable << "\" element [";
  for (size_t i = 0; i < index.size(); ++i) out << (i ? "," : "") << index[i];
  out << "]: expected " << expected << ", found " << found;
  if (count > 1) out << " (" << count << " elements differ on this rank)";
  return out.str();
}

std::optional<Mismatch> verify(const Decomposition& d, const ValueStream& vs, const std::byte* buffer) {
  std::optional<Mismatch> first;
  uint64_t count = 0;
  for (const Extent& e : flatten(d)) {
    const Variable& v = d.variables[static_cast<size_t>(e.var)];
    Generator g(v, vs);
    const size_t es = elem_size(v.type);
    std::byte want[8];
    const std::byte* p = buffer + e.mem_offset;
    for (uint64_t i = 0; i < e.elems; ++i) {
      g(e.elem_begin + i, want);
      if (std::memcmp(want, p + i * es, es) == 0) continue;
      if (!first) {
        const std::string name = v.record.empty() ? v.name : v.name + "." + v.record[g.field_at(e.elem_begin + i)].name;
        first = Mismatch{0, name, unravel_index(v.shape, e.elem_begin + i), format_value(v.type, want),
                         format_value(v.type, p + i * es)};
      }
      ++count;
    }
  }
  if (first) first->count = count;
  return first;
}

}  // namespace strata
