// S3D-IO: the original's four arrays, a block-block-block split that tiles the grid, the
// original's rank order, and a checkpoint every --interval steps.
#include <gtest/gtest.h>

#include <tuple>

#include "common/error.hpp"
#include "decomp/selection.hpp"
#include "kernels/s3d/s3d_kernel.hpp"

using namespace strata;

namespace {

OptionSet options(std::vector<std::string> args) {
  OptionSet o;
  o.add("seed", "S", "seed", "1");
  find_kernel("s3d").add_options(o);
  o.parse(args);
  return o;
}

}  // namespace

TEST(S3dKernel, BalancedDimsAnswerAsMpiDimsCreate) {
  using D = std::array<uint64_t, 3>;
  EXPECT_EQ(balanced_dims(1), (D{1, 1, 1}));
  EXPECT_EQ(balanced_dims(3), (D{3, 1, 1}));
  EXPECT_EQ(balanced_dims(4), (D{2, 2, 1}));
  EXPECT_EQ(balanced_dims(8), (D{2, 2, 2}));
  EXPECT_EQ(balanced_dims(12), (D{3, 2, 2}));
  EXPECT_EQ(balanced_dims(16), (D{4, 2, 2}));
  EXPECT_EQ(balanced_dims(7), (D{7, 1, 1}));
}

TEST(S3dKernel, TheOriginalsVariablesXFastest) {
  auto s = find_kernel("s3d").build(options({"--grid", "8x6x4", "--procs", "2x3x1"}), 0, 6);
  const auto& v = s.decomposition.variables;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "yspecies");
  EXPECT_EQ(v[0].shape, (std::vector<uint64_t>{11, 4, 6, 8}));
  EXPECT_EQ(v[1].name, "u");
  EXPECT_EQ(v[1].shape, (std::vector<uint64_t>{3, 4, 6, 8}));
  EXPECT_EQ(v[2].name, "pressure");
  EXPECT_EQ(v[2].shape, (std::vector<uint64_t>{4, 6, 8}));
  EXPECT_EQ(v[3].name, "temp");
  for (const auto& var : v) EXPECT_EQ(var.type, ElemType::f64);
  EXPECT_EQ(s.decomposition.global_bytes(), (11 + 3 + 1 + 1) * 8u * 6 * 4 * 8);
}

TEST(S3dKernel, BlocksTileTheGridInTheOriginalsRankOrder) {
  const int ranks = 12;
  const auto o = options({"--grid", "6x4x4", "--procs", "3x2x2"});
  std::vector<std::vector<int>> owner(4);
  for (int r = 0; r < ranks; ++r) {
    auto s = find_kernel("s3d").build(o, r, ranks);
    const auto& d = s.decomposition;
    ASSERT_NO_THROW(d.validate());
    ASSERT_EQ(d.blocks.size(), 4u);
    // rank r sits at px = r mod 3, py = (r / 3) mod 2, pz = r / 6; blocks are 2 x 2 x 2
    const auto& b = d.blocks[2];  // pressure: [Z][Y][X]
    EXPECT_EQ(b.start, (std::vector<uint64_t>{2 * static_cast<uint64_t>(r / 6), 2 * static_cast<uint64_t>((r / 3) % 2),
                                              2 * static_cast<uint64_t>(r % 3)}));
    EXPECT_EQ(d.blocks[0].count, (std::vector<uint64_t>{11, 2, 2, 2}));  // the species are not split
    for (const Extent& e : flatten(d)) {
      auto& own = owner[static_cast<size_t>(e.var)];
      own.resize(d.variables[static_cast<size_t>(e.var)].elements(), -1);
      for (uint64_t i = 0; i < e.elems; ++i) {
        ASSERT_EQ(own[e.elem_begin + i], -1) << "element written twice";
        own[e.elem_begin + i] = r;
      }
    }
  }
  for (const auto& own : owner) {
    for (int who : own) ASSERT_NE(who, -1) << "element written by nobody";
  }
}

TEST(S3dKernel, ACheckpointEveryIntervalSteps) {
  auto s = find_kernel("s3d").build(options({"--grid", "4x4x4", "--steps", "10", "--interval", "3"}), 0, 1);
  EXPECT_EQ(s.checkpoint_steps, (std::vector<uint64_t>{3, 6, 9}));
  s = find_kernel("s3d").build(options({"--grid", "4x4x4"}), 0, 1);
  EXPECT_EQ(s.checkpoint_steps, (std::vector<uint64_t>{1, 2, 3, 4, 5}));  // the original's 5 dumps
}

TEST(S3dKernel, RejectsWhatTheOriginalRejects) {
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"--grid", "10x10x10"},                      // 3 ranks split X in 3; 10 is not divisible
           {"--grid", "12x12"},                         // two values
           {"--grid", "12x0x12"},                       // zero
           {"--grid", "12x12x12", "--procs", "2x2x2"},  // 8 ranks, not 3
           {"--grid", "12x12x12", "--interval", "6"},   // after the 5 steps
       }) {
    EXPECT_THROW(find_kernel("s3d").build(options(bad), 0, 3), Error) << bad[0] << " " << bad[1];
  }
}

TEST(S3dKernel, TenCheckpointsMakeThePapersTable9Sizes) {
  // Table 9: 134M points -> 160 GB, 537M points -> 640 GB: 512^3 and 1024x1024x512 points, ten
  // checkpoints of the four arrays (16 float64 a point), in GiB.
  const uint64_t gib = uint64_t{1} << 30;
  for (auto [grid, ranks, size_gib] :
       std::vector<std::tuple<std::string, int, uint64_t>>{{"512x512x512", 4096, 160}, {"1024x1024x512", 16384, 640}}) {
    auto s = find_kernel("s3d").build(options({"--grid", grid, "--steps", "10"}), 0, ranks);
    EXPECT_EQ(s.checkpoint_steps.size() * s.decomposition.global_bytes(), size_gib * gib) << grid;
  }
}
