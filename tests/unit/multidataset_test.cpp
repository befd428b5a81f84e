// The multi-dataset pieces that need no MPI: block rows, sorting and coalescing, the paper's
// Figure 1 reordering, PIO maps (parsing, errors, blocks), the synthetic E3SM maps and the
// e3sm and noncontig3d kernels' coverage of every element exactly once.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "common/error.hpp"
#include "datasets/datasets.hpp"
#include "kernels/e3sm/pio_map.hpp"
#include "kernels/e3sm/synthetic_maps.hpp"
#include "kernels/kernel.hpp"

using namespace strata;

namespace {

OptionSet options_for(const Kernel& k, std::vector<std::string> args) {
  OptionSet o;
  o.add("seed", "S", "seed", "1");
  k.add_options(o);
  o.parse(args);
  return o;
}

std::string usage_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// How often each element of each variable is held, over all ranks' blocks.
std::vector<std::vector<int>> coverage(const Kernel& k, const OptionSet& o, int ranks) {
  std::vector<std::vector<int>> held;
  for (int r = 0; r < ranks; ++r) {
    const Decomposition d = k.build(o, r, ranks).decomposition;
    EXPECT_NO_THROW(d.validate());
    if (held.empty()) {
      for (const auto& v : d.variables) held.emplace_back(v.elements(), 0);
    }
    for (const Block& b : d.blocks) {
      const auto& shape = d.variables[static_cast<size_t>(b.var)].shape;
      for (const ElementRun& run : block_runs(shape, b.start, b.count, 0, 1)) {
        for (uint64_t i = 0; i < run.elems; ++i) ++held[static_cast<size_t>(b.var)][run.elem_begin + i];
      }
    }
  }
  return held;
}

}  // namespace

TEST(Datasets, BlockRowsMergeOverWholeTrailingDimensions) {
  auto runs = block_runs({4, 6}, {1, 2}, {2, 3}, 100, 4);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].elem_begin, 8u);
  EXPECT_EQ(runs[1].elem_begin, 14u);
  EXPECT_EQ(runs[1].mem_offset, 112u);
  runs = block_runs({4, 6}, {1, 0}, {2, 6}, 0, 4);  // whole rows: one run
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].elems, 12u);
}

TEST(Datasets, CoalesceSortsAndKeepsRunsApartWhenMemoryDoesNotFollow) {
  // Out of order; neighbours in the file whose memory is not contiguous stay apart.
  auto out = coalesce_runs({{10, 2, 8}, {0, 2, 0}, {2, 3, 16}, {5, 1, 100}}, 4, "x");
  ASSERT_EQ(out.size(), 4u);
  const uint64_t want[4] = {0, 2, 5, 10};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out[i].elem_begin, want[i]);
}

TEST(Datasets, CoalesceMergesWhenMemoryFollows) {
  auto out = coalesce_runs({{4, 2, 8}, {0, 4, 0}, {6, 1, 12}}, 2, "x");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].elems, 7u);
}

TEST(Datasets, OverlappingBlocksAreAnErrorNamingTheDataset) {
  auto msg = usage_message([] { coalesce_runs({{0, 4, 0}, {3, 2, 16}}, 4, "temperature"); });
  EXPECT_NE(msg.find("\"temperature\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("overlap at element 3"), std::string::npos) << msg;
}

TEST(Datasets, FigureOneReorderConcatenatesRowsInFileOrder) {
  // The paper's Figure 1, process 0: a 2x2 block at (0,0) and a 1x2 block at (0,2) of a 4x4
  // dataset; memory holds 0 1 2 3 (the 2x2 block) then 4 5 (the 1x2 block).
  std::vector<ElementRun> runs = block_runs({4, 4}, {0, 0}, {2, 2}, 0, 1);
  for (const auto& r : block_runs({4, 4}, {0, 2}, {1, 2}, 4, 1)) runs.push_back(r);
  const auto sorted = coalesce_runs(runs, 1, "fig1");
  const std::byte src[6] = {std::byte{0}, std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};
  std::byte file_order[6], back[6];
  reorder_to_file({sorted}, {1}, src, file_order);
  const int want[6] = {0, 1, 4, 5, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<int>(file_order[i]), want[i]) << i;
  reorder_from_file({sorted}, {1}, file_order, back);
  EXPECT_EQ(std::memcmp(src, back, 6), 0);
}

TEST(PioMap, ParsesRanksOffsetsAndIgnoresTrailingText) {
  const PioMap m =
      parse_pio_map("version 2001 npes 2 ndims 2 \n4 3 \n0 5\n1 2 3 0 5\n1 3\n9 10 11\nstack trace\n", "t");
  EXPECT_EQ(m.npes, 2);
  EXPECT_EQ(m.shape(), (std::vector<uint64_t>{3, 4}));
  ASSERT_EQ(m.offsets[0].size(), 5u);
  // Rank 0: elements 0 1 2 (one run, row 0), padding, 4 (row 1): two blocks.
  const auto b0 = pio_map_blocks(m, 7, 0, 2, 1);
  ASSERT_EQ(b0.size(), 2u);
  EXPECT_EQ(b0[0].var, 7);
  EXPECT_EQ(b0[0].start, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(b0[0].count, (std::vector<uint64_t>{1, 1, 3}));
  EXPECT_EQ(b0[1].start, (std::vector<uint64_t>{0, 1, 0}));
  // Rank 1: 8 9 10 cross from row 2 into... 8,9,10 are all in row 2: one block.
  EXPECT_EQ(pio_map_blocks(m, 0, 1, 2).size(), 1u);
  // Two ranks folded onto one: both lists.
  EXPECT_EQ(pio_map_blocks(m, 0, 0, 1).size(), 3u);
}

TEST(PioMap, MalformedMapsAreClearErrors) {
  auto bad_header = usage_message([] { parse_pio_map("version 2001 npes two ndims 1\n4\n", "m.dat"); });
  EXPECT_NE(bad_header.find("m.dat"), std::string::npos);
  EXPECT_NE(bad_header.find("line 1: bad header"), std::string::npos) << bad_header;
  auto beyond = usage_message([] { parse_pio_map("version 2001 npes 1 ndims 1\n4\n0 2\n1 5\n", "m.dat"); });
  EXPECT_NE(beyond.find("offset 5 of rank 0 is beyond the dimensions (4 elements)"), std::string::npos) << beyond;
  auto mismatch = usage_message([] { parse_pio_map("version 2001 npes 1 ndims 1\n4\n0 3\n1 2\n", "m.dat"); });
  EXPECT_NE(mismatch.find("count mismatch: rank 0 declares 3 offsets but its line holds 2"), std::string::npos)
      << mismatch;
  auto short_file = usage_message([] { parse_pio_map("version 2001 npes 2 ndims 1\n4\n0 1\n1\n", "m.dat"); });
  EXPECT_NE(short_file.find("rank 1"), std::string::npos) << short_file;
  auto version = usage_message([] { parse_pio_map("version 2002 npes 1 ndims 1\n4\n0 0\n\n", "m.dat"); });
  EXPECT_NE(version.find("unsupported map version 2002"), std::string::npos) << version;
}

TEST(SyntheticMaps, EveryElementHeldOnceAndBlocksHoldEachRanksElements) {
  for (bool levels_fastest : {false, true}) {
    ColumnMapSpec s{100, levels_fastest ? 5u : 3u, 4, 6, 9, true, levels_fastest};
    const PioMap m = column_map(s);
    std::vector<int> held(m.elements(), 0);
    for (const auto& offs : m.offsets)
      for (uint64_t o : offs) ++held[o - 1];
    for (int h : held) ASSERT_EQ(h, 1);
    // A rank's blocks hold exactly its listed elements; a block stays within one row.
    for (int r = 0; r < 4; ++r) {
      uint64_t n = 0;
      for (const Block& b : pio_map_blocks(m, 0, r, 4)) {
        n += b.elements();
        EXPECT_LE(b.start.back() + b.count.back(), m.shape().back());
      }
      EXPECT_EQ(n, m.offsets[static_cast<size_t>(r)].size());
    }
  }
}

TEST(E3smKernel, FAndGCasesHaveThePapersVariableMixAndCoverEveryElementOnce) {
  const Kernel& k = find_kernel("e3sm");
  auto f = options_for(k, {"--case", "f", "--ncol", "64", "--lev", "4"});
  const auto fs = k.build(f, 0, 3);
  EXPECT_EQ(fs.decomposition.variables.size(), 400u);
  EXPECT_EQ(fs.params["vars_3d"].get<uint64_t>(), 63u);
  for (const auto& held : coverage(k, f, 3))
    for (int h : held) ASSERT_EQ(h, 1);
  auto g = options_for(k, {"--case", "g", "--ncol", "40", "--lev", "5"});
  EXPECT_EQ(k.build(g, 1, 3).decomposition.variables.size(), 50u);
  for (const auto& held : coverage(k, g, 3))
    for (int h : held) ASSERT_EQ(h, 1);
}

TEST(E3smKernel, BadOptionsAreUsageErrors) {
  const Kernel& k = find_kernel("e3sm");
  EXPECT_NE(usage_message([&] {
              k.build(options_for(k, {"--case", "h"}), 0, 1);
            }).find("--case must be f or g"),
            std::string::npos);
  EXPECT_NE(usage_message([&] {
              k.build(options_for(k, {"--maps", "a,b", "--map-vars", "1"}), 0, 1);
            }).find("--map-vars lists 1 counts for 2 maps"),
            std::string::npos);
}

TEST(Noncontig3dKernel, CubesCoverEveryDatasetOnceInRandomMemoryOrder) {
  const Kernel& k = find_kernel("noncontig3d");
  auto o = options_for(k, {"--datasets", "3", "--grid", "16x8x8", "--block", "4"});
  for (const auto& held : coverage(k, o, 5))
    for (int h : held) ASSERT_EQ(h, 1);
  const auto d = k.build(o, 0, 1).decomposition;
  EXPECT_EQ(d.blocks.size(), 3u * 16);
  bool in_order = true;
  for (size_t i = 1; i < d.blocks.size(); ++i) in_order = in_order && d.blocks[i - 1].var <= d.blocks[i].var;
  EXPECT_FALSE(in_order);  // shuffled across datasets
  EXPECT_NE(usage_message([&] {
              k.build(options_for(k, {"--grid", "10x8x8"}), 0, 1);
            }).find("not a multiple"),
            std::string::npos);
}
