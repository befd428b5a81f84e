#include "preload/type_map.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace strata::preload {

namespace {

// Appends a run, merged with the previous one when they touch.
void add_run(TypeMap& m, int64_t offset, uint64_t length) {
  if (length == 0) return;
  if (!m.runs.empty()) {
    Run& last = m.runs.back();
    if (last.offset + static_cast<int64_t>(last.length) == offset) {
      last.length += length;
      return;
    }
  }
  m.runs.push_back({offset, length});
}

// Appends `count` copies of `child` starting at `base`, one child extent apart.
void add_copies(TypeMap& m, const TypeMap& child, int64_t base, uint64_t count) {
  if (child.contiguous() && child.lb == 0) {
    add_run(m, base, count * child.size);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t at = base + static_cast<int64_t>(i) * child.extent;
    for (const Run& r : child.runs) add_run(m, at + r.offset, r.length);
  }
}

struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
  ~Contents() {
    for (MPI_Datatype& t : types) {
      int ni = 0, na = 0, nd = 0, c = 0;
      PMPI_Type_get_envelope(t, &ni, &na, &nd, &c);
      // Predefined types (named, and Fortran 90's parameterized ones) must not be freed.
      if (c != MPI_COMBINER_NAMED && c != MPI_COMBINER_F90_REAL && c != MPI_COMBINER_F90_COMPLEX &&
          c != MPI_COMBINER_F90_INTEGER) {
        PMPI_Type_free(&t);
      }
    }
  }
};

// Grid types (subarray, darray): per dimension the global size and the indices owned, in
// increasing order; dimension 0 slowest for C order (reordered by the caller for Fortran).
void add_grid(TypeMap& m, const TypeMap& child, const std::vector<uint64_t>& sizes,
              const std::vector<std::vector<uint64_t>>& owned) {
  const size_t n = sizes.size();
  for (const auto& o : owned) {
    if (o.empty()) return;  // nothing owned
  }
  std::vector<uint64_t> stride(n, 1);
  for (size_t d = n; d-- > 1;) stride[d - 1] = stride[d] * sizes[d];
  std::vector<size_t> at(n, 0);
  const auto& inner = owned[n - 1];
  while (true) {
    uint64_t base = 0;
    for (size_t d = 0; d + 1 < n; ++d) base += owned[d][at[d]] * stride[d];
    // The innermost dimension: runs of consecutive indices.
    size_t i = 0;
    while (i < inner.size()) {
      size_t j = i + 1;
      while (j < inner.size() && inner[j] == inner[j - 1] + 1) ++j;
      add_copies(m, child, static_cast<int64_t>((base + inner[i]) * static_cast<uint64_t>(child.extent)), j - i);
      i = j;
    }
    // The next index of the outer dimensions (an odometer, the last outer dimension fastest).
    ptrdiff_t d = static_cast<ptrdiff_t>(n) - 2;
    for (; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < owned[static_cast<size_t>(d)].size()) break;
      at[static_cast<size_t>(d)] = 0;
    }
    if (d < 0) break;
  }
}

uint64_t product(const std::vector<uint64_t>& v, size_t from, size_t to) {
  uint64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// The owned indices of a darray dimension (MPI standard, section 4.1.4).
std::vector<uint64_t> darray_owned(uint64_t gsize, int distrib, int darg, uint64_t psize, uint64_t coord) {
  std::vector<uint64_t> out;
  if (distrib == MPI_DISTRIBUTE_NONE) {
    for (uint64_t i = 0; i < gsize; ++i) out.push_back(i);
  } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
    const uint64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : static_cast<uint64_t>(darg);
    for (uint64_t i = coord * blk; i < std::min(gsize, (coord + 1) * blk); ++i) out.push_back(i);
  } else {  // cyclic
    const uint64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : static_cast<uint64_t>(darg);
    for (uint64_t k = coord * blk; k < gsize; k += psize * blk) {
      for (uint64_t i = k; i < std::min(gsize, k + blk); ++i) out.push_back(i);
    }
  }
  return out;
}

void fail(TypeMap& m, const std::string& why) {
  m.ok = false;
  if (m.problem.empty()) m.problem = why;
}

void build(TypeMap& m, MPI_Datatype type);

TypeMap child_of(MPI_Datatype t) {
  TypeMap c;
  build(c, t);
  return c;
}

void build(TypeMap& m, MPI_Datatype type) {
  m.ok = true;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  MPI_Count size = 0;
  PMPI_Type_size_x(type, &size);
  m.lb = lb;
  m.extent = extent;
  m.size = static_cast<uint64_t>(size);
  Contents c;
  int ni = 0, na = 0, nd = 0;
  PMPI_Type_get_envelope(type, &ni, &na, &nd, &c.combiner);
  if (c.combiner == MPI_COMBINER_NAMED || c.combiner == MPI_COMBINER_F90_REAL ||
      c.combiner == MPI_COMBINER_F90_COMPLEX || c.combiner == MPI_COMBINER_F90_INTEGER) {
    if (m.size == static_cast<uint64_t>(extent) || c.combiner != MPI_COMBINER_NAMED) {
      add_run(m, 0, m.size);
    } else if (type == MPI_DOUBLE_INT || type == MPI_LONG_INT || type == MPI_SHORT_INT || type == MPI_LONG_DOUBLE_INT ||
               type == MPI_FLOAT_INT) {
      // A pair type: the value, then an int at the next multiple of 4.
      const uint64_t first = m.size - 4;
      add_run(m, 0, first);
      add_run(m, static_cast<int64_t>((first + 3) / 4 * 4), 4);
    } else {
      fail(m, "a predefined type with gaps");
    }
    return;
  }
  c.ints.resize(static_cast<size_t>(ni));
  c.addrs.resize(static_cast<size_t>(na));
  c.types.resize(static_cast<size_t>(nd));
  PMPI_Type_get_contents(type, ni, na, nd, c.ints.data(), c.addrs.data(), c.types.data());
  const auto& I = c.ints;
  const auto& A = c.addrs;
  auto child_ok = [&](const TypeMap& ch) {
    if (!ch.ok) fail(m, ch.problem);
    return ch.ok;
  };
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: {  // the child's runs; lower bound and extent are MPI's (above)
      TypeMap ch = child_of(c.types[0]);
      if (!child_ok(ch)) return;
      m.runs = std::move(ch.runs);
      return;
    }
    case MPI_COMBINER_CONTIGUOUS: {
      TypeMap ch = child_of(c.types[0]);
      if (!child_ok(ch)) return;
      add_copies(m, ch, 0, static_cast<uint64_t>(I[0]));
      return;
    }
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      TypeMap ch = child_of(c.types[0]);
      if (!child_ok(ch)) return;
      const int64_t stride = c.combiner == MPI_COMBINER_VECTOR ? I[2] * ch.extent : A[0];
      for (int i = 0; i < I[0]; ++i) add_copies(m, ch, i * stride, static_cast<uint64_t>(I[1]));
      return;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      TypeMap ch = child_of(c.types[0]);
      if (!child_ok(ch)) return;
      const int n = I[0];
      const bool block = c.combiner == MPI_COMBINER_INDEXED_BLOCK || c.combiner == MPI_COMBINER_HINDEXED_BLOCK;
      for (int i = 0; i < n; ++i) {
        const int len = block ? I[1] : I[1 + i];
        int64_t disp = 0;
        switch (c.combiner) {
          case MPI_COMBINER_INDEXED: disp = I[1 + n + i] * ch.extent; break;
          case MPI_COMBINER_INDEXED_BLOCK: disp = I[2 + i] * ch.extent; break;
          default: disp = A[i]; break;  // hindexed, hindexed_block
        }
        add_copies(m, ch, disp, static_cast<uint64_t>(len));
      }
      return;
    }
    case MPI_COMBINER_STRUCT: {
      const int n = I[0];
      for (int i = 0; i < n; ++i) {
        TypeMap ch = child_of(c.types[static_cast<size_t>(i)]);
        if (!child_ok(ch)) return;
        add_copies(m, ch, A[i], static_cast<uint64_t>(I[1 + i]));
      }
      return;
    }
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY: {
      TypeMap ch = child_of(c.types[0]);
      if (!child_ok(ch)) return;
      const bool sub = c.combiner == MPI_COMBINER_SUBARRAY;
      const size_t n = static_cast<size_t>(sub ? I[0] : I[2]);
      std::vector<uint64_t> sizes(n);
      std::vector<std::vector<uint64_t>> owned(n);
      int order = 0;
      if (sub) {
        for (size_t d = 0; d < n; ++d) {
          sizes[d] = static_cast<uint64_t>(I[1 + d]);
          for (int k = 0; k < I[1 + n + d]; ++k) owned[d].push_back(static_cast<uint64_t>(I[1 + 2 * n + d] + k));
        }
        order = I[1 + 3 * n];
      } else {
        const uint64_t rank = static_cast<uint64_t>(I[1]);
        std::vector<uint64_t> psizes(n);
        for (size_t d = 0; d < n; ++d) psizes[d] = static_cast<uint64_t>(I[3 + 3 * n + d]);
        for (size_t d = 0; d < n; ++d) {
          sizes[d] = static_cast<uint64_t>(I[3 + d]);
          // Process grid coordinates: row-major whatever the array order.
          const uint64_t coord = rank / product(psizes, d + 1, n) % psizes[d];
          owned[d] = darray_owned(sizes[d], I[3 + n + d], I[3 + 2 * n + d], psizes[d], coord);
        }
        order = I[3 + 4 * n];
      }
      if (order == MPI_ORDER_FORTRAN) {
        std::reverse(sizes.begin(), sizes.end());
        std::reverse(owned.begin(), owned.end());
      }
      if (n > 0) add_grid(m, ch, sizes, owned);
      return;
    }
    default: fail(m, "datatype combiner " + std::to_string(c.combiner) + " not decoded"); return;
  }
}

std::mutex cache_mutex;
std::unordered_map<MPI_Datatype, std::shared_ptr<const TypeMap>>& cache() {
  static auto* c = new std::unordered_map<MPI_Datatype, std::shared_ptr<const TypeMap>>();
  return *c;
}

}  // namespace

bool TypeMap::monotonic() const {
  int64_t end = 0;
  for (const Run& r : runs) {
    if (r.offset < end) return false;
    end = r.offset + static_cast<int64_t>(r.length);
  }
  return true;
}

bool TypeMap::contiguous() const {
  return runs.size() == 1 && runs[0].offset == lb && static_cast<int64_t>(runs[0].length) == extent;
}

TypeMap flatten(MPI_Datatype type) {
  TypeMap m;
  build(m, type);
  if (!m.ok) m.runs.clear();
  uint64_t sum = 0;
  m.prefix.reserve(m.runs.size());
  for (const Run& r : m.runs) {
    m.prefix.push_back(sum);
    sum += r.length;
  }
  if (m.ok && sum != m.size)
    fail(m, "decoded " + std::to_string(sum) + " bytes of a " + std::to_string(m.size) + "-byte type");
  return m;
}

std::shared_ptr<const TypeMap> type_map(MPI_Datatype type) {
  {
    std::lock_guard lock(cache_mutex);
    auto it = cache().find(type);
    if (it != cache().end()) return it->second;
  }
  // Decoded outside the lock: decoding frees the types MPI_Type_get_contents returned.
  auto m = std::make_shared<const TypeMap>(flatten(type));
  std::lock_guard lock(cache_mutex);
  cache().emplace(type, m);
  return m;
}

void forget(MPI_Datatype type) {
  std::lock_guard lock(cache_mutex);
  cache().erase(type);
}

void pack(const TypeMap& map, const void* buf, uint64_t count, char* out) {
  const char* base = static_cast<const char*>(buf);
  if (map.contiguous()) {
    std::memcpy(out, base + map.lb, count * map.size);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const char* at = base + static_cast<int64_t>(i) * map.extent;
    for (const Run& r : map.runs) {
      std::memcpy(out, at + r.offset, r.length);
      out += r.length;
    }
  }
}

void unpack(const TypeMap& map, const char* in, uint64_t count, void* buf) {
  char* base = static_cast<char*>(buf);
  if (map.contiguous()) {
    std::memcpy(base + map.lb, in, count * map.size);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    char* at = base + static_cast<int64_t>(i) * map.extent;
    for (const Run& r : map.runs) {
      std::memcpy(at + r.offset, in, r.length);
      in += r.length;
    }
  }
}

}  // namespace strata::preload
