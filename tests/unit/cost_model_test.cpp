// The aggregation paper's toy example (section 4.2.3, Tables 1 and 2): four processes on four
// nodes produce 10, 50, 20 and 5 MB from DRAM for a parallel file system; each node has HBM,
// DRAM and NVR with Table 1's figures. With the topology below (P1's node central), P1's HBM
// must win, HBM and DRAM must cost within 5 % of each other, and NVR at least 3x HBM.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "arch/machine.hpp"
#include "common/error.hpp"
#include "engine/place/cost_model.hpp"

using namespace strata;
using namespace strata::engine;

namespace {

constexpr double MB = 1e6, GB = 1e9, ms = 1e-3;

Machine toy_machine() {
  Machine m;
  m.name = "toy";
  m.tiers = {{Tier::hbm, {10 * ms, 180 * GB, uint64_t(16e9), Persistency::none}},
             {Tier::dram, {20 * ms, 90 * GB, uint64_t(192e9), Persistency::none}},
             {Tier::nvr, {100 * ms, 0.15 * GB, uint64_t(128e9), Persistency::job}}};
  m.network_latency_s = 30 * ms;
  m.network_bandwidth_Bps = 12.5 * GB;
  // The test's topology (hops): node 1 is three hops from every node, the others four or five
  // from each other; node 1 is also nearest the storage target (Lustre, at the network's speed).
  m.topology.kind = Topology::Kind::matrix;
  m.topology.matrix = {{0, 3, 4, 5}, {3, 0, 3, 3}, {4, 3, 0, 4}, {5, 3, 4, 0}};
  m.storage_latency_s = 0;
  m.storage_bandwidth_Bps = 12.5 * GB;
  m.storage_distances = {5, 4, 5, 5};
  return m;
}

CostInput toy_input(const Machine& m) {
  CostInput in;
  in.machine = &m;
  in.loads = {
      {0, uint64_t(10 * MB), 1}, {1, uint64_t(50 * MB), 1}, {2, uint64_t(20 * MB), 1}, {3, uint64_t(5 * MB), 1}};
  in.buffer_need = 2 * (16u << 20);
  return in;
}

}  // namespace

TEST(CostModel, ToyExampleElectsTheHbmOfP1sNode) {
  const Machine m = toy_machine();
  const CostInput in = toy_input(m);
  double best = 1e300;
  int best_node = -1;
  Tier best_tier = Tier::dram;
  for (int node = 0; node < 4; ++node) {
    const Cost hbm = score(in, node, Tier::hbm), dram = score(in, node, Tier::dram), nvr = score(in, node, Tier::nvr);
    std::printf("P%d  HBM %.3f  DRAM %.3f  NVR %.3f\n", node, hbm.total(), dram.total(), nvr.total());
    EXPECT_LT(std::abs(dram.total() - hbm.total()) / hbm.total(), 0.05) << "node " << node;
    EXPECT_GE(nvr.total(), 3 * hbm.total()) << "node " << node;
    EXPECT_LT(hbm.total(), dram.total()) << "node " << node;  // HBM's lower latency on the bus hop
    for (const auto& [tier, c] : {std::pair{Tier::hbm, hbm}, {Tier::dram, dram}, {Tier::nvr, nvr}}) {
      if (c.total() < best) {
        best = c.total();
        best_node = node;
        best_tier = tier;
      }
    }
  }
  EXPECT_EQ(best_node, 1);
  EXPECT_EQ(best_tier, Tier::hbm);
}

TEST(CostModel, CapacityAndPersistencyFilter) {
  Machine m = toy_machine();
  m.tier(Tier::hbm)->capacity_bytes = 32u << 20;  // Table 10: 3 x 16 MB buffers do not fit
  CostInput in = toy_input(m);
  in.buffer_need = 3 * (16u << 20);
  EXPECT_EQ(score(in, 1, Tier::hbm).filtered, Filter::capacity);
  EXPECT_EQ(score(in, 1, Tier::dram).filtered, Filter::none);
  in.persistent = true;  // only a job-lifetime tier with room for all 85 MB may hold it
  EXPECT_EQ(score(in, 1, Tier::dram).filtered, Filter::persistency);
  EXPECT_EQ(score(in, 1, Tier::nvr).filtered, Filter::none);
  m.tier(Tier::nvr)->capacity_bytes = uint64_t(80 * MB);
  EXPECT_EQ(score(in, 1, Tier::nvr).filtered, Filter::capacity);
}

TEST(CostModel, MoreDataOnANodeMakesItCheaper) {
  Machine m = toy_machine();
  m.topology = Topology{};  // flat
  m.storage_distances.clear();
  CostInput in = toy_input(m);
  // On a flat network the biggest producer's node is the cheapest: its data stays on the bus.
  double best = 1e300;
  int best_node = -1;
  for (int node = 0; node < 4; ++node) {
    const double c = score(in, node, Tier::dram).total();
    if (c < best) best = c, best_node = node;
  }
  EXPECT_EQ(best_node, 1);
}

TEST(Topology, Distances) {
  Topology t;
  EXPECT_EQ(t.distance(3, 3), 0);
  EXPECT_EQ(t.distance(0, 7), 1);
  t.kind = Topology::Kind::dragonfly;
  t.nodes_per_router = 4;
  t.routers_per_group = 2;
  EXPECT_EQ(t.distance(0, 3), 1);
  EXPECT_EQ(t.distance(0, 4), 2);
  EXPECT_EQ(t.distance(0, 8), 3);
  t.kind = Topology::Kind::torus;
  t.dims = {4, 4};
  EXPECT_EQ(t.distance(0, 3), 1);  // wraps around
  EXPECT_EQ(t.distance(0, 10), 4);
  t.kind = Topology::Kind::fat_tree;
  t.arity = {2, 2};
  EXPECT_EQ(t.distance(0, 1), 2);
  EXPECT_EQ(t.distance(0, 2), 4);
  EXPECT_EQ(t.distance(0, 4), 6);
  t.kind = Topology::Kind::matrix;
  t.matrix = {{0, 5}, {5, 0}};
  EXPECT_EQ(t.distance(0, 1), 5);
  EXPECT_THROW(t.distance(0, 2), Error);
}

TEST(MachineFile, RoundTripsThroughToml) {
  Machine m = toy_machine();
  m.source = "test";
  m.topology = Topology{};
  m.topology.kind = Topology::Kind::dragonfly;
  m.topology.nodes_per_router = 4;
  m.topology.routers_per_group = 96;
  m.storage_distances.clear();
  m.storage_distance = 3;
  const Machine back = parse_machine(machine_to_toml(m), "round-trip");
  ASSERT_NE(back.tier(Tier::nvr), nullptr);
  EXPECT_NEAR(back.tier(Tier::nvr)->bandwidth_Bps, 0.15 * GB, 1e3);
  EXPECT_EQ(back.tier(Tier::nvr)->persistency, Persistency::job);
  EXPECT_EQ(back.tier(Tier::hbm)->capacity_bytes, uint64_t(16e9));
  EXPECT_NEAR(back.network_latency_s, 30 * ms, 1e-9);
  EXPECT_EQ(back.topology.distance(0, 5), 2);
  EXPECT_EQ(back.distance_to_storage(7), 3);
}

TEST(MachineFile, IoFiguresRoundTripAndAreChecked) {
  Machine m = toy_machine();
  m.source = "test";
  m.topology = Topology{};
  m.storage_distances.clear();
  m.io.measured = true;
  m.io.probe_ranks = 16;
  m.io.fence_s = 106e-6;
  m.io.put_run_s = 0.4e-6;
  m.io.cores = 48;
  m.io.write = {{4096, 2.4e-6}, {65536, 11e-6}, {1 << 20, 160e-6}};
  m.io.rewrite = {{4096, 3e-6}, {65536, 8e-6}, {1 << 20, 90e-6}};
  m.io.curve_writers = 16;
  m.io.scatter = 1.4;
  m.io.load_average = 0.25;
  m.io.probed_at = 1790000000;
  const Machine back = parse_machine(machine_to_toml(m), "round-trip");
  EXPECT_NEAR(back.io.scatter, 1.4, 1e-9);
  EXPECT_NEAR(back.io.load_average, 0.25, 1e-6);
  EXPECT_EQ(back.io.probed_at, 1790000000);
  EXPECT_FALSE(back.io.doubtful());
  // Repeats that scattered beyond kDoubtfulScatter: a busy machine's figures; and older than
  // the program that reads them (probed in 2026-09, before this build).
  m.io.scatter = kDoubtfulScatter * 1.5;
  EXPECT_TRUE(parse_machine(machine_to_toml(m), "busy").io.doubtful());
  EXPECT_TRUE(parse_machine(machine_to_toml(m), "busy").io.older_than_build());
  m.io.probed_at = 4102444800;  // 2100
  EXPECT_FALSE(parse_machine(machine_to_toml(m), "later").io.older_than_build());
  m.io.load_average = -1;  // not known: not written, read back as not known
  EXPECT_LT(parse_machine(machine_to_toml(m), "no-load").io.load_average, 0);
  EXPECT_TRUE(back.io.measured);
  EXPECT_EQ(back.io.probe_ranks, 16);
  EXPECT_NEAR(back.io.fence_s, 106e-6, 1e-12);
  EXPECT_NEAR(back.io.put_run_s, 0.4e-6, 1e-12);
  EXPECT_EQ(back.io.cores, 48);
  EXPECT_EQ(back.io.cores_per_node(), 48);
  ASSERT_EQ(back.io.write.size(), 3u);
  EXPECT_EQ(back.io.write[2].request_bytes, 1u << 20);
  EXPECT_NEAR(back.io.write[2].seconds, 160e-6, 1e-12);
  // The rewrite curve, at the write curve's sizes; what a recycled file's write is priced by.
  ASSERT_EQ(back.io.rewrite.size(), 3u);
  EXPECT_EQ(back.io.rewrite[1].request_bytes, 65536u);
  EXPECT_NEAR(back.io.rewrite[2].seconds, 90e-6, 1e-12);
  EXPECT_NEAR(back.io.rewriting().write_s(1 << 20), 90e-6, 1e-12);
  EXPECT_NEAR(IoFigures{}.rewriting().write_s(1 << 20), IoFigures{}.write_s(1 << 20), 1e-15);  // not measured
  // The writers that measured the curves together; absent (a probe of one writer): 0.
  EXPECT_EQ(back.io.curve_writers, 16);
  m.io.curve_writers = 0;
  EXPECT_EQ(machine_to_toml(m).find("curve_writers"), std::string::npos);
  EXPECT_EQ(parse_machine(machine_to_toml(m), "one-writer").io.curve_writers, 0);
  // Without [io]: the stated defaults, not measured.
  m.io = IoFigures{};
  std::string text = machine_to_toml(m);
  text = text.substr(0, text.find("\n# The engine's figures"));
  EXPECT_FALSE(parse_machine(text, "no-io").io.measured);
  EXPECT_GE(parse_machine(text, "no-io").io.cores_per_node(), 1);  // not described: the OS's count
  auto message = [&](const std::string& io) {
    try {
      parse_machine(text + "\n[io]\n" + io, "m.toml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("fence_us = -1\n").find("\"io.fence_us\" must not be negative"), std::string::npos);
  EXPECT_NE(message("hash_GBps = \"fast\"\n").find("\"io.hash_GBps\" must be a number"), std::string::npos);
  EXPECT_NE(message("write_bytes = [4096, 1024]\nwrite_us = [1, 2]\n").find("increasing order"), std::string::npos);
  EXPECT_NE(message("write_bytes = [4096]\n").find("go together"), std::string::npos);
  EXPECT_NE(message("write_bytes = [4096, 65536]\nwrite_us = [1, 2]\nrewrite_us = [1]\n").find("one time for each"),
            std::string::npos);
  EXPECT_NE(message("rewrite_us = [1, 2, 3, 4]\n").find("one time for each"), std::string::npos);
  EXPECT_NE(message("write_bytes = [4096]\nwrite_us = [1]\nrewrite_us = [0]\n").find("positive"), std::string::npos);
  EXPECT_NE(message("measured = 1\n").find("true or false"), std::string::npos);
  EXPECT_NE(message("cores = -2\n").find("\"io.cores\""), std::string::npos);
  EXPECT_NE(message("curve_writers = -1\n").find("\"io.curve_writers\""), std::string::npos);
}

TEST(MachineFile, ErrorsNameFileLineAndField) {
  const std::string good_head =
      "name = \"x\"\n[network]\nlatency_us = 1\nbandwidth_GBps = 10\n"
      "[storage]\nlatency_us = 1\nbandwidth_GBps = 1\n";
  auto message = [](const std::string& text) {
    try {
      parse_machine(text, "m.toml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e =
      message(good_head + "[[tier]]\nname = \"dram\"\nlatency_us = 0.1\ncapacity = \"1GiB\"\npersistency = \"none\"\n");
  EXPECT_NE(e.find("m.toml\", line 8"), std::string::npos) << e;
  EXPECT_NE(e.find("missing field \"tier dram.bandwidth_GBps\""), std::string::npos) << e;
  e = message(
      good_head +
      "[[tier]]\nname = \"dram\"\nlatency_us = 0.1\nbandwidth_GBps = -3\ncapacity = 10\npersistency = \"none\"\n");
  EXPECT_NE(e.find("line 11"), std::string::npos) << e;
  EXPECT_NE(e.find("must not be negative"), std::string::npos) << e;
  e = message(good_head + "[[tier]]\nname = \"ssd\"\n");
  EXPECT_NE(e.find("line 9: unknown tier \"ssd\""), std::string::npos) << e;
  e = message("name = \"x\"\n[network\n");
  EXPECT_NE(e.find("line 2: syntax error"), std::string::npos) << e;
}

TEST(MachineFile, CapacityOverrides) {
  Machine m = toy_machine();
  apply_capacity_overrides(m, "hbm:32MiB,dram:32MiB");
  EXPECT_EQ(m.tier(Tier::hbm)->capacity_bytes, 32u << 20);
  EXPECT_EQ(m.tier(Tier::dram)->capacity_bytes, 32u << 20);
  EXPECT_THROW(apply_capacity_overrides(m, "ssd:1G"), Error);
  EXPECT_THROW(apply_capacity_overrides(m, "dram"), Error);
}
