// The strategy model (engine/plan/strategy.hpp), the span planner (engine/plan/spans.hpp) and
// the packing threshold: choices that follow from the figures, and hints that always win.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/move/packing.hpp"
#include "engine/plan/run_sketch.hpp"
#include "engine/plan/spans.hpp"
#include "engine/plan/strategy.hpp"
#include "engine/plan/write_calibration.hpp"

using namespace strata;
using namespace strata::engine;

namespace {

// `ranks` ranks each with `runs` runs of `run` bytes, interleaved round robin (run i of rank r
// at (i * ranks + r) * run): IOR's strided layout.
StrategyInput strided(int ranks, uint64_t runs, uint64_t run) {
  StrategyInput in;
  for (int r = 0; r < ranks; ++r) {
    const uint64_t lo = static_cast<uint64_t>(r) * run;
    const uint64_t hi = ((runs - 1) * static_cast<uint64_t>(ranks) + static_cast<uint64_t>(r) + 1) * run;
    in.ranks.push_back({lo, hi, runs * run, runs, 0, 0});
  }
  in.cores_per_node = 2;
  return in;
}

const Alternative* find(const StrategyChoice& c, bool direct) {
  for (const Alternative& a : c.alternatives) {
    if (a.direct == direct) return &a;
  }
  return nullptr;
}

}  // namespace

TEST(Strategy, LargeRunsGoDirect) {
  const StrategyChoice c = choose_strategy(strided(4, 4, 1 << 20), IoFigures{});
  EXPECT_TRUE(c.best().direct) << c.best().name;
  ASSERT_NE(find(c, false), nullptr);  // aggregation was considered and predicted slower
  EXPECT_LT(c.best().predicted_s, find(c, false)->predicted_s);
}

TEST(Strategy, ManyTinyInterleavedRunsAreAggregated) {
  const StrategyChoice c = choose_strategy(strided(16, 20000, 16), IoFigures{});
  EXPECT_FALSE(c.best().direct) << c.best().name;
  EXPECT_GT(c.best().aggregators, 0);
  EXPECT_LT(c.best().predicted_s, find(c, true)->predicted_s);
}

TEST(Strategy, ShortRunsAreStagedWhereADatatypeEntryCostsMoreThanACopy) {
  // 16 ranks x 20 000 runs of 16 bytes: a datatype entry (0.2 us) costs far more than placing a
  // run (5 ns), so the write is staged; a read never is.
  StrategyInput in = strided(16, 20000, 16);
  in.stage = true;
  const StrategyChoice c = choose_strategy(in, IoFigures{});
  EXPECT_FALSE(c.best().direct);
  EXPECT_TRUE(c.best().staged) << c.best().name;
  // Where placing a run costs more than its entry, the datatype wins.
  IoFigures dear;
  dear.copy_run_s = 1e-6;
  EXPECT_FALSE(choose_strategy(in, dear).best().staged) << choose_strategy(in, dear).best().name;
  // Long runs: the extra copy of every byte at the aggregator is not worth it.
  StrategyInput large = strided(4, 64, 256 << 10);
  large.stage = true;
  large.force_aggregate = true;
  EXPECT_FALSE(choose_strategy(large, IoFigures{}).best().staged) << choose_strategy(large, IoFigures{}).best().name;
  // Forced (strata_stage=true): every aggregated alternative is staged; not allowed: none is.
  large.stage_forced = true;
  for (const Alternative& a : choose_strategy(large, IoFigures{}).alternatives) EXPECT_TRUE(a.direct || a.staged);
  in.stage = false;
  for (const Alternative& a : choose_strategy(in, IoFigures{}).alternatives) EXPECT_FALSE(a.staged);
}

TEST(Strategy, SlowerFileRequestsFavourAggregation) {
  StrategyInput in = strided(8, 64, 4096);
  IoFigures cheap, dear;
  dear.write = {{4096, 2e-3}, {65536, 2.1e-3}, {1 << 20, 3e-3}, {4 << 20, 6e-3}};  // a parallel file system's latency
  EXPECT_TRUE(choose_strategy(in, cheap).best().direct);
  EXPECT_FALSE(choose_strategy(in, dear).best().direct);
}

// In place (no whole spans), many short runs whose union is a few intervals: an aggregator
// writes the intervals, not the runs, so aggregation beats owners writing run by run; the same
// runs scattered (as many intervals as runs) leave owners writing directly.
TEST(Strategy, InPlaceRunsThatTouchAreAggregated) {
  StrategyInput in = strided(16, 20000, 16);
  in.whole_spans = false;
  in.sieve_allowed = false;
  in.intervals = 1;
  EXPECT_FALSE(choose_strategy(in, IoFigures{}).best().direct);
  in.intervals = 16 * 20000;
  EXPECT_TRUE(choose_strategy(in, IoFigures{}).best().direct);
}

TEST(RunSketch, CountsTheIntervalsRunsMakeTogether) {
  // 4 ranks x 50 000 runs of 8 bytes, round robin: they tile one interval.
  RunSketch tiled, apart, pairs;
  for (uint64_t i = 0; i < 200000; ++i) tiled.add_run(i * 8, 8);
  EXPECT_EQ(tiled.intervals(200000), 1u);
  // The same runs with a 1-byte hole after each: as many intervals as runs (within 5 %).
  for (uint64_t i = 0; i < 200000; ++i) apart.add_run(i * 9, 8);
  EXPECT_NEAR(static_cast<double>(apart.intervals(200000)), 200000.0, 10000.0);
  // Touching in pairs: half as many, merged from two ranks' sketches as MPI_MAX would.
  RunSketch even;
  for (uint64_t i = 0; i < 200000; ++i) (i % 2 == 0 ? even : pairs).add_run(i / 2 * 17 + (i % 2) * 8, 8);
  pairs.merge(even);
  EXPECT_NEAR(static_cast<double>(pairs.intervals(200000)), 100000.0, 10000.0);
  EXPECT_EQ(RunSketch{}.intervals(0), 0u);
}

TEST(Strategy, HintsWin) {
  StrategyInput in = strided(8, 4, 4 << 20);
  in.aggregators = 3;
  StrategyChoice c = choose_strategy(in, IoFigures{});
  for (const Alternative& a : c.alternatives) {
    EXPECT_FALSE(a.direct);
    EXPECT_EQ(a.aggregators, 3);
  }
  in = strided(8, 4, 4 << 20);
  in.buffer_bytes = 8 << 20;
  in.buffers = 3;
  in.force_aggregate = true;
  c = choose_strategy(in, IoFigures{});
  for (const Alternative& a : c.alternatives) {
    EXPECT_FALSE(a.direct);
    EXPECT_EQ(a.buffer_bytes, 8u << 20);
    EXPECT_EQ(a.buffers, 3);
  }
  in = strided(16, 20000, 16);
  in.force_direct = true;
  c = choose_strategy(in, IoFigures{});
  ASSERT_EQ(c.alternatives.size(), 1u);
  EXPECT_TRUE(c.best().direct);
}

TEST(Strategy, NoDirectWhereOwnersMayNot) {
  StrategyInput in = strided(4, 4, 1 << 20);
  in.direct_allowed = false;  // a striped file system, or subfiles
  const StrategyChoice c = choose_strategy(in, IoFigures{});
  EXPECT_EQ(find(c, true), nullptr);
  EXPECT_FALSE(c.best().direct);
}

TEST(Strategy, RoundsCoverThePartition) {
  StrategyInput in = strided(4, 16, 1 << 20);  // 64 MiB of domain
  in.aggregators = 2;
  in.buffer_bytes = 4 << 20;
  const StrategyChoice c = choose_strategy(in, IoFigures{});
  EXPECT_EQ(c.best().rounds, 8u);  // 32 MiB per aggregator / 4 MiB
}

TEST(Spans, FillMergesShortHolesAndZeroesThem) {
  const std::vector<std::vector<engine::Run>> rounds = {{{1000, 100, 0}, {1200, 50, 200}, {90000, 10, 89000}}};
  const auto io = plan_round_io(rounds, {}, SpanPolicy::fill, 4096, IoFigures{});
  ASSERT_EQ(io[0].spans.size(), 2u);  // the 88 KB hole ends the first span
  EXPECT_EQ(io[0].spans[0].file_offset, 1000u);
  EXPECT_EQ(io[0].spans[0].length, 250u);
  ASSERT_EQ(io[0].zero.size(), 1u);
  EXPECT_EQ(io[0].zero[0], std::make_pair(uint64_t{100}, uint64_t{100}));
  EXPECT_EQ(io[0].spans[1].file_offset, 90000u);
}

TEST(Spans, DirectRunsSplitSpansAndAreNeverZeroed) {
  const std::vector<std::vector<engine::Run>> rounds = {{{0, 100, 0}, {300, 100, 300}}};
  const std::vector<ReceivedRange> direct = {{150, 50, 3}};
  const auto io = plan_round_io(rounds, direct, SpanPolicy::fill, 4096, IoFigures{});
  EXPECT_EQ(io[0].spans.size(), 2u);
  EXPECT_TRUE(io[0].zero.empty());
}

TEST(Spans, InPlaceSievesOnlyWhenRequestsCostMore) {
  std::vector<std::vector<engine::Run>> rounds(1);
  for (uint64_t i = 0; i < 64; ++i) rounds[0].push_back({i * 64, 32, i * 64});
  IoFigures dear;
  dear.write = {{4096, 1e-3}, {65536, 1.1e-3}, {1 << 20, 2e-3}, {4 << 20, 5e-3}};
  auto io = plan_round_io(rounds, {}, SpanPolicy::sieve, 1 << 20, dear);
  ASSERT_EQ(io[0].spans.size(), 1u);  // one read-modify-write of the span
  EXPECT_EQ(io[0].spans[0].pieces.size(), 64u);
  EXPECT_TRUE(io[0].zero.empty());  // in place: holes keep what the file holds
  // The same runs spread over 4 MiB: reading and writing the span costs more than 64 requests.
  std::vector<std::vector<engine::Run>> sparse(1);
  for (uint64_t i = 0; i < 64; ++i) sparse[0].push_back({i * 65536, 32, i * 65536});
  IoFigures local;
  local.write = {{4096, 5e-6}, {4 << 20, 4e-3}};
  io = plan_round_io(sparse, {}, SpanPolicy::sieve, uint64_t{1} << 30, local);
  EXPECT_EQ(io[0].spans.size(), 64u);  // run by run
  io = plan_round_io(rounds, {}, SpanPolicy::runs, 1 << 20, dear);
  EXPECT_EQ(io[0].spans.size(), 64u);
}

TEST(Spans, HoleLimitFollowsTheFigures) {
  IoFigures f;
  f.write = {{4096, 20e-6}, {4 << 20, 2e-3}};  // 2 GB/s, ~18 µs per request
  const uint64_t limit = hole_limit_from(f);
  EXPECT_GT(limit, 8u << 10);
  EXPECT_LT(limit, 64u << 10);
}

TEST(Packing, ThresholdFromPutFigures) {
  IoFigures f;
  f.put_latency_s = 3e-6;
  f.put_run_s = 0.2e-6;
  EXPECT_EQ(pack_threshold(f), 2u);
  f.put_run_s = 2.5e-6;
  EXPECT_EQ(pack_threshold(f), 7u);  // 3 / 0.5 = 6: packing pays from 7 runs
  f.put_run_s = 3e-6;
  EXPECT_EQ(pack_threshold(f), 0u);  // never
}

TEST(IoFigures, WriteCurveInterpolatesLogLog) {
  IoFigures f;
  f.write = {{4096, 4e-6}, {1 << 20, 1e-3}};
  EXPECT_DOUBLE_EQ(f.write_s(4096), 4e-6);
  EXPECT_DOUBLE_EQ(f.write_s(512), 4e-6);                       // below the smallest: its time
  EXPECT_NEAR(f.write_s(2 << 20), 2e-3, 1e-12);                 // above the largest: its time per byte
  EXPECT_NEAR(f.write_s(65536), std::sqrt(4e-6 * 1e-3), 1e-9);  // halfway in log between 4 KiB and 1 MiB
  EXPECT_DOUBLE_EQ(f.writes_s(0, 100), 0);
  EXPECT_NEAR(f.writes_s(4, 4 << 20), 4 * 1e-3, 1e-12);
}

TEST(IoFigures, FencesScaleWithLogRanks) {
  IoFigures f;
  f.fence_s = 10e-6;
  f.probe_ranks = 4;
  EXPECT_DOUBLE_EQ(f.fence_at(4), 10e-6);
  EXPECT_DOUBLE_EQ(f.fence_at(16), 20e-6);
  EXPECT_DOUBLE_EQ(f.fence_at(2), 10e-6);  // never below the measured one
  EXPECT_DOUBLE_EQ(f.fence_at(1), 1e-6);
}

TEST(IoFigures, TheJobsOwnCollectiveAtItsRankCount) {
  // Measured by the engine at its start (job_collective_seconds): at the job's rank count it is
  // the fence's and the collective's cost, the sharing of the cores included; elsewhere the
  // probe's figure, scaled.
  IoFigures f;
  f.fence_s = 10e-6;
  f.collective_s = 5e-6;
  f.probe_ranks = 4;
  f.job_ranks = 16;
  f.job_collective_s = 70e-6;
  EXPECT_DOUBLE_EQ(f.fence_at(16), 70e-6);
  EXPECT_DOUBLE_EQ(f.collective_at(16), 70e-6);
  EXPECT_DOUBLE_EQ(f.fence_at(4), 10e-6);
  EXPECT_DOUBLE_EQ(f.collective_at(8), 7.5e-6);
}

TEST(Strategy, AMeasuredJobCollectiveReplacesTheCrowdingConstant) {
  // 16 ranks on 2 cores: without a measurement every fence also pays 0.2 ms per extra rank per
  // core (7 x 0.2 ms); measured at 70 us, a fence costs that and no more, so rounds are cheaper.
  StrategyInput in = strided(16, 20000, 16);
  in.shared_copy = true;
  in.dense = true;
  in.aggregators = 1;
  in.buffer_bytes = uint64_t{1} << 20;
  IoFigures f;
  const Alternative guessed = choose_strategy(in, f).best();
  f.job_ranks = 16;
  f.job_collective_s = 70e-6;
  const Alternative measured = choose_strategy(in, f).best();
  ASSERT_EQ(guessed.rounds, measured.rounds);
  ASSERT_GT(measured.rounds, 1u);
  const double fences = 1 + static_cast<double>(measured.rounds);
  EXPECT_GT(guessed.sync_s - measured.sync_s, fences * 7 * 2e-4) << guessed.sync_s << " " << measured.sync_s;
  EXPECT_LT(measured.sync_s, guessed.sync_s);
}

TEST(Strategy, ACopiedWriteCopiesEveryPiece) {
  // The same runs, declared as one piece each or as four pieces of memory each: a copied write
  // copies piece by piece, and its plan and copy program work per piece too.
  StrategyInput in = strided(16, 20000, 16);
  in.shared_copy = true;
  in.dense = true;
  in.aggregators = 2;
  in.buffer_bytes = uint64_t{4} << 20;
  IoFigures f;
  const Alternative one = choose_strategy(in, f).best();
  for (RankShape& r : in.ranks) r.pieces = 4 * r.runs;
  const Alternative four = choose_strategy(in, f).best();
  ASSERT_TRUE(one.copied && four.copied);
  EXPECT_GT(four.move_s, one.move_s);
  EXPECT_NEAR(four.move_s - one.move_s, 16.0 * 3 * 20000 * f.copy_run_s / 2, four.move_s * 0.01);
  EXPECT_GT(four.plan_s, 3.5 * one.plan_s);
}

TEST(Strategy, OnlyARepeatedCopiedWriteKeepsItsProgram) {
  // A copied write finds its runs' memory as it copies (find_s); a repeated phase's first
  // execution also keeps them (keep_s: 16 new bytes a piece), and its next ones pay neither.
  StrategyInput in = strided(16, 20000, 16);
  in.shared_copy = true;
  in.dense = true;
  IoFigures f;
  const Alternative a = choose_strategy(in, f).best();
  ASSERT_TRUE(a.copied);
  EXPECT_GT(a.find_s, 0);
  EXPECT_GT(a.keep_s, a.find_s);
  const double declared_again = reused_prediction(a, f, 16, false, false);
  const double first_repeat = reused_prediction(a, f, 16, true, false);
  const double later_repeats = reused_prediction(a, f, 16, true, true);
  EXPECT_NEAR(declared_again - later_repeats, a.reuse_s + a.find_s, 1e-12);
  EXPECT_NEAR(first_repeat - later_repeats, a.keep_s, 1e-12);
  EXPECT_LT(later_repeats, a.predicted_s);
  // In two parts (the plan or its reuse; the write with its close): they add up to the whole, and
  // the finding of the runs' memory is the write's, as it happens while they are copied.
  const PredictionParts fresh = prediction_parts(a, f, 16, false, false, false);
  EXPECT_NEAR(fresh.plan_s + fresh.write_s, a.predicted_s, 1e-12);
  EXPECT_NEAR(fresh.plan_s, a.plan_s - a.find_s, 1e-12);
  const PredictionParts again = prediction_parts(a, f, 16, true, false, false);
  const PredictionParts kept = prediction_parts(a, f, 16, true, true, true);
  EXPECT_NEAR(again.plan_s + again.write_s, declared_again, 1e-12);
  EXPECT_NEAR(again.write_s - kept.write_s, a.find_s, 1e-12);
  EXPECT_NEAR(kept.plan_s, f.collective_at(16), 1e-12);  // a repeated phase declares nothing
}

TEST(IoFigures, LargeRequestsNeverCostMorePerByteThanSmallOnes) {
  IoFigures f;
  f.write = {{4096, 2.4e-6}, {65536, 11e-6}, {1 << 20, 148e-6}, {4 << 20, 664e-6}};  // a noisy 4 MiB point
  EXPECT_LE(f.write_s(4 << 20), 4 * 148e-6);
  EXPECT_LE(f.write_s(8 << 20), 8 * 148e-6);
  EXPECT_DOUBLE_EQ(f.write_s(1 << 20), 148e-6);
}

TEST(Strategy, CopiesAndWritesShareTheCores) {
  // IOR -b 4M -t 1M -s 2 on 4 ranks of a 2-core node: through aggregators every byte is copied
  // twice more on the same two cores; owners writing 4 MiB runs directly must win.
  IoFigures f;
  f.write = {{4096, 2.4e-6}, {65536, 11e-6}, {1 << 20, 148e-6}, {4 << 20, 664e-6}};
  f.put_bandwidth_Bps = 16e9;
  f.memcpy_Bps = 56e9;
  f.fence_s = 7e-6;
  f.probe_ranks = 4;
  EXPECT_TRUE(choose_strategy(strided(4, 2, 4 << 20), f).best().direct);
}

// strata_compare_mpiio: MPI-IO's own write is the last alternative and never the choice; ROMIO
// writes contiguous, non-interleaved requests independently (the writes alone), while many
// small interleaved runs cost it flattening, sorting and a read-modify-write per round.
TEST(Strategy, MpiioIsPredictedButNeverChosen) {
  StrategyInput contiguous;
  for (int r = 0; r < 4; ++r)
    contiguous.ranks.push_back({r * (uint64_t{16} << 20), (r + 1) * (uint64_t{16} << 20), uint64_t{16} << 20, 1, 0, 0});
  contiguous.compare_mpiio = true;
  contiguous.mpiio_romio = true;
  contiguous.cores_per_node = 2;
  const IoFigures f;
  const StrategyChoice c = choose_strategy(contiguous, f);
  ASSERT_EQ(c.alternatives.back().name, "mpi-io");
  EXPECT_NE(c.chosen, c.alternatives.size() - 1);
  const Alternative& romio = c.alternatives.back();
  EXPECT_EQ(romio.rounds, 0u);                                       // independent
  EXPECT_NEAR(romio.io_s, 4 * f.write_s(uint64_t{16} << 20), 1e-9);  // one file: the writes take turns

  StrategyInput small = strided(16, 20000, 64);
  small.compare_mpiio = true;
  small.mpiio_romio = true;
  const StrategyChoice s = choose_strategy(small, f);
  const Alternative& m = s.alternatives.back();
  EXPECT_GT(m.rounds, 0u);
  EXPECT_GT(m.plan_s, 0.0);
  EXPECT_GT(m.predicted_s, s.best().predicted_s);
  small.mpiio_romio = false;  // OMPIO's handling of the runs grows with runs x ranks
  EXPECT_GT(predict_mpiio(small, f).plan_s, m.plan_s);
  // More ranks than cores: every collective waits for the ranks to be scheduled.
  small.cores_per_node = 16;
  const double roomy = predict_mpiio(small, f).sync_s;
  small.cores_per_node = 2;
  EXPECT_GT(predict_mpiio(small, f).sync_s, roomy);
}

TEST(Strategy, WritesIntoOneLockedFileTakeTurns) {
  // IOR -b 4M -t 1M -s 2 at 4 ranks on a 2-core node: eight 4 MiB requests (one per block).
  IoFigures f;
  f.hash_Bps = 1e18;  // the checksums aside
  StrategyInput in = strided(4, 2, 4 << 20);
  in.force_direct = true;
  in.one_file_lock = true;  // ext4: the writes take the file's lock in turn
  const double serial = choose_strategy(in, f).best().io_s;
  EXPECT_NEAR(serial, 8 * f.write_s(4 << 20), 1e-3 * serial);
  in.one_file_lock = false;  // a striped file system: two at once on the node's two cores
  const double shared = choose_strategy(in, f).best().io_s;
  EXPECT_NEAR(shared, 4 * f.write_s(4 << 20), 1e-3 * shared);
  in.nodes = 2;  // a lock per node's writers (on two nodes, half the requests each)
  in.one_file_lock = true;
  EXPECT_NEAR(choose_strategy(in, f).best().io_s, 4 * f.write_s(4 << 20), 1e-3 * serial);
}

TEST(Strategy, ACopiedWriteIntoANewWindowMapsItsPages) {
  // 16 ranks whose runs spread over the whole 5 MB domain, one aggregator, 4 MiB rounds: into a
  // window the engine does not keep yet, each rank maps every page its runs land on (its span,
  // within the two round buffers) once; into one it keeps, nothing.
  StrategyInput in = strided(16, 20000, 16);
  in.shared_copy = true;
  in.dense = true;
  in.aggregators = 1;
  in.buffer_bytes = uint64_t{4} << 20;
  in.buffers = 2;
  IoFigures f;
  in.window_kept = uint64_t{64} << 20;
  const Alternative kept = choose_strategy(in, f).best();
  in.window_kept = 0;
  const Alternative fresh = choose_strategy(in, f).best();
  ASSERT_TRUE(kept.copied && fresh.copied);
  double pages = 0;  // every rank's span, the cores shared by two
  for (const RankShape& r : in.ranks) pages += static_cast<double>(r.hi - r.lo) / f.fresh_Bps / 2;
  EXPECT_NEAR(fresh.move_s - kept.move_s, pages, pages * 0.01);
  // Reused, the plan's window is kept: no first touch.
  EXPECT_NEAR(fresh.touch_s, fresh.move_s - kept.move_s, 1e-12);
  EXPECT_EQ(kept.touch_s, 0);
  EXPECT_LT(reused_prediction(fresh, f, 16, true, true), fresh.predicted_s - fresh.plan_s - 0.9 * pages);
}

// A write into the output's recycled file rewrites cached pages: priced by the rewrite curve, and
// a kept choice priced again for the write it is reused by, its alternative kept.
TEST(Strategy, ARecycledFileIsPricedByTheRewriteCurve) {
  IoFigures f;
  f.write = {{4096, 4e-6}, {65536, 25e-6}, {1 << 20, 400e-6}, {4 << 20, 1.6e-3}};
  f.rewrite = {{4096, 4e-6}, {65536, 12e-6}, {1 << 20, 100e-6}, {4 << 20, 0.4e-3}};
  StrategyInput in = strided(4, 4, 1 << 20);
  in.commit = true;
  const StrategyChoice fresh = choose_strategy(in, f);
  in.recycled = true;
  const StrategyChoice recycled = choose_strategy(in, f);
  ASSERT_EQ(fresh.alternatives.size(), recycled.alternatives.size());
  const Alternative* a = find(fresh, true);
  const Alternative* b = find(recycled, true);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // 16 requests of 1 MiB, one file's lock: 16 x 400 us against 16 x 100 us (hashes aside).
  EXPECT_NEAR(a->io_s - b->io_s, 16 * 300e-6, 1e-9);
  EXPECT_NEAR(a->predicted_s - b->predicted_s, 16 * 300e-6, 1e-9);
  EXPECT_TRUE(recycled.input.recycled);
  // Priced again both ways: the same prices as chosen afresh; the alternative kept even where
  // another would now be cheaper.
  StrategyChoice kept = fresh;
  kept.chosen = fresh.alternatives.size() - 1;
  const StrategyChoice again = repriced(kept, true, f);
  EXPECT_EQ(again.chosen, kept.chosen);
  for (size_t i = 0; i < again.alternatives.size(); ++i) {
    EXPECT_EQ(again.alternatives[i].name, recycled.alternatives[i].name);
    EXPECT_DOUBLE_EQ(again.alternatives[i].predicted_s, recycled.alternatives[i].predicted_s);
  }
  EXPECT_DOUBLE_EQ(repriced(again, false, f).alternatives[0].predicted_s, fresh.alternatives[0].predicted_s);
  // A read is never recycled; figures without a rewrite curve price a recycled file as a new one.
  IoFigures unmeasured = f;
  unmeasured.rewrite.clear();
  EXPECT_DOUBLE_EQ(choose_strategy(in, unmeasured).alternatives[0].predicted_s, fresh.alternatives[0].predicted_s);
  StrategyInput read = in;
  read.write = false;
  StrategyInput read_fresh = read;
  read_fresh.recycled = false;
  EXPECT_DOUBLE_EQ(choose_strategy(read, f).alternatives[0].predicted_s,
                   choose_strategy(read_fresh, f).alternatives[0].predicted_s);
}

// The job's own writes against the model (engine/plan/write_calibration.hpp): each kind of file
// keeps its own ratios, the median of the last three (of two, their mean) predicts the next write,
// an odd write among three does not move it, and nothing absurd is kept.
TEST(WriteCalibration, PredictsByTheMedianOfTheLastWritesOfTheirKindOfFile) {
  WriteCalibration c;
  EXPECT_DOUBLE_EQ(c.ratio(false, 7), 1.0);
  EXPECT_DOUBLE_EQ(c.ratio(true, 7), 1.0);
  ASSERT_TRUE(c.observe(false, 7, 2e-3, 6e-3));  // a new file's write took three times its price
  EXPECT_DOUBLE_EQ(c.ratio(false, 7), 3.0);
  EXPECT_DOUBLE_EQ(c.ratio(true, 7), 1.0);  // the recycled file's writes are another kind
  ASSERT_TRUE(c.observe(true, 7, 2e-3, 1e-3));
  ASSERT_TRUE(c.observe(true, 7, 2e-3, 1.6e-3));
  EXPECT_DOUBLE_EQ(c.ratio(true, 7), 0.65);      // of two, their mean
  ASSERT_TRUE(c.observe(true, 7, 2e-3, 40e-3));  // an odd write (20x): the median stays
  EXPECT_DOUBLE_EQ(c.ratio(true, 7), 0.8);
  ASSERT_TRUE(c.observe(true, 7, 2e-3, 1.2e-3));  // the oldest (0.5) leaves: 0.8, 10 (clamped), 0.6
  EXPECT_DOUBLE_EQ(c.ratio(true, 7), 0.8);
  EXPECT_EQ(c.observed(true), WriteCalibration::kKept);
  // Clamped both ways; too short a price, or no measurement, is not observed.
  WriteCalibration d;
  ASSERT_TRUE(d.observe(false, 7, 1e-3, 1.0));
  EXPECT_DOUBLE_EQ(d.ratio(false, 7), WriteCalibration::kHighest);
  ASSERT_TRUE(d.observe(true, 7, 1e-3, 1e-6));
  EXPECT_DOUBLE_EQ(d.ratio(true, 7), WriteCalibration::kLowest);
  EXPECT_FALSE(d.observe(false, 7, 10e-6, 1e-3));
  EXPECT_FALSE(d.observe(false, 7, 1e-3, 0));
  EXPECT_FALSE(d.observe(false, 7, 1e-3, std::nan("")));
  EXPECT_EQ(d.observed(false), 1u);
}

TEST(WriteCalibration, EarlierJobsSeedTheirPlansFirstWrites) {
  WriteCalibration c;
  // Plan 7's new-file writes took 2, 4 and 3 times their price in the last jobs (and one more
  // ratio than are kept); its recycled writes once 0.5.
  c.seed({{7, false, {9.0, 2.0, 4.0, 3.0}, 100}, {7, true, {0.5}, 100}, {8, false, {50.0}, 100}});
  EXPECT_DOUBLE_EQ(c.ratio(false, 7), 3.0);  // the median of the last three
  EXPECT_DOUBLE_EQ(c.ratio(true, 7), 0.5);
  EXPECT_DOUBLE_EQ(c.ratio(false, 8), WriteCalibration::kHighest);  // clamped
  EXPECT_DOUBLE_EQ(c.ratio(false, 9), 1.0);                         // a plan no job wrote: the model's
  EXPECT_DOUBLE_EQ(c.ratio(true, 9), 1.0);
  // This job's writes follow the earlier ones: 4, 3, then 1.
  ASSERT_TRUE(c.observe(false, 7, 1e-3, 1e-3));
  EXPECT_DOUBLE_EQ(c.ratio(false, 7), 3.0);
  EXPECT_DOUBLE_EQ(c.ratio(false, 9), 1.0);  // this job's one ratio, for any plan
  ASSERT_TRUE(c.observe(false, 9, 1e-3, 5e-3));
  EXPECT_DOUBLE_EQ(c.ratio(false, 7), 3.0);  // 3, 1, 5
  EXPECT_DOUBLE_EQ(c.ratio(false, 9), 3.0);  // 1, 5: their mean
  // What the next job starts from: per plan, the earlier ratios and this job's for that plan.
  const std::vector<WriteRecord> next = c.learned(200);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].key, 7u);
  EXPECT_FALSE(next[0].recycled);
  EXPECT_EQ(next[0].ratios, (std::vector<double>{4.0, 3.0, 1.0}));
  EXPECT_EQ(next[0].time, 200);
  EXPECT_EQ(next[1].key, 9u);
  EXPECT_EQ(next[1].ratios, (std::vector<double>{5.0}));
}
