// Plan invariants: every declared byte belongs to exactly one (aggregator, round); no round
// exceeds S_buff; partitions are aligned; the plan depends on its inputs only (no hidden state).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "engine/move/packing.hpp"
#include "engine/plan/exchange.hpp"
#include "engine/plan/extents.hpp"
#include "engine/plan/partition.hpp"
#include "engine/plan/piece_views.hpp"

using namespace strata;
using namespace strata::engine;

namespace {

struct Case {
  PlanInput in;
  std::vector<Selection> ranks;  // each rank's selection
};

Case random_case(uint64_t seed) {
  SeededRandom g(seed);
  Case c;
  const int ranks = 1 + static_cast<int>(g.below(8));
  const int nodes = 1 + static_cast<int>(g.below(static_cast<uint64_t>(ranks)));
  for (int r = 0; r < ranks; ++r) c.in.node_of_rank.push_back(r % nodes);
  static const uint64_t aligns[] = {512, 4096, 65536};
  c.in.align = aligns[g.below(3)];
  c.in.buffer_bytes = c.in.align * (1 + g.below(8));
  c.in.buffers = 1 + static_cast<int>(g.below(3));
  c.in.aggregators = static_cast<int>(g.below(static_cast<uint64_t>(ranks) + 2));
  // Disjoint random extents dealt to ranks, with holes and an unaligned start.
  std::vector<std::vector<Piece>> pieces(static_cast<size_t>(ranks));
  static std::byte dummy[1];
  uint64_t off = g.below(100000);
  const int n = 1 + static_cast<int>(g.below(60));
  for (int i = 0; i < n; ++i) {
    const uint64_t len = 1 + g.below(g.below(4) == 0 ? 500000 : 3000);
    pieces[g.below(static_cast<uint64_t>(ranks))].push_back({off, len, dummy, 1, 1});
    off += len + (g.below(3) == 0 ? g.below(200000) : 0);
  }
  c.in.lo = UINT64_MAX;
  for (auto& p : pieces) {
    c.ranks.push_back(normalise(p, [](uint64_t) { return std::string("v"); }));
    const Selection& s = c.ranks.back();
    c.in.total_bytes += s.bytes;
    if (s.bytes > 0) {
      c.in.lo = std::min(c.in.lo, s.lo);
      c.in.hi = std::max(c.in.hi, s.hi);
    }
  }
  return c;
}

}  // namespace

TEST(Plan, EveryByteHasExactlyOneAggregatorAndRound) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Case c = random_case(seed);
    const Plan plan = make_plan(c.in);
    SCOPED_TRACE("seed " + std::to_string(seed));
    // Partitions: aligned, contiguous, covering the domain, one distinct aggregator each.
    ASSERT_GE(plan.partitions(), 1);
    std::map<int, int> aggregators;
    for (int p = 0; p < plan.partitions(); ++p) {
      EXPECT_EQ(plan.start[static_cast<size_t>(p)] % c.in.align, 0u);
      if (p > 0) {
        EXPECT_EQ(plan.start[static_cast<size_t>(p)], plan.end[static_cast<size_t>(p - 1)]);
      }
      EXPECT_EQ(++aggregators[plan.aggregator[static_cast<size_t>(p)]], 1);
      EXPECT_LE(plan.rounds[static_cast<size_t>(p)], plan.global_rounds);
    }
    EXPECT_LE(plan.start.front(), c.in.lo);
    EXPECT_EQ(plan.end.back(), c.in.hi);
    if (c.in.aggregators > 0) {
      EXPECT_LE(plan.partitions(), c.in.aggregators);
    }
    // Transfers: each declared byte lands once, within one round's buffer, at the place the
    // aggregator's runs expect it.
    std::map<std::pair<int, uint64_t>, std::vector<std::pair<uint64_t, uint64_t>>> received;  // (aggr, disp-window)
    uint64_t moved = 0;
    ReceivedRanges per_aggregator_all;
    std::map<int, ReceivedRanges> ranges;
    for (size_t r = 0; r < c.ranks.size(); ++r) {
      const auto by_round = transfers_by_round(plan, c.ranks[r]);
      ASSERT_EQ(by_round.size(), plan.global_rounds);
      for (uint64_t g = 0; g < by_round.size(); ++g) {
        for (const Transfer& t : by_round[g]) {
          const uint64_t buffer = t.displacement / plan.buffer_bytes;
          EXPECT_EQ(buffer, g % static_cast<uint64_t>(plan.buffers));
          EXPECT_LE(t.displacement % plan.buffer_bytes + t.length, plan.buffer_bytes);  // within S_buff
          received[{t.target, g}].push_back({t.displacement, t.length});
          moved += t.length;
        }
      }
      for (const StreamExtent& e : c.ranks[r].extents) {
        for (uint64_t off = e.file_offset; off < e.file_offset + e.length;) {
          const int p = plan.partition_of(off);
          const uint64_t n = std::min(e.file_offset + e.length, plan.end[static_cast<size_t>(p)]) - off;
          ranges[plan.aggregator[static_cast<size_t>(p)]].push_back({off, n, static_cast<int>(r)});
          off += n;
        }
      }
    }
    EXPECT_EQ(moved, c.in.total_bytes);
    // No two transfers to one aggregator in one round overlap, and the runs match them.
    for (auto& [key, spans] : received) {
      std::sort(spans.begin(), spans.end());
      for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].first + spans[i - 1].second, spans[i].first);
      const int p = plan.partition_of_rank(key.first);
      ASSERT_GE(p, 0);
      const auto rounds = rounds_of_partition(plan, p, ranges[key.first]);
      uint64_t run_bytes = 0, span_bytes = 0;
      for (const engine::Run& run : rounds[key.second]) {
        run_bytes += run.length;
        EXPECT_LE(run.buffer_offset + run.length, plan.buffer_bytes);
        EXPECT_EQ(run.buffer_offset, (run.file_offset - plan.start[static_cast<size_t>(p)]) % plan.buffer_bytes);
      }
      for (const auto& sp : spans) span_bytes += sp.second;
      EXPECT_EQ(run_bytes, span_bytes);
    }
  }
}

// Every rank computes the plan alone, so it must depend on its inputs only: not on what was
// planned before (a cache or static state), nor on where the inputs live in memory. Plan every
// case, then plan them again in reverse order, from copies made after other allocations, and
// compare every field.
TEST(Plan, DependsOnItsInputsOnly) {
  std::vector<Plan> first;
  std::vector<PlanInput> inputs;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    inputs.push_back(random_case(seed).in);
    first.push_back(make_plan(inputs.back()));
  }
  std::vector<std::vector<char>> ballast;
  for (size_t i = inputs.size(); i-- > 0;) {
    ballast.emplace_back(64 + i * 8, 'x');  // moves the copies' heap addresses
    const PlanInput copy = inputs[i];
    const Plan again = make_plan(copy);
    SCOPED_TRACE("seed " + std::to_string(i + 1));
    EXPECT_EQ(again.start, first[i].start);
    EXPECT_EQ(again.end, first[i].end);
    EXPECT_EQ(again.aggregator, first[i].aggregator);
    EXPECT_EQ(again.rounds, first[i].rounds);
    EXPECT_EQ(again.global_rounds, first[i].global_rounds);
    EXPECT_EQ(again.buffer_bytes, first[i].buffer_bytes);
    EXPECT_EQ(again.buffers, first[i].buffers);
  }
}

TEST(Plan, AggregatorsSpreadOverNodes) {
  PlanInput in;
  in.node_of_rank = {0, 0, 0, 1, 1, 1};
  in.lo = 0;
  in.hi = 1 << 20;
  in.total_bytes = in.hi;
  in.align = 4096;
  in.buffer_bytes = 65536;
  const Plan one_per_node = make_plan(in);  // default: one per node
  EXPECT_EQ(one_per_node.aggregator, (std::vector<int>{0, 3}));
  in.aggregators = 4;
  EXPECT_EQ(make_plan(in).aggregator, (std::vector<int>{0, 3, 1, 4}));
}

TEST(Plan, OverlapsBetweenRanksAreNamed) {
  PlanInput in;
  in.node_of_rank = {0, 0};
  in.lo = 0;
  in.hi = 8192;
  in.total_bytes = 8192;
  in.align = 4096;
  in.buffer_bytes = 4096;
  const Plan plan = make_plan(in);
  ReceivedRanges r = {{0, 5000, 0}, {4000, 4192, 1}};
  try {
    rounds_of_partition(plan, 0, r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
  }
}

TEST(Extents, NormaliseCoalescesAndPacksStridedMemory) {
  std::vector<uint32_t> aos = {1, 100, 2, 200, 3, 300};  // x, y, x, y, ...
  std::vector<std::byte> stream(12);
  std::vector<Piece> pieces = {{40, 12, reinterpret_cast<std::byte*>(aos.data()), 4, 8},
                               {52, 4, reinterpret_cast<std::byte*>(&aos[1]), 4, 4}};
  Selection s = normalise(pieces, [](uint64_t) { return std::string("x"); });
  ASSERT_EQ(s.extents.size(), 1u);  // adjacent in the file: one extent
  EXPECT_EQ(s.extents[0].length, 16u);
  stream.resize(16);
  pack(s, stream.data());
  uint32_t got[4];
  std::memcpy(got, stream.data(), 16);
  EXPECT_EQ(got[0], 1u);
  EXPECT_EQ(got[1], 2u);
  EXPECT_EQ(got[2], 3u);
  EXPECT_EQ(got[3], 100u);
  std::vector<uint32_t> back(6, 0);
  std::vector<Piece> again = {{40, 12, reinterpret_cast<std::byte*>(back.data()), 4, 8}};
  unpack(normalise(again, [](uint64_t) { return std::string("x"); }), stream.data());
  EXPECT_EQ(back, (std::vector<uint32_t>{1, 0, 2, 0, 3, 0}));
  EXPECT_THROW(normalise({{0, 10, nullptr, 1, 1}, {5, 10, nullptr, 1, 1}},
                         [](uint64_t at) { return std::string(at < 5 ? "a" : "b"); }),
               Error);
}

// A copied write's runs found from the plan and its pieces (PackedTransfers::copied_by_plan) go
// where the transfers of the same pieces send them, from the same memory, in every round (from
// the pieces as one array or as views of them, plan/piece_views.hpp): found
// a part at a time or kept whole (a kept round stays kept when asked again), compared as the
// fewest (target, displacement, memory, length) runs that say it.
TEST(Plan, CopiesFoundFromThePlanGoWhereTheTransfersGo) {
  struct Run {
    int target;
    uint64_t displacement;
    const std::byte* from;
    uint64_t length;
    bool operator==(const Run& o) const {
      return target == o.target && displacement == o.displacement && from == o.from && length == o.length;
    }
  };
  auto drain = [](MemoryCopies& copies, uint64_t g, std::vector<Run>& out) {
    size_t calls = 0;
    while (const RoundProgram* p = copies.round(g)) {
      size_t i = 0;
      for (const auto& [target, end] : p->targets) {
        for (; i < end; ++i) out.push_back({target, p->runs[i].displacement, p->runs[i].from, p->runs[i].length});
      }
      ++calls;
    }
    std::sort(out.begin(), out.end(), [](const Run& a, const Run& b) {
      return a.target != b.target ? a.target < b.target : a.displacement < b.displacement;
    });
    std::vector<Run> merged;
    for (const Run& r : out) {
      Run* last = merged.empty() ? nullptr : &merged.back();
      if (last != nullptr && last->target == r.target && last->displacement + last->length == r.displacement &&
          last->from + last->length == r.from) {
        last->length += r.length;
      } else {
        merged.push_back(r);
      }
    }
    out = merged;
    return calls;
  };
  uint64_t compared = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    Case c = random_case(seed);
    const Plan plan = make_plan(c.in);
    for (Selection& s : c.ranks) {
      // Memory mostly back to back, with a gap every third piece (runs that touch in the file
      // but not in memory stay apart).
      std::vector<std::byte> memory(s.bytes + 16 * s.pieces.size() + 1);
      uint64_t at = 0;
      for (size_t i = 0; i < s.pieces.size(); ++i) {
        at += i % 3 == 2 ? 16 : 0;
        s.pieces[i].memory = memory.data() + at;
        at += s.pieces[i].length;
      }
      // The same pieces viewed (plan/piece_views.hpp): cut into blocks of 1-7 pieces, each moved
      // back in the file by its own shift in the base, which the view moves forward again.
      PieceViews views;
      for (size_t i = 0, k = 0; i < s.pieces.size(); ++k) {
        const size_t n = std::min<size_t>(1 + (seed * 7 + k * 3) % 7, s.pieces.size() - i);
        const uint64_t shift = std::min<uint64_t>(s.pieces[i].file_offset, 4096 * (k % 3) + k);
        PieceBlock b{views.base.size(),
                     views.base.size() + n,
                     shift,
                     0,
                     s.pieces[i].file_offset,
                     s.pieces[i + n - 1].file_offset + s.pieces[i + n - 1].length};
        for (size_t j = i; j < i + n; ++j) {
          Piece p = s.pieces[j];
          p.file_offset -= shift;
          views.base.push_back(p);
          views.bytes += p.length;
        }
        views.blocks.push_back(b);
        views.count += n;
        i += n;
      }
      ASSERT_EQ(views.flatten().size(), s.pieces.size());
      std::vector<StreamExtent> viewed_extents;
      for_each_extent(views, [&](uint64_t o, uint64_t n) { viewed_extents.push_back({o, n, 0}); });
      const std::vector<StreamExtent> flat_extents = extents_of(s.pieces);
      ASSERT_EQ(viewed_extents.size(), flat_extents.size()) << "seed " << seed;
      for (size_t i = 0; i < flat_extents.size(); ++i) {
        EXPECT_EQ(viewed_extents[i].file_offset, flat_extents[i].file_offset) << "seed " << seed;
        EXPECT_EQ(viewed_extents[i].length, flat_extents[i].length) << "seed " << seed;
      }
      const std::vector<Piece> none;
      const PackedTransfers listed = PackedTransfers::copied(transfers_by_round(plan, s));
      MemoryCopies by_transfers(listed, s.pieces, nullptr), by_plan(plan, s.pieces, nullptr),
          by_views(plan, none, nullptr, &views);
      CopyProgram kept;
      MemoryCopies keeping(plan, s.pieces, &kept);
      std::vector<std::vector<Run>> rounds;
      for (uint64_t g = 0; g < plan.global_rounds; ++g) {
        std::vector<Run> want, got, whole;
        drain(by_transfers, g, want);
        drain(by_plan, g, got);
        std::vector<Run> viewed;
        drain(by_views, g, viewed);
        EXPECT_EQ(viewed, want) << "seed " << seed << " viewed round " << g;
        EXPECT_LE(drain(keeping, g, whole), 1u);
        EXPECT_EQ(got, want) << "seed " << seed << " round " << g;
        EXPECT_EQ(whole, want) << "seed " << seed << " round " << g;
        for (const Run& r : want) compared += r.length;
        rounds.push_back(want);
      }
      MemoryCopies replay(kept);  // the kept program, copied by
      for (uint64_t g = 0; g < plan.global_rounds; ++g) {
        std::vector<Run> again;
        drain(replay, g, again);
        EXPECT_EQ(again, rounds[g]) << "seed " << seed << " kept round " << g;
      }
    }
  }
  EXPECT_GT(compared, uint64_t{1} << 20);
}
