#include <gtest/gtest.h>

#include <random>
#include <set>

#include "common/error.hpp"
#include "decomp/selection.hpp"

using namespace strata;

namespace {

Decomposition two_d(std::vector<uint64_t> shape, std::vector<Block> blocks) {
  Decomposition d;
  d.variables.push_back({"v", ElemType::f64, shape});
  d.blocks = std::move(blocks);
  return d;
}

}  // namespace

TEST(Selection, FlattensA2dBlockIntoRows) {
  auto d = two_d({4, 10}, {{0, {1, 2}, {2, 3}}});
  auto e = flatten(d);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].elem_begin, 12u);
  EXPECT_EQ(e[0].elems, 3u);
  EXPECT_EQ(e[0].mem_offset, 0u);
  EXPECT_EQ(e[1].elem_begin, 22u);
  EXPECT_EQ(e[1].mem_offset, 24u);
}

TEST(Selection, MergesFullRowsIntoOneRun) {
  auto d = two_d({4, 10}, {{0, {1, 0}, {3, 10}}});
  auto e = flatten(d);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].elem_begin, 10u);
  EXPECT_EQ(e[0].elems, 30u);
}

TEST(Selection, KeepsBlocksApartWhenAsked) {
  // Two neighbouring blocks, contiguous in file and memory: one extent, or one each when the
  // decomposition keeps its blocks apart (a replayed trace's requests); rows of one block still merge.
  auto d = two_d({4, 10}, {{0, {0, 0}, {1, 10}}, {0, {1, 0}, {2, 10}}});
  ASSERT_EQ(flatten(d).size(), 1u);
  d.blocks_apart = true;
  const auto e = flatten(d);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].elems, 10u);
  EXPECT_EQ(e[1].elem_begin, 10u);
  EXPECT_EQ(e[1].elems, 20u);
  EXPECT_EQ(e[1].mem_offset, 80u);
}

TEST(Selection, DetectsMemoryOutOfFileOrder) {
  auto in_order = two_d({100}, {{0, {0}, {10}}, {0, {50}, {10}}});
  EXPECT_TRUE(memory_in_file_order(flatten(in_order)));
  auto reversed = two_d({100}, {{0, {50}, {10}}, {0, {0}, {10}}});
  EXPECT_FALSE(memory_in_file_order(flatten(reversed)));
}

TEST(Selection, ValidateRejectsOverlapsAndOutOfRangeBlocks) {
  EXPECT_THROW(two_d({100}, {{0, {0}, {10}}, {0, {5}, {10}}}).validate(), Error);
  EXPECT_THROW(two_d({100}, {{0, {95}, {10}}}).validate(), Error);
  EXPECT_THROW(two_d({100}, {{0, {5}, {0}}}).validate(), Error);
  EXPECT_THROW(two_d({10, 10}, {{0, {5}, {1}}}).validate(), Error);
  EXPECT_THROW(two_d({100}, {{1, {5}, {1}}}).validate(), Error);
  EXPECT_NO_THROW(two_d({100}, {{0, {0}, {10}}, {0, {10}, {10}}}).validate());
}

TEST(Selection, ClipsToATransferStep) {
  auto d = two_d({100}, {{0, {0}, {10}}, {0, {50}, {10}}});
  auto e = flatten(d);
  auto step = clip_to_memory(d, e, 64, 128);  // bytes 64..128 = elements 8,9 then 50..55
  ASSERT_EQ(step.size(), 2u);
  EXPECT_EQ(step[0].elem_begin, 8u);
  EXPECT_EQ(step[0].elems, 2u);
  EXPECT_EQ(step[1].elem_begin, 50u);
  EXPECT_EQ(step[1].elems, 6u);
  EXPECT_EQ(step[1].mem_offset, 80u);
}

TEST(Selection, SplitsExtentsAtTheTransferSize) {
  auto d = two_d({100}, {{0, {0}, {10}}});
  auto pieces = split_extents(d, flatten(d), 32);  // 4 doubles each
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[2].elems, 2u);
  EXPECT_EQ(pieces[2].mem_offset, 64u);
}

// Property: boxes of any linear range cover exactly that range, in order, at most 2·nd−1 boxes.
TEST(Selection, BoxesCoverLinearRangesExactly) {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 500; ++trial) {
    const size_t nd = 1 + rng() % 4;
    std::vector<uint64_t> shape(nd);
    uint64_t total = 1;
    for (auto& s : shape) {
      s = 1 + rng() % 6;
      total *= s;
    }
    const uint64_t begin = rng() % total;
    const uint64_t n = 1 + rng() % (total - begin);
    auto boxes = linear_range_to_boxes(shape, begin, n);
    EXPECT_LE(boxes.size(), 2 * nd - 1) << "seed 12345 trial " << trial;
    std::vector<uint64_t> covered;
    for (const auto& b : boxes) {
      // enumerate the box in row-major order
      std::vector<uint64_t> idx(b.start);
      uint64_t count = 1;
      for (auto c : b.count) count *= c;
      for (uint64_t k = 0; k < count; ++k) {
        covered.push_back(linear_index(shape, idx));
        for (size_t dd = nd; dd-- > 0;) {
          if (++idx[dd] < b.start[dd] + b.count[dd]) break;
          idx[dd] = b.start[dd];
        }
      }
    }
    ASSERT_EQ(covered.size(), n) << "trial " << trial;
    for (uint64_t k = 0; k < n; ++k) ASSERT_EQ(covered[k], begin + k) << "trial " << trial;
  }
}

// Readers of another rank count share out only what the writers covered: holes (a PIO map's
// elements no rank owns) are in nobody's share, every covered element in exactly one.
TEST(Selection, EvenShareOfCoveredElementsSkipsHoles) {
  std::mt19937_64 rng(777);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<uint64_t> shape{1 + rng() % 5, 1 + rng() % 7};
    const uint64_t total = shape[0] * shape[1];
    std::vector<Variable> vars{Variable("v", ElemType::i32, shape)};
    std::vector<bool> owned(total, false);
    Coverage covered(1);
    for (int w = 0; w < 4; ++w) {  // overlapping, unsorted intervals, as several writers give
      const uint64_t b = rng() % total, e = b + rng() % (total - b + 1);
      add_coverage(covered, 0, b, e);
      for (uint64_t k = b; k < e; ++k) owned[k] = true;
    }
    merge_coverage(covered);
    for (size_t i = 1; i < covered[0].size(); ++i) ASSERT_LT(covered[0][i - 1].second, covered[0][i].first);
    const int readers = 1 + static_cast<int>(rng() % 5);
    std::vector<int> seen(total, 0);
    for (int r = 0; r < readers; ++r) {
      for (const Block& b : even_share(vars, covered, r, readers).blocks) {
        for (uint64_t i = b.start[0]; i < b.start[0] + b.count[0]; ++i) {
          for (uint64_t j = b.start[1]; j < b.start[1] + b.count[1]; ++j) ++seen[i * shape[1] + j];
        }
      }
    }
    for (uint64_t k = 0; k < total; ++k) ASSERT_EQ(seen[k], owned[k] ? 1 : 0) << "trial " << trial << " element " << k;
  }
}

TEST(Selection, ValidateHoldsBlocksLikeToItsPromise) {
  // Variables 1 and 2 have variable 0's blocks, each in one run after the ones before.
  Decomposition d;
  for (const char* name : {"a", "b", "c"}) d.variables.push_back({name, ElemType::f32, {100}});
  for (int v = 0; v < 3; ++v) d.blocks.insert(d.blocks.end(), {{v, {40}, {5}}, {v, {3}, {2}}});
  d.blocks_like = {-1, 0, 0};
  EXPECT_NO_THROW(d.validate());
  Decomposition other_block = d;
  other_block.blocks[3].start = {41};  // b's second block differs
  EXPECT_THROW(other_block.validate(), Error);
  Decomposition interleaved = d;
  std::swap(interleaved.blocks[3], interleaved.blocks[4]);  // b's blocks apart
  EXPECT_THROW(interleaved.validate(), Error);
  Decomposition later = d;
  later.blocks_like = {2, 0, -1};  // like a variable after it
  EXPECT_THROW(later.validate(), Error);
  Decomposition shape = d;
  shape.variables[2].shape = {200};
  EXPECT_THROW(shape.validate(), Error);
}
