// Property test of the engine: seeded random phases (1–8 writer ranks, 1–20 variables, holes,
// empty ranks, blocks smaller and larger than a buffer, unaligned offsets, strided memory,
// random buffer sizes, buffer counts and aggregator counts; each strategy forced or chosen by
// cost, packed puts and whole-span writes forced on, off or chosen) are written through the engine
// into a file pre-filled with a sentinel; rank 0 compares every byte with a serial reference
// image (declared bytes hold their values, holes keep the sentinel); odd seeds write in place
// (strata_commit=in-place), even seeds commit a new file (strata_commit=nosync: holes read as
// zeros, the sentinel file is replaced whole); then a different number of
// ranks reads the written bytes back through the engine and checks them. In a third of the
// seeds some variables repeat an earlier one's chunks and are declared like it
// (Phase::add_extents_like, sometimes like a variable itself declared like another), in file
// order or not; their phase is written three times (declared anew: its plan reused; then
// Phase::repeat).
// usage: mpiexec -n 8 engine_property [SEEDS] [FIRST_SEED] [DIR]
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "strata/strata.hpp"

using namespace strata;

namespace {

constexpr unsigned char kSentinel = 0xEE;

unsigned char value_at(uint64_t seed, uint64_t offset) {
  return static_cast<unsigned char>(splitmix64(seed * 0x9E3779B97F4A7C15ULL ^ offset) & 0xFF);
}

struct Chunk {
  int var;
  uint64_t first, count;  // elements
  int owner;              // writer rank, or -1 for a hole
};

struct Layout {
  struct Var {
    std::string name;
    size_t esize;
    uint64_t elements, offset;
  };
  std::vector<Var> vars;
  std::vector<Chunk> chunks;
  uint64_t file_end = 0;
  int writers = 1, readers = 1;
  bool subfiled = false;
  std::vector<Phase::Hint> hints;
  // like[v]: the variable v repeats the chunks of (declared like it), or -1.
  std::vector<int> like;
  bool likes() const {
    for (int l : like) {
      if (l >= 0) return true;
    }
    return false;
  }
};

Layout make_layout(uint64_t seed, int world) {
  SeededRandom g(seed);
  Layout L;
  L.writers = 1 + static_cast<int>(g.below(static_cast<uint64_t>(world)));
  L.readers = L.writers;
  while (world > 1 && L.readers == L.writers) L.readers = 1 + static_cast<int>(g.below(static_cast<uint64_t>(world)));
  static const uint64_t buffers[] = {4096, 8192, 12288, 65536, 1 << 20};
  const uint64_t buffer = buffers[g.below(5)];
  L.hints.push_back({"cb_buffer_size", std::to_string(buffer)});
  L.hints.push_back({"strata_buffers", std::to_string(1 + g.below(3))});
  // The strategy: aggregators fixed by hint (half the phases), or chosen by the cost model,
  // or forced (direct: every byte by its owner; aggregate); packed puts, staged writes, copies and whole spans
  // forced on or off or left to the figures.
  if (g.below(2) == 0)
    L.hints.push_back({"strata_aggregators", std::to_string(1 + g.below(static_cast<uint64_t>(L.writers)))});
  static const char* strategies[] = {"auto", "direct", "aggregate"};
  static const char* choices[] = {"auto", "true", "false"};
  const char* strategy = strategies[g.below(3)];
  L.hints.push_back({"strata_pack", choices[g.below(3)]});
  L.hints.push_back({"strata_spans", choices[g.below(3)]});
  L.hints.push_back({"strata_stage", choices[g.below(3)]});
  L.hints.push_back({"strata_copy", choices[g.below(3)]});  // one node: copied into a shared window, or put
  if (g.below(2) == 0) L.hints.push_back({"striping_unit", g.below(2) == 0 ? "4096" : "8192"});
  // Direct runs (large aligned runs written by their owner) in a third of the phases.
  if (g.below(3) == 0) L.hints.push_back({"strata_direct_threshold", g.below(2) == 0 ? "4096" : "16384"});
  // Subfiles (one per aggregator, or per two) with an index in a quarter of the phases.
  if (g.below(4) == 0) {
    L.subfiled = true;
    L.hints.push_back({"strata_subfiling", g.below(2) == 0 ? "aggregator" : "2"});
  }
  if (!(L.subfiled && std::string(strategy) == "direct")) L.hints.push_back({"strata_strategy", strategy});
  const int nvars = 1 + static_cast<int>(g.below(20));
  uint64_t cursor = g.below(5000);  // unaligned start
  static const size_t sizes[] = {1, 2, 4, 8};
  SeededRandom like(seed * 31 + 7);
  const bool likes = like.below(3) == 0;
  for (int v = 0; v < nvars; ++v) {
    L.like.push_back(-1);
    if (likes && v > 0 && like.below(3) != 0) {  // v repeats an earlier variable's chunks
      const int u = static_cast<int>(like.below(static_cast<uint64_t>(v)));
      Layout::Var var = L.vars[static_cast<size_t>(u)];
      var.name = "v" + std::to_string(v);
      var.offset = cursor;
      L.vars.push_back(var);
      L.like.back() = u;
      cursor += var.elements * var.esize + (like.below(3) == 0 ? like.below(20000) : 0);
      std::vector<Chunk> copied;
      for (const Chunk& c : L.chunks) {
        if (c.var == u) copied.push_back({v, c.first, c.count, c.owner});
      }
      L.chunks.insert(L.chunks.end(), copied.begin(), copied.end());
      continue;
    }
    Layout::Var var{"v" + std::to_string(v), sizes[g.below(4)], 1 + g.below(g.below(4) == 0 ? 40000 : 3000), cursor};
    L.vars.push_back(var);
    cursor += var.elements * var.esize + (g.below(3) == 0 ? g.below(20000) : 0);  // holes between variables
    // Chunks: small and large, some left as holes, owners random (so some ranks get nothing).
    for (uint64_t e = 0; e < var.elements;) {
      const uint64_t n = std::min(var.elements - e, 1 + g.below(g.below(3) == 0 ? 20000 : 300));
      const int owner = g.below(5) == 0 ? -1 : static_cast<int>(g.below(static_cast<uint64_t>(L.writers)));
      L.chunks.push_back({v, e, n, owner});
      e += n;
    }
  }
  L.file_end = cursor + 100;
  return L;
}

uint64_t chunk_offset(const Layout& L, const Chunk& c) {
  const auto& v = L.vars[static_cast<size_t>(c.var)];
  return v.offset + c.first * v.esize;
}
uint64_t chunk_bytes(const Layout& L, const Chunk& c) { return c.count * L.vars[static_cast<size_t>(c.var)].esize; }

// Declares `mine` in shuffled memory order, some chunks strided (every other element slot).
struct Declared {
  std::vector<std::vector<unsigned char>> memory;  // the buffers
  std::vector<unsigned char*> at;                  // each chunk's memory
  std::vector<size_t> strides;
  std::vector<Chunk> chunks;
};

void fill_chunk(const Layout& L, const Chunk& c, uint64_t seed, unsigned char* memory, size_t stride) {
  const size_t es = L.vars[static_cast<size_t>(c.var)].esize;
  const uint64_t off = chunk_offset(L, c);
  for (uint64_t k = 0; k < c.count; ++k) {
    for (size_t b = 0; b < es; ++b) memory[k * stride + b] = value_at(seed, off + k * es + b);
  }
}

// A layout with variables like others (Layout::like), declared so: each family (a variable and
// those like it, directly or not) one buffer, a segment each; the first's chunks by one
// add_extents call (in file order or shuffled), the others like the variable they repeat; the
// variables in an order where each comes after the one it repeats, by index (the file's) or not.
void declare_like(Phase& phase, const Layout& L, const std::vector<Chunk>& mine, uint64_t seed, int rank, Declared& d) {
  std::vector<int> ids;
  for (const auto& v : L.vars) ids.push_back(phase.define_variable(v.name, v.esize, {v.elements}, v.offset));
  SeededRandom g(seed ^ (0x5EEDULL * static_cast<uint64_t>(rank + 1)));
  const size_t n = L.vars.size();
  std::vector<size_t> root(n), segment(n, 0), members(n, 0);
  for (size_t v = 0; v < n; ++v) {
    root[v] = L.like[v] < 0 ? v : root[static_cast<size_t>(L.like[v])];
    segment[v] = members[root[v]]++;
  }
  std::vector<std::vector<Chunk>> of(n);  // this rank's chunks of each root
  for (const Chunk& c : mine) {
    if (L.like[static_cast<size_t>(c.var)] < 0) of[static_cast<size_t>(c.var)].push_back(c);
  }
  std::vector<uint64_t> bytes(n, 0);  // a root's segment
  std::vector<std::vector<uint64_t>> offsets(n), lengths(n), memory_at(n);
  d.memory.resize(n);
  for (size_t u = 0; u < n; ++u) {
    if (root[u] != u) continue;
    if (g.below(2) == 0) g.shuffle(of[u]);
    for (const Chunk& c : of[u]) {
      offsets[u].push_back(chunk_offset(L, c));
      lengths[u].push_back(chunk_bytes(L, c));
      memory_at[u].push_back(bytes[u]);
      bytes[u] += chunk_bytes(L, c);
    }
    d.memory[u].assign(bytes[u] * members[u] + 1, 0x5A);
  }
  for (size_t v = 0; v < n; ++v) {  // every member's chunks, filled
    const size_t u = root[v];
    for (size_t i = 0; i < of[u].size(); ++i) {
      const Chunk c{static_cast<int>(v), of[u][i].first, of[u][i].count, rank};
      unsigned char* at = d.memory[u].data() + segment[v] * bytes[u] + memory_at[u][i];
      fill_chunk(L, c, seed, at, L.vars[v].esize);
      d.chunks.push_back(c);
      d.at.push_back(at);
      d.strides.push_back(L.vars[v].esize);
    }
  }
  std::vector<size_t> order(n);
  for (size_t v = 0; v < n; ++v) order[v] = v;
  if (g.below(2) == 0) g.shuffle(order);
  std::vector<bool> done(n, false);
  for (size_t left = n; left > 0;) {
    for (size_t v : order) {
      const int l = L.like[v];
      if (done[v] || (l >= 0 && !done[static_cast<size_t>(l)])) continue;
      if (l < 0) {
        phase.add_extents(ids[v], offsets[v].size(), offsets[v].data(), lengths[v].data(), d.memory[v].data());
      } else {
        const auto shift = static_cast<std::ptrdiff_t>((segment[v] - segment[static_cast<size_t>(l)]) * bytes[root[v]]);
        phase.add_extents_like(ids[v], l, shift);
      }
      done[v] = true;
      --left;
    }
  }
}

void declare(Phase& phase, const Layout& L, std::vector<Chunk> mine, uint64_t seed, int rank, bool fill, Declared& d) {
  std::vector<int> ids;
  for (const auto& v : L.vars) ids.push_back(phase.define_variable(v.name, v.esize, {v.elements}, v.offset));
  SeededRandom g(seed ^ (0xABCDEFULL * static_cast<uint64_t>(rank + 1)));
  g.shuffle(mine);
  d.chunks = mine;
  d.memory.resize(mine.size());
  d.at.resize(mine.size());
  d.strides.resize(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    const Chunk& c = mine[i];
    const size_t es = L.vars[static_cast<size_t>(c.var)].esize;
    const size_t stride = g.below(4) == 0 ? 2 * es : es;
    d.strides[i] = stride;
    d.memory[i].assign(c.count * stride, 0x5A);
    d.at[i] = d.memory[i].data();
    if (fill) fill_chunk(L, c, seed, d.at[i], stride);
    if (stride == es && g.below(2) == 0) {
      phase.add_extent(ids[static_cast<size_t>(c.var)], chunk_offset(L, c), chunk_bytes(L, c), d.memory[i].data());
    } else {
      phase.add_subarray(ids[static_cast<size_t>(c.var)], {c.first}, {c.count}, d.memory[i].data(), stride);
    }
  }
}

// First byte of `d` that does not hold its value, as "offset N: expected X found Y".
std::string check_read(const Layout& L, const Declared& d, uint64_t seed) {
  for (size_t i = 0; i < d.chunks.size(); ++i) {
    const Chunk& c = d.chunks[i];
    const size_t es = L.vars[static_cast<size_t>(c.var)].esize;
    const uint64_t off = chunk_offset(L, c);
    for (uint64_t k = 0; k < c.count; ++k) {
      for (size_t b = 0; b < es; ++b) {
        const unsigned char got = d.at[i][k * d.strides[i] + b], want = value_at(seed, off + k * es + b);
        if (got != want) {
          return "offset " + std::to_string(off + k * es + b) + ": expected " + std::to_string(want) + ", read " +
                 std::to_string(got);
        }
      }
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 300;
  const uint64_t first = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const std::string dir = argc > 3 ? argv[3] : "/tmp";
  const std::string path = dir + "/engine_property." + std::to_string(getpid() * 0 + world) + ".dat";

  // One communicator and one engine for each group size 1..world (ranks 0..k-1).
  std::vector<MPI_Comm> comms(static_cast<size_t>(world + 1), MPI_COMM_NULL);
  std::vector<std::unique_ptr<Engine>> engines(static_cast<size_t>(world + 1));
  for (int k = 1; k <= world; ++k) {
    MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &comms[static_cast<size_t>(k)]);
    if (rank < k) engines[static_cast<size_t>(k)] = std::make_unique<Engine>(comms[static_cast<size_t>(k)]);
  }

  int failures = 0;
  for (int t = 0; t < seeds; ++t) {
    const uint64_t seed = first + static_cast<uint64_t>(t);
    const Layout L = make_layout(seed, world);
    const bool committed = seed % 2 == 0;  // else written in place, into the sentinel file
    std::vector<Phase::Hint> hints = L.hints;
    hints.emplace_back("strata_commit", committed ? "nosync" : "in-place");
    std::string problem;
    // Each step catches its own errors so every rank still reaches every barrier.
    auto step = [&](auto&& fn) {
      try {
        fn();
      } catch (const Error& e) {
        if (problem.empty()) problem = std::string("error: ") + e.what();
      }
    };
    step([&] {
      if (rank == 0) {  // the sentinel: holes must keep it
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        std::vector<char> s(L.file_end, static_cast<char>(kSentinel));
        f.write(s.data(), static_cast<std::streamsize>(s.size()));
      }
    });
    MPI_Barrier(MPI_COMM_WORLD);
    step([&] {
      if (rank < L.writers) {
        std::vector<Chunk> mine;
        for (const Chunk& c : L.chunks) {
          if (c.owner == rank) mine.push_back(c);
        }
        Engine& engine = *engines[static_cast<size_t>(L.writers)];
        MPI_Comm writers = comms[static_cast<size_t>(L.writers)];
        // Variables declared like others: written three times (declared anew, then repeated).
        const int writes = L.likes() ? 3 : 1;
        std::unique_ptr<Phase> last;
        Declared keep;
        for (int w = 0; w < writes; ++w) {
          Declared d;
          std::unique_ptr<Phase> phase;
          if (w == 2) {
            phase = std::make_unique<Phase>(Phase::repeat(std::move(*last)));
          } else {
            phase = std::make_unique<Phase>(engine, path, PhaseMode::write, hints);
            if (L.likes()) {
              declare_like(*phase, L, mine, seed, rank, d);
            } else {
              declare(*phase, L, mine, seed, rank, true, d);
            }
          }
          phase->plan();
          phase->write();
          const PhaseStats st = phase->close();
          // The plan is computed independently on every rank: it must be the same everywhere.
          unsigned long long sig = st.plan_signature, lo = 0, hi = 0;
          MPI_Allreduce(&sig, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, writers);
          MPI_Allreduce(&sig, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, writers);
          if (lo != hi && problem.empty()) problem = "the plan differs between ranks";
          if (w > 0 && !st.plan_reused && problem.empty())
            problem = "write " + std::to_string(w + 1) + ": plan not reused";
          if (w == 1) keep = std::move(d);  // the repeat writes from its memory
          last = std::move(phase);
        }
      }
    });
    MPI_Barrier(MPI_COMM_WORLD);
    step([&] {
      if (rank == 0) {                                         // the serial reference image
        const unsigned char hole = committed ? 0 : kSentinel;  // a committed file is a new file
        std::vector<unsigned char> want(L.file_end, hole), got(L.file_end, 0);
        std::vector<bool> declared(L.file_end, false);
        for (const Chunk& c : L.chunks) {
          if (c.owner < 0) continue;
          const uint64_t off = chunk_offset(L, c);
          for (uint64_t b = 0; b < chunk_bytes(L, c); ++b) {
            want[off + b] = value_at(seed, off + b);
            declared[off + b] = true;
          }
        }
        auto index = read_output_index(path);
        if (!index) problem = "no index was written";
        if (L.subfiled && index) {
          // Assemble the global image from the subfiles the index lists; only declared bytes
          // are compared (holes inside subfiles are sparse, not the sentinel).
          for (const auto& file : index->files) {
            std::ifstream f(dir + "/" + file.path, std::ios::binary);
            std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            for (uint64_t i = 0; i < bytes.size() && file.begin + i < L.file_end; ++i) {
              got[file.begin + i] = static_cast<unsigned char>(bytes[i]);
            }
          }
          for (uint64_t i = 0; i < L.file_end; ++i) {
            if (!declared[i]) got[i] = want[i];
          }
        } else {
          std::ifstream f(path, std::ios::binary);
          f.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(got.size()));
          // A new file ends at its last declared byte; one written in place keeps its length.
          if (!committed && static_cast<uint64_t>(f.gcount()) != L.file_end)
            problem = "the file is shorter than the reference";
          if (committed && !f.eof() && f.peek() != EOF) problem = "the file is longer than the reference";
        }
        for (uint64_t i = 0; i < L.file_end && problem.empty(); ++i) {
          if (got[i] != want[i]) {
            problem = "byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", the reference has " +
                      std::to_string(want[i]) + (want[i] == kSentinel ? " (a hole was overwritten)" : "");
          }
        }
      }
    });
    step([&] {
      // Read back with another rank count: the written chunks dealt out in turn.
      if (rank < L.readers) {
        std::vector<Chunk> mine;
        int k = 0;
        for (const Chunk& c : L.chunks) {
          if (c.owner >= 0 && (k++ % L.readers) == rank) mine.push_back(c);
        }
        Phase phase(*engines[static_cast<size_t>(L.readers)], path, PhaseMode::read, L.hints);
        Declared d;
        declare(phase, L, mine, seed + 7, rank, false, d);
        phase.plan();
        phase.read();
        phase.close();
        std::string bad = check_read(L, d, seed);
        if (!bad.empty() && problem.empty()) problem = "read with " + std::to_string(L.readers) + " ranks: " + bad;
      }
    });
    int mine_bad = problem.empty() ? 0 : 1, any_bad = 0;
    MPI_Allreduce(&mine_bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (mine_bad) {
      std::fprintf(stderr, "engine_property: seed %llu (writers %d, readers %d, %zu variables%s) rank %d: %s\n",
                   static_cast<unsigned long long>(seed), L.writers, L.readers, L.vars.size(),
                   L.subfiled ? ", subfiles" : "", rank, problem.c_str());
    }
    if (any_bad) ++failures;
  }
  if (rank == 0) {
    std::printf("engine_property: %d of %d seeded phases failed (seeds %llu..%llu, %d ranks)\n", failures, seeds,
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + seeds - 1), world);
    std::remove(path.c_str());
  }
  engines.clear();
  for (auto& c : comms) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
