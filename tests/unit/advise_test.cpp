// The advisor's rules against the papers' own figures.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "advise/advice.hpp"
#include "advise/advice_report.hpp"
#include "advise/run_advice.hpp"
#include "backends/backend.hpp"
#include "common/error.hpp"

using strata::backend_row;
using strata::BackendCapabilities;
using strata::Error;
using strata::ErrorKind;
using strata::Hints;
using namespace strata::advise;

namespace {

std::map<std::string, std::string> as_map(const Hints& h) { return {h.begin(), h.end()}; }

AdviceInput lustre(int64_t nodes, uint64_t block) {
  AdviceInput in;
  in.fs_type = "lustre";
  in.targets = 54;
  in.nodes = nodes;
  in.ranks_per_node = 24;
  in.block_bytes = block;
  return in;
}

}  // namespace

// Hazel Hen sec. 5.1.1: #OST = 5.6N + 4.9 up to 8 nodes, all 54 OSTs beyond.
TEST(AdviseStripeCount, HazelHenFitWith54Osts) {
  const struct {
    int64_t nodes, stripes;
  } table[] = {{1, 11}, {2, 16}, {3, 22},  {4, 27},  {5, 33},   {6, 39},   {7, 44},
               {8, 50}, {9, 54}, {10, 54}, {16, 54}, {128, 54}, {7712, 54}};
  for (const auto& row : table) {
    EXPECT_EQ(stripe_count_for_nodes(row.nodes, 54, StripeCountFit::hazel_hen), row.stripes) << row.nodes << " nodes";
  }
}

TEST(AdviseStripeCount, HalvesRoundUpExactly) {
  // 5.6 x 6 + 4.9 = 38.5 exactly; in binary floating point it is 38.499999..., which rounds to 38.
  EXPECT_EQ(stripe_count_for_nodes(6, 0, StripeCountFit::hazel_hen), 39);
  EXPECT_EQ(stripe_count_for_nodes(11, 0, StripeCountFit::hazel_hen), 67);  // 61.6 + 4.9 = 66.5
}

TEST(AdviseStripeCount, UncappedWhenTheOstCountIsUnknown) {
  EXPECT_EQ(stripe_count_for_nodes(16, 0, StripeCountFit::hazel_hen), 95);  // 89.6 + 4.9 = 94.5 -> 95
  EXPECT_EQ(stripe_count_for_nodes(16, 168, StripeCountFit::hazel_hen), 95);
  EXPECT_EQ(stripe_count_for_nodes(16, 64, StripeCountFit::hazel_hen), 64);
}

TEST(AdviseStripeCount, PredecessorFit) {
  const struct { int64_t nodes, stripes; } table[] = {{1, 8}, {2, 13}, {4, 23}, {8, 43}, {10, 53}, {11, 54}, {100, 54}};
  for (const auto& row : table) {
    EXPECT_EQ(stripe_count_for_nodes(row.nodes, 54, StripeCountFit::predecessor), row.stripes) << row.nodes;
  }
}

// Hazel Hen sec. 5.1.2: SS = k BS, k in {1, 1/2, 1/4}, nearest multiple of 64 KiB, at least 64 KiB.
TEST(AdviseStripeRule, CalibratedFitReadExactlyAndRoundedHalvesUp) {
  // The fit of round(5.6 N + 4.9) for N = 1..8 is 235/42 N + 71/14 exactly (docs/advisor.md).
  const StripeRule r = stripe_rule_from_json(R"({"slope": 5.595, "slope_exact": "235/42",
                                                 "intercept_exact": "71/14", "r2": 0.99, "node_counts": 8})",
                                             "fit.json");
  EXPECT_EQ(r.slope_num, 235);
  EXPECT_EQ(r.intercept_den, 14);
  // 235/42 * 4 + 71/14 = 1153/42 = 27.45 -> 27; at 1 node 10.67 -> 11; capped at 20 OSTs.
  EXPECT_EQ(stripe_count_for_nodes(4, 0, r), 27);
  EXPECT_EQ(stripe_count_for_nodes(1, 0, r), 11);
  EXPECT_EQ(stripe_count_for_nodes(8, 20, r), 20);
  EXPECT_NE(r.source.find("fit.json"), std::string::npos);
  // Plain numbers are their decimals: 5.6 N + 4.9 at 6 nodes is 38.5, which goes up.
  const StripeRule paper = stripe_rule_from_json(R"({"slope": 5.6, "intercept": 4.9})", "p.json");
  EXPECT_EQ(stripe_count_for_nodes(6, 0, paper), 39);
  for (int64_t n = 1; n <= 12; ++n) {
    EXPECT_EQ(stripe_count_for_nodes(n, 0, paper), stripe_count_for_nodes(n, 0, StripeCountFit::hazel_hen)) << n;
  }
  // A falling line never advises fewer than one stripe.
  EXPECT_EQ(stripe_count_for_nodes(9, 0, stripe_rule_from_json(R"({"slope": -0.5, "intercept": 1})", "f")), 1);
}

TEST(AdviseStripeRule, ReplacesThePapersFitInTheAdvice) {
  AdviceInput in = lustre(4, 4 * MiB);
  const int64_t paper = advise(in).stripe_count;
  in.rule = stripe_rule_from_json(R"({"slope_exact": "2", "intercept_exact": "1"})", "two.json");
  const Advice a = advise(in);
  EXPECT_EQ(paper, 27);
  EXPECT_EQ(a.stripe_count, 9);
  EXPECT_EQ(a.reasons.front().source.rfind("calibration fit two.json", 0), 0u);
}

TEST(AdviseStripeRule, BadFilesAreUsageErrorsNamingTheFix) {
  for (const char* bad : {"{}", "[1, 2]", "not json", R"({"slope": 1})", R"({"slope_exact": "1/0", "intercept": 1})",
                          R"({"slope": "x", "intercept": 1})", R"({"slope_exact": "1.5e3", "intercept": 1})"}) {
    try {
      stripe_rule_from_json(bad, "r.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
      EXPECT_NE(std::string(e.what()).find("strata-bench calibrate"), std::string::npos) << e.what();
    }
  }
  const StripeRule huge = stripe_rule_from_json(R"({"slope_exact": "9223372036854775807/3", "intercept": 1})", "h");
  EXPECT_THROW(stripe_count_for_nodes(1000, 0, huge), Error);
}

TEST(AdviseStripeSize, FromTheBlockSize) {
  const uint64_t step = 64 * KiB, max = 4 * GiB;
  const struct {
    uint64_t block;
    int divisor;
    uint64_t stripe;
  } table[] = {
      {4096 * KiB, 4, 1024 * KiB},  // the paper's 1/4 ratio
      {4096 * KiB, 2, 2048 * KiB},  {4096 * KiB, 1, 4096 * KiB},
      {64 * KiB, 4, 64 * KiB},  // the minimum stripe size
      {64 * KiB, 1, 64 * KiB},      {1, 4, 64 * KiB},
      {100000, 1, 128 * KiB},    // 1.53 steps: nearest is 2
      {90000, 1, 64 * KiB},      // 1.37 steps: nearest is 1 (rounding up would give 128 KiB)
      {96 * KiB, 1, 128 * KiB},  // exactly 1.5 steps: halves go up
      {32768 * KiB, 4, 8192 * KiB}, {512 * KiB, 4, 128 * KiB},
      {1000 * KiB, 4, 256 * KiB},  // 250 KiB = 3.9 steps -> 4
      {16 * GiB, 1, 4 * GiB},      // the largest stripe size
  };
  for (const auto& row : table) {
    EXPECT_EQ(stripe_size_for_block(row.block, row.divisor, step, max), row.stripe)
        << row.block << " B at k = 1/" << row.divisor;
  }
}

TEST(AdviseStripeSize, RoundToStep) {
  EXPECT_EQ(round_to_step(0, 65536), 65536u);
  EXPECT_EQ(round_to_step(32767, 65536), 65536u);
  EXPECT_EQ(round_to_step(98303, 65536), 65536u);
  EXPECT_EQ(round_to_step(98304, 65536), 131072u);
}

// HDF5 multi-dataset paper IV-B2: ~128 MB datasets, 2 MiB best with 64 stripes, 1 MiB with 128.
TEST(AdvisePerDataset, CapsTheStripeAtDatasetOverStripes) {
  EXPECT_EQ(per_dataset_stripe_cap(128 * MiB, 64, 64 * KiB), 2 * MiB);
  EXPECT_EQ(per_dataset_stripe_cap(128 * MiB, 128, 64 * KiB), 1 * MiB);
  // With decimal megabytes the share (1.95 MB) is not a whole number of 64 KiB steps: the
  // paper's "128 MB" must be binary for its 2 MiB to come out.
  EXPECT_EQ(per_dataset_stripe_cap(128'000'000, 64, 64 * KiB), 1920 * KiB);
  EXPECT_EQ(per_dataset_stripe_cap(1000, 64, 64 * KiB), 64 * KiB);  // never below one step
}

TEST(AdvisePerDataset, LowersTheAdviceInAdvise) {
  AdviceInput in = lustre(16, 64 * MiB);  // k = 1/4 -> 16 MiB, like the paper's 16 MB stripes
  in.targets = 64;
  in.dataset_bytes = 128 * MiB;
  in.variables = 400;
  Advice a = advise(in);
  EXPECT_EQ(a.stripe_count, 64);
  EXPECT_EQ(a.stripe_size_bytes, 2 * MiB);
  EXPECT_EQ(a.cb_buffer_size_bytes, 2 * MiB);
}

TEST(AdviseMultiDataset, RaisesTheStripeWithinTheMemoryBudget) {
  EXPECT_EQ(multi_dataset_stripe(42 * GiB, 64, 16 * MiB, 64 * KiB), 16 * MiB);
  EXPECT_EQ(multi_dataset_stripe(64 * MiB, 64, 16 * MiB, 64 * KiB), 1 * MiB);
  EXPECT_EQ(multi_dataset_stripe(64 * MiB + 1, 64, 16 * MiB, 64 * KiB), 1 * MiB + 64 * KiB);
  EXPECT_EQ(multi_dataset_stripe(10, 64, 16 * MiB, 64 * KiB), 64 * KiB);
  AdviceInput in = lustre(16, 4 * MiB);  // k = 1/4 -> 1 MiB
  in.targets = 64;
  in.strategy = Strategy::multi_dataset;
  in.variables = 400;
  in.dataset_bytes = 105 * MiB;  // 42 GB over 400 datasets
  in.memory_budget_bytes = 16 * MiB;
  Advice a = advise(in);
  EXPECT_EQ(a.stripe_size_bytes, 16 * MiB);
  EXPECT_EQ(as_map(a.romio_hints)["cb_buffer_size"], std::to_string(16 * MiB));
  in.memory_budget_bytes = 512 * KiB;  // below the block rule: the block rule's 1 MiB stays
  EXPECT_EQ(advise(in).stripe_size_bytes, 1 * MiB);
}

// Hazel Hen sec. 5.1.3 and 6: multiplier 32 for blocks >= 4 MiB (4096 KB) and >= 3072 cores.
TEST(AdviseLockAhead, OnlyForLargeBlocksAndManyCores) {
  const struct {
    uint64_t block;
    int64_t cores;
    int multiplier;
  } table[] = {{4 * MiB, 3072, 32},   {32 * MiB, 49152, 32}, {4 * MiB - 1, 3072, 0}, {4 * MiB, 3071, 0},
               {512 * KiB, 24576, 0}, {64 * KiB, 768, 0},    {32 * MiB, 24, 0}};
  for (const auto& row : table) {
    EXPECT_EQ(lock_ahead_multiplier(row.block, row.cores), row.multiplier) << row.block << " B, " << row.cores;
  }
  Advice big = advise(lustre(128, 4 * MiB));  // 128 x 24 = 3072 cores
  EXPECT_EQ(big.lock_ahead_multiplier, 32);
  EXPECT_EQ(as_map(big.cray_hints)["cray_cb_nodes_multiplier"], "32");
  EXPECT_NE(big.mpich_mpiio_hints.find("cray_cb_write_lock_mode=2"), std::string::npos);
  Advice small = advise(lustre(127, 4 * MiB));
  EXPECT_EQ(small.lock_ahead_multiplier, 0);
  EXPECT_TRUE(small.cray_hints.empty());
  EXPECT_EQ(small.mpich_mpiio_hints.find("cray_"), std::string::npos);
}

TEST(AdviseLustre, HintsInEveryForm) {
  Advice a = advise(lustre(4, 4096 * KiB));
  EXPECT_TRUE(a.striping_applies);
  EXPECT_EQ(a.stripe_count, 27);
  EXPECT_EQ(a.stripe_size_bytes, 1 * MiB);
  auto romio = as_map(a.romio_hints);
  EXPECT_EQ(romio["striping_factor"], "27");
  EXPECT_EQ(romio["striping_unit"], "1048576");
  EXPECT_EQ(romio["cb_buffer_size"], "1048576");  // 1:1 with the stripe size
  EXPECT_EQ(romio["cb_nodes"], "27");             // at least one aggregator per stripe
  EXPECT_EQ(romio["cb_config_list"], "*:7");      // 27 aggregators on 4 nodes
  EXPECT_EQ(romio["romio_cb_write"], "enable");
  auto ompio = as_map(a.ompio_hints);
  EXPECT_EQ(ompio["stripe_width"], "27");
  EXPECT_EQ(ompio["stripe_size"], "1048576");
  EXPECT_EQ(ompio.count("collective_buffering"), 0u);  // inverted in Open MPI 4.1.4
  auto mca = as_map(a.ompio_mca);
  EXPECT_EQ(mca["io_ompio_bytes_per_agg"], "1048576");
  EXPECT_EQ(mca["io_ompio_num_aggregators"], "27");
  EXPECT_EQ(mca["fs_lustre_stripe_width"], "27");
  EXPECT_EQ(a.stripe_command, "lfs setstripe -c 27 -S 1M DIR");
  EXPECT_EQ(a.mpich_mpiio_hints,
            "*:romio_cb_write=enable:cb_buffer_size=1048576:striping_factor=27:striping_unit=1048576");
  EXPECT_EQ(a.all_hints().size(), 8u);
  for (const auto& r : a.reasons) {
    EXPECT_FALSE(r.source.empty()) << r.rule;
    EXPECT_FALSE(r.advice.empty()) << r.rule;
  }
}

TEST(AdviseLustre, FewerRanksThanStripes) {
  AdviceInput in = lustre(1, 4 * MiB);
  in.ranks_per_node = 4;
  Advice a = advise(in);
  EXPECT_EQ(a.stripe_count, 11);
  EXPECT_EQ(a.cb_nodes, 4);
  EXPECT_EQ(a.cb_config_list, "*:*");
}

TEST(AdviseLustre, StripeCommandUsesKibWhenNotWholeMib) {
  AdviceInput in = lustre(1, 100000);
  in.stripe_divisor = 1;
  EXPECT_EQ(advise(in).stripe_command, "lfs setstripe -c 11 -S 128K DIR");
}

TEST(AdviseNonStriped, StripingDoesNotApplyButCollectiveBufferingDoes) {
  for (const char* fs : {"ext4", "xfs", "tmpfs", "nfs", "gpfs"}) {
    AdviceInput in;
    in.fs_type = fs;
    in.nodes = 1;
    in.ranks_per_node = 4;
    in.block_bytes = 1 * MiB;
    Advice a = advise(in);
    EXPECT_FALSE(a.striping_applies) << fs;
    EXPECT_EQ(a.stripe_count, 0) << fs;
    EXPECT_EQ(a.stripe_size_bytes, 0u) << fs;
    EXPECT_TRUE(a.stripe_command.empty()) << fs;
    auto romio = as_map(a.romio_hints);
    EXPECT_EQ(romio.count("striping_factor"), 0u) << fs;
    EXPECT_EQ(romio["cb_config_list"], "*:*") << fs;
    EXPECT_EQ(romio["romio_cb_write"], "enable") << fs;
    // per-dataset: 4 MiB dataset over 4 aggregators (every rank on one node) -> 1 MiB
    EXPECT_EQ(romio["cb_buffer_size"], std::to_string(1 * MiB)) << fs;
    EXPECT_EQ(as_map(a.ompio_hints).count("collective_buffering"), 0u);
    ASSERT_FALSE(a.reasons.empty());
    EXPECT_EQ(a.reasons[0].rule, "striping");
    EXPECT_NE(a.reasons[0].advice.find("does not apply"), std::string::npos);
  }
}

TEST(AdviseNonStriped, OneAggregatorPerNodeOnSeveralNodes) {
  AdviceInput in;
  in.fs_type = "gpfs";
  in.nodes = 8;
  in.ranks_per_node = 16;
  in.block_bytes = 64 * MiB;  // dataset 8 GiB over 8 aggregators: the 16 MiB default stays
  Advice a = advise(in);
  EXPECT_EQ(a.cb_nodes, 8);
  EXPECT_TRUE(a.cb_config_list.empty());
  EXPECT_EQ(a.cb_buffer_size_bytes, 16 * MiB);
  in.strategy = Strategy::multi_dataset;
  in.memory_budget_bytes = 256 * MiB;
  EXPECT_EQ(advise(in).cb_buffer_size_bytes, 256 * MiB);
}

TEST(AdviseLayout, ByFileSystemAndFileCount) {
  EXPECT_EQ(choose_layout("beegfs", 0), LayoutChoice::file_per_process);
  EXPECT_EQ(choose_layout("beegfs", 100000), LayoutChoice::file_per_process);
  EXPECT_EQ(choose_layout("lustre", 10000), LayoutChoice::shared_file);
  EXPECT_EQ(choose_layout("lustre", 9999), LayoutChoice::either);
  EXPECT_EQ(choose_layout("lustre", 0), LayoutChoice::either);
  EXPECT_EQ(choose_layout("ext4", 100000), LayoutChoice::either);
  AdviceInput in = lustre(2, 1 * MiB);
  in.files = 50000;
  Advice a = advise(in);
  EXPECT_EQ(a.layout, LayoutChoice::shared_file);
  bool caution = false;
  for (const auto& r : a.reasons) caution = caution || r.rule == "layout caution";
  EXPECT_TRUE(caution);
}

TEST(AdviseBeegfs, StripesWithBeegfsCtlNotHints) {
  AdviceInput in = lustre(2, 2 * MiB);
  in.fs_type = "beegfs";
  in.targets = 8;
  Advice a = advise(in);
  EXPECT_TRUE(a.striping_applies);
  EXPECT_FALSE(a.striping_via_hints);
  EXPECT_EQ(a.stripe_count, 8);
  EXPECT_EQ(a.stripe_command, "beegfs-ctl --setpattern --numtargets=8 --chunksize=512k DIR");
  EXPECT_EQ(as_map(a.romio_hints).count("striping_factor"), 0u);
}

TEST(AdviseInput, BadInputsAreUsageErrors) {
  auto expect_usage = [](AdviceInput in, const std::string& words) {
    try {
      advise(in);
      ADD_FAILURE() << "no error for " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  AdviceInput in = lustre(1, 1 * MiB);
  AdviceInput bad = in;
  bad.nodes = 0;
  expect_usage(bad, "--nodes");
  bad = in;
  bad.block_bytes = 0;
  expect_usage(bad, "--block-size");
  bad = in;
  bad.fs_type = "zork";
  expect_usage(bad, "unknown file system \"zork\"");
  bad = in;
  bad.targets = -3;
  expect_usage(bad, "--osts must not be negative");
  bad = in;
  bad.ranks_per_node = 0;
  expect_usage(bad, "--ppn");
  bad = in;
  bad.stripe_divisor = 3;
  expect_usage(bad, "1/2 or 1/4");
  bad = in;
  bad.memory_budget_bytes = 1024;
  expect_usage(bad, "--memory-budget");
}

TEST(AdviseReport, JsonHasTheFieldsAndEveryReasonItsSource) {
  Advice a = advise(lustre(2, 4 * MiB));
  nlohmann::json j = to_json(a, lustre(2, 4 * MiB));
  EXPECT_EQ(j["stripe_count"], 16);
  EXPECT_EQ(j["stripe_size_bytes"], 1 * MiB);
  EXPECT_EQ(j["hints"]["striping_factor"], "16");
  EXPECT_EQ(j["hints"]["stripe_width"], "16");
  EXPECT_EQ(j["lfs_setstripe"], "lfs setstripe -c 16 -S 1M DIR");
  ASSERT_GE(j["reasons"].size(), 8u);
  for (const auto& r : j["reasons"]) EXPECT_FALSE(r["source"].get<std::string>().empty());
  std::string table = to_table(a, lustre(2, 4 * MiB));
  EXPECT_NE(table.find("lfs setstripe -c 16 -S 1M DIR"), std::string::npos);
  EXPECT_NE(table.find("Hazel Hen striping paper, sec. 5.1.1"), std::string::npos);
}

// strata run's advice: which keys, and who wins.
namespace {

// The facts a run fills from the backend's row of the backend table.
RunFacts run_on(const std::string& backend, const std::string& fs, const std::string& component) {
  RunFacts f;
  const BackendCapabilities& can = backend_row(backend).can;
  f.backend = backend;
  f.mpi_io = can.mpi_io;
  f.call_per_variable = can.call_per_variable;
  f.sizes_own_buffers = can.sizes_own_buffers;
  f.io_component = component;
  f.fs_type = fs;
  f.nodes = 1;
  f.ranks_per_node = 4;
  f.block_bytes = 1 * MiB;
  return f;
}

}  // namespace

TEST(AdviseRun, ExplicitHintsWinKeyByKey) {
  RunAdvice r =
      advice_for_run(run_on("mpiio-coll", "ext4", "romio"), {{"cb_buffer_size", "8"}, {"cb_nodes", "2"}}, true);
  ASSERT_TRUE(r.applied);
  auto hints = as_map(r.hints);
  EXPECT_EQ(hints["cb_buffer_size"], "8");
  EXPECT_EQ(hints["cb_nodes"], "2");
  EXPECT_EQ(hints["cb_config_list"], "*:*");
  EXPECT_EQ(hints["romio_cb_write"], "enable");
  EXPECT_EQ(r.overridden, std::vector<std::string>{"cb_buffer_size"});  // cb_nodes was not advised
  nlohmann::json j = to_json(r);
  EXPECT_FALSE(j["hints"].contains("cb_buffer_size"));
  EXPECT_EQ(j["hints"]["cb_config_list"], "*:*");
}

TEST(AdviseRun, OnlyTheComponentsKeys) {
  RunAdvice r = advice_for_run(run_on("mpiio-coll", "lustre", "ompio"), {}, true);
  auto hints = as_map(r.hints);
  EXPECT_EQ(hints.count("romio_cb_write"), 0u);
  EXPECT_EQ(hints.count("cb_config_list"), 0u);
  EXPECT_EQ(hints.count("collective_buffering"), 0u);
  EXPECT_EQ(hints["stripe_width"], "11");
  EXPECT_EQ(hints["stripe_size"], "262144");  // 1 MiB / 4
}

TEST(AdviseRun, NotAppliedAndWhy) {
  const Hints mine = {{"cb_nodes", "2"}};
  const struct {
    RunFacts facts;
    bool wanted;
    std::string because;
  } table[] = {
      {run_on("mpiio-coll", "ext4", "romio"), false, "--no-advice"},
      {run_on("posix", "ext4", "romio"), true, "backend posix does not use MPI-IO"},
      {run_on("mpiio-ind", "unknown", "romio"), true, "does not know the file system"},
  };
  for (const auto& row : table) {
    RunAdvice r = advice_for_run(row.facts, mine, row.wanted);
    EXPECT_FALSE(r.applied) << row.because;
    EXPECT_NE(r.not_applied_because.find(row.because), std::string::npos) << r.not_applied_because;
    EXPECT_EQ(r.hints, mine);  // the explicit hints pass through untouched
  }
}

TEST(AdviseRun, StrategyFollowsTheBackend) {
#ifndef STRATA_HAVE_HDF5
  GTEST_SKIP() << "backend hdf5 is not built in";
#endif
  RunFacts f = run_on("hdf5", "ext4", "romio");
  f.variables = 3;
  EXPECT_EQ(advice_for_run(f, {}, true).input.strategy, Strategy::per_dataset);
  f = run_on("mpiio-coll", "ext4", "romio");
  f.variables = 3;
  EXPECT_EQ(advice_for_run(f, {}, true).input.strategy, Strategy::multi_dataset);
  f.variables = 1;
  EXPECT_EQ(advice_for_run(f, {}, true).input.strategy, Strategy::per_dataset);
}
