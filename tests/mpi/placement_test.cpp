// Aggregator placement on memory tiers, through the engine API, checked on every rank.
// usage: mpiexec -n K placement_test DIR CASE
//   election    the election is identical on every rank; each partition has its own aggregator;
//               rank 0's cost table agrees (the winner is the cheapest eligible candidate)
//   tiers       forcing each tier this node has (strata_aggr_tier) writes and reads back, verified;
//               forcing an absent tier is the same clear error on every rank
//   capacity    the paper's Table 10: capacities lowered to 32 MiB with three 16 MiB buffers move
//               aggregation to the next tier (a fallback), and the data still verifies
//   node-local  strata_target=node-local with strata_drain=true: node files, then the shared
//               file; both read back and verify
//   owners      node-local writes chosen by cost: where each partition holds one node's bytes,
//               the owners write their node's files (no rounds, aggregators on those nodes);
//               interleaved bytes are aggregated; both read back verified; a byte declared
//               twice is the same usage error on every rank
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "arch/memory_tier.hpp"
#include "arch/node_local.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "strata/strata.hpp"

using namespace strata;

namespace {

int rank = 0, size = 1;

bool all(bool mine) {
  int v = mine ? 1 : 0, every = 0;
  MPI_Allreduce(&v, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return every == 1;
}

bool check(bool ok, const std::string& what) {
  const bool every = all(ok);
  if (!ok) std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what.c_str());
  if (rank == 0) std::printf("%s %s\n", every ? "ok  " : "FAIL", what.c_str());
  return every;
}

unsigned char value(uint64_t offset, int seed) {
  return static_cast<unsigned char>((offset * 131 + offset / 251 + seed) & 0xff);
}

// Uneven contiguous blocks: rank r holds (r % 3 + 1) * unit bytes, after the ranks before it.
struct Block {
  uint64_t offset = 0, length = 0;
};
Block my_block(uint64_t unit) {
  Block b;
  for (int r = 0; r < size; ++r) {
    const uint64_t len = static_cast<uint64_t>(r % 3 + 1) * unit;
    if (r == rank) b.length = len;
    if (r < rank) b.offset += len;
  }
  return b;
}

uint64_t total_bytes(uint64_t unit) {
  uint64_t t = 0;
  for (int r = 0; r < size; ++r) t += static_cast<uint64_t>(r % 3 + 1) * unit;
  return t;
}

// Writes this rank's block, reads it back with `read_hints`, compares. Returns the write's
// placement and the write's stats through the pointers. Both phases aggregate (hint
// strata_strategy=aggregate): placement is what is tested, and the cost model would send
// such large contiguous blocks straight to the file.
bool round_trip(Engine& engine, const std::string& path, uint64_t unit, std::vector<Phase::Hint> hints,
                std::vector<Phase::Hint> read_hints, int seed, PlacementReport* report = nullptr,
                PhaseStats* stats = nullptr) {
  hints.emplace_back("strata_strategy", "aggregate");
  read_hints.emplace_back("strata_strategy", "aggregate");
  const Block b = my_block(unit);
  std::vector<unsigned char> out(b.length), in(b.length, 0);
  for (uint64_t i = 0; i < b.length; ++i) out[i] = value(b.offset + i, seed);
  {
    Phase w(engine, path, PhaseMode::write, hints);
    const int v = w.define_variable("data", 1, {total_bytes(unit)}, 0);
    w.add_extent(v, b.offset, b.length, out.data());
    w.plan();
    if (report != nullptr) *report = w.placement();
    w.write();
    PhaseStats s = w.close();
    if (stats != nullptr) *stats = s;
  }
  Phase r(engine, path, PhaseMode::read, read_hints);
  const int v = r.define_variable("data", 1, {total_bytes(unit)}, 0);
  r.add_extent(v, b.offset, b.length, in.data());
  r.plan();
  r.read();
  r.close();
  return in == out;
}

std::string signature(const PlacementReport& p) {
  std::string s;
  for (const auto& part : p.partitions) s += std::to_string(part.aggregator) + ":" + part.tier + ";";
  return s;
}

bool same_everywhere(const std::string& text) {
  unsigned long long h = fnv1a(text);
  unsigned long long lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

bool election(Engine& engine, const std::string& dir) {
  bool ok = true;
  PlacementReport p;
  PhaseStats s;
  ok &= check(round_trip(engine, dir + "/election.dat", 40000,
                         {{"strata_cost_table", "true"}, {"cb_buffer_size", "16K"}}, {}, 1, &p, &s),
              "written and read back");
  ok &= check(same_everywhere(signature(p)), "the election is identical on every rank: " + signature(p));
  std::vector<int> seen;
  bool distinct = true;
  for (const auto& part : p.partitions) {
    for (int a : seen) distinct &= a != part.aggregator;
    seen.push_back(part.aggregator);
  }
  ok &= check(distinct && !p.partitions.empty(), "each partition has its own aggregator");
  // The table: each winner costs no more than any eligible candidate that aggregates nothing
  // (such a rank bid for the partition in every election round), and partition 0's winner is
  // its cheapest candidate of all.
  bool table_ok = true;
  if (rank == 0) {
    table_ok = !p.candidates.empty();
    for (size_t i = 0; i < p.partitions.size(); ++i) {
      const auto& part = p.partitions[i];
      double winner = -1, cheapest_free = 1e300, cheapest = 1e300;
      for (const auto& c : p.candidates) {
        if (c.partition != static_cast<int>(i) || !c.filtered.empty()) continue;
        const double cost = c.c1_s + c.c2_s;
        if (c.rank == part.aggregator && c.tier == part.tier) winner = cost;
        cheapest = std::min(cheapest, cost);
        bool aggregates = false;
        for (const auto& q : p.partitions) aggregates |= q.aggregator == c.rank;
        if (!aggregates) cheapest_free = std::min(cheapest_free, cost);
      }
      table_ok &= winner >= 0 && winner <= cheapest_free && (i != 0 || winner == cheapest);
    }
  }
  ok &= check(table_ok, "the cost table agrees with the election");
  return ok;
}

bool tiers(Engine& engine, const std::string& dir) {
  bool ok = true;
  for (Tier t : all_tiers()) {
    const std::string name = tier_name(t);
    const bool here = make_memory_tier(t, TierFigures{}, 0)->available();
    if (!all(here)) {
      std::string message;
      try {
        round_trip(engine, dir + "/tier-" + name + ".dat", 20000, {{"strata_aggr_tier", name}}, {}, 2);
      } catch (const Error& e) {
        message = e.what();
      }
      ok &= check(message.find("forced tier " + name) != std::string::npos && same_everywhere(message),
                  "forcing absent tier " + name + " is the same error everywhere: " + message);
      continue;
    }
    PlacementReport p;
    PhaseStats s;
    const bool data = round_trip(engine, dir + "/tier-" + name + ".dat", 20000, {{"strata_aggr_tier", name}},
                                 {{"strata_aggr_tier", name}}, 3, &p, &s);
    bool on_tier = !p.partitions.empty();
    for (const auto& part : p.partitions) on_tier &= part.tier == name;
    ok &= check(data && on_tier && (!s.aggregator || s.tier == name), "aggregation forced on " + name + " verifies");
  }
  return ok;
}

bool capacity(const std::string& dir) {
  bool ok = true;
  // Table 10: HBM, then DRAM too, lowered to 32 MiB; three buffers of 16 MiB need 48 MiB.
  const std::vector<Phase::Hint> hints{{"cb_buffer_size", "16M"}, {"strata_buffers", "3"}};
  struct Case {
    const char* capacities;
    std::vector<std::string> allowed;
  } cases[] = {{"hbm:32MiB", {"dram"}},
               {"hbm:32MiB,dram:32MiB", {"tmpfs", "nvr"}},
               {"hbm:32MiB,dram:32MiB,tmpfs:32MiB", {"nvr"}}};
  for (const Case& c : cases) {
    setenv("STRATA_TIER_CAPACITY", c.capacities, 1);
    Engine engine(MPI_COMM_WORLD);  // the machine is read at an engine's first plan
    PlacementReport p;
    PhaseStats s;
    const bool data = round_trip(engine, dir + "/capacity.dat", 300000, hints, hints, 4, &p, &s);
    bool moved = !p.partitions.empty();
    for (const auto& part : p.partitions) {
      bool in = false;
      for (const auto& a : c.allowed) in |= part.tier == a;
      moved &= in;
    }
    const bool fallback_counted =
        c.allowed[0] == "dram" ? true : (p.fallbacks == p.partitions.size() && s.tier_fallbacks == p.fallbacks);
    ok &= check(data && moved && fallback_counted, std::string("capacities ") + c.capacities + ": aggregation on " +
                                                       (p.partitions.empty() ? "?" : p.partitions[0].tier) + ", " +
                                                       std::to_string(p.fallbacks) + " fallback(s), data verified");
  }
  unsetenv("STRATA_TIER_CAPACITY");
  return ok;
}

bool node_local(Engine& engine, const std::string& dir) {
  bool ok = true;
  const std::string path = dir + "/node-local.dat";
  const std::vector<Phase::Hint> write{
      {"strata_target", "node-local"}, {"strata_drain", "true"}, {"cb_buffer_size", "8K"}};
  PlacementReport p;
  ok &= check(round_trip(engine, path, 30000, write, {{"strata_target", "node-local"}}, 5, &p),
              "node-local write, read back from the node-local copy");
  // The node files exist in their aggregators' node directories.
  bool files = rank != 0;
  if (rank == 0) {
    files = !p.partitions.empty();
    for (size_t i = 0; i < p.partitions.size(); ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "node-local.dat.part.%05zu", i);
      const auto f = std::filesystem::path(node_local_root()) / std::to_string(p.partitions[i].node) / name;
      files &= std::filesystem::exists(f);
    }
  }
  ok &= check(files, "one node file per partition in its aggregator's node directory");
  // The drained shared file reads back through its own index, with another rank count's view irrelevant here.
  const Block b = my_block(30000);
  std::vector<unsigned char> in(b.length);
  Phase r(engine, path, PhaseMode::read);
  const int v = r.define_variable("data", 1, {total_bytes(30000)}, 0);
  r.add_extent(v, b.offset, b.length, in.data());
  r.plan();
  r.read();
  r.close();
  bool same = true;
  for (uint64_t i = 0; i < b.length; ++i) same &= in[i] == value(b.offset + i, 5);
  ok &= check(same, "the drained shared file reads back and verifies");
  return ok;
}

// One node-local write of `offsets` (each `piece` bytes), hints by cost; read back from the
// node-local copy and compared. The write's stats and placement through the pointers.
bool node_local_round_trip(Engine& engine, const std::string& path, const std::vector<uint64_t>& offsets,
                           uint64_t piece, uint64_t total, int seed, PhaseStats* stats, PlacementReport* report) {
  const std::vector<Phase::Hint> hints{{"strata_target", "node-local"}, {"strata_aggregators", "2"}};
  std::vector<unsigned char> out(offsets.size() * piece), in(out.size(), 0);
  for (size_t k = 0; k < offsets.size(); ++k) {
    for (uint64_t i = 0; i < piece; ++i) out[k * piece + i] = value(offsets[k] + i, seed);
  }
  {
    Phase w(engine, path, PhaseMode::write, hints);
    const int v = w.define_variable("data", 1, {total}, 0);
    for (size_t k = 0; k < offsets.size(); ++k) w.add_extent(v, offsets[k], piece, out.data() + k * piece);
    w.plan();
    *report = w.placement();
    w.write();
    *stats = w.close();
  }
  Phase r(engine, path, PhaseMode::read, {{"strata_target", "node-local"}});
  const int v = r.define_variable("data", 1, {total}, 0);
  for (size_t k = 0; k < offsets.size(); ++k) r.add_extent(v, offsets[k], piece, in.data() + k * piece);
  r.plan();
  r.read();
  r.close();
  return in == out;
}

bool owners(Engine& engine, const std::string& dir) {
  bool ok = true;
  // STRATA_RANKS_PER_NODE (virtual nodes) or one node: rank r is on node r / per_node.
  const char* rpn = std::getenv("STRATA_RANKS_PER_NODE");
  const int per_node = rpn != nullptr ? std::atoi(rpn) : size;
  const int nodes = (size + per_node - 1) / per_node;
  const uint64_t block = 64 << 10, total = block * static_cast<uint64_t>(size);
  // Blocks in rank order, two aggregators: each partition holds one node's ranks' bytes when
  // there are two nodes (or one), so the owners write; the aggregators are on those nodes.
  PhaseStats s;
  PlacementReport p;
  bool data = node_local_round_trip(engine, dir + "/owners.dat", {block * static_cast<uint64_t>(rank)}, block, total, 7,
                                    &s, &p);
  if (nodes <= 2) {
    bool local = !p.partitions.empty();
    for (const auto& part : p.partitions) {
      const uint64_t first_rank = part.begin / block;
      local &= part.node == static_cast<int>(first_rank) / per_node;
    }
    ok &= check(data && s.rounds == 0 && s.direct_bytes == block && local,
                "blocks by node: the owners wrote their node's files (rounds " + std::to_string(s.rounds) +
                    ", direct bytes " + std::to_string(s.direct_bytes) + "), read back verified");
  } else {
    ok &= check(data, "blocks by node, read back verified");
  }
  // Rewritten in place: a longer copy first (from byte 0 to 8 KiB past the end), then one from
  // byte 100: rank 0 reads the bytes before 100 as zeros, and the last file ends with the data.
  {
    const uint64_t tail = rank == size - 1 ? 8192 : 0;
    node_local_round_trip(engine, dir + "/again.dat", {block * static_cast<uint64_t>(rank)}, block + tail, total + 8192,
                          9, &s, &p);
    const uint64_t from = rank == 0 ? 100 : block * static_cast<uint64_t>(rank);
    std::vector<unsigned char> out(block * static_cast<uint64_t>(rank + 1) - from);
    for (uint64_t i = 0; i < out.size(); ++i) out[i] = value(from + i, 10);
    {
      Phase w(engine, dir + "/again.dat", PhaseMode::write, {{"strata_target", "node-local"}});
      const int v = w.define_variable("data", 1, {total}, 0);
      w.add_extent(v, from, out.size(), out.data());
      w.plan();
      p = w.placement();
      w.write();
      w.close();
    }
    std::vector<unsigned char> whole(rank == 0 ? total : 0, 1);
    Phase r(engine, dir + "/again.dat", PhaseMode::read, {{"strata_target", "node-local"}});
    const int v = r.define_variable("data", 1, {total}, 0);
    if (rank == 0) r.add_extent(v, 0, total, whole.data());
    r.plan();
    r.read();
    r.close();
    bool same = true;
    for (uint64_t i = 0; i < whole.size(); ++i) same &= whole[i] == (i < 100 ? 0 : value(i, 10));
    bool ends = true;
    if (rank == 0 && !p.partitions.empty()) {
      const auto& last = p.partitions.back();
      char name[64];
      std::snprintf(name, sizeof name, "again.dat.part.%05zu", p.partitions.size() - 1);
      const auto f = std::filesystem::path(node_local_root()) / std::to_string(last.node) / name;
      ends = std::filesystem::file_size(f) == total - last.begin;
    }
    ok &= check(same && ends, "a copy rewritten in place holds nothing of the one before");
  }
  // Interleaved 4 KiB pieces: with two nodes each partition holds both nodes' bytes: aggregated.
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < 8; ++i)
    offsets.push_back((i * static_cast<uint64_t>(size) + static_cast<uint64_t>(rank)) * 4096);
  data = node_local_round_trip(engine, dir + "/interleaved.dat", offsets, 4096, 8 * 4096 * static_cast<uint64_t>(size),
                               8, &s, &p);
  ok &= check(data && (nodes == 1 || s.rounds > 0), "interleaved pieces (aggregated across nodes: rounds " +
                                                        std::to_string(s.rounds) + "), read back verified");
  if (size > 1) {  // rank 0 also declares the first byte of rank 1's block (on its node, or not)
    std::string message;
    try {
      Phase w(engine, dir + "/overlap.dat", PhaseMode::write, {{"strata_target", "node-local"}});
      const int v = w.define_variable("data", 1, {total}, 0);
      std::vector<unsigned char> bytes(block + 1, 1);
      w.add_extent(v, block * static_cast<uint64_t>(rank), rank == 0 ? block + 1 : block, bytes.data());
      w.plan();
      w.write();
      w.close();
    } catch (const Error& e) {
      message = e.what();
    }
    ok &= check(message.find("overlap") != std::string::npos && same_everywhere(message),
                "a byte declared twice is the same error on every rank: " + message);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  // As the strata program does: one-rank Open MPI jobs need osc/pt2pt for windows on tier memory.
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if ((world == nullptr || std::string(world) == "1") && std::getenv("OMPI_MCA_osc") == nullptr)
    setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const std::string which = argc > 2 ? argv[2] : "election";
  bool ok = false;
  try {
    if (which == "capacity") {
      ok = capacity(dir);
    } else {
      Engine engine(MPI_COMM_WORLD);
      if (which == "election") ok = election(engine, dir);
      if (which == "tiers") ok = tiers(engine, dir);
      if (which == "node-local") ok = node_local(engine, dir);
      if (which == "owners") ok = owners(engine, dir);
    }
  } catch (const Error& e) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", e.what());
    ok = false;
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
