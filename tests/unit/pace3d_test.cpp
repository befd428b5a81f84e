// PACE3D's voxel format and domain decomposition.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "kernels/pace3d/pace3d_domain.hpp"
#include "kernels/pace3d/voxel_format.hpp"

using namespace strata;
using namespace strata::pace3d;

TEST(VoxelFormat, HeaderRoundTripsAndFramesFollowIt) {
  VoxelHeader h;
  h.nz = 40;
  h.ny = 25;
  h.nx = 26;
  h.element_bytes = 12;
  h.components = 3;
  h.frames = 7;
  h.seed = 9;
  const auto bytes = encode_header(h);
  ASSERT_EQ(bytes.size(), kHeaderBytes);
  const VoxelHeader back = decode_header(bytes.data(), "x");
  EXPECT_EQ(back.nz, 40u);
  EXPECT_EQ(back.nx, 26u);
  EXPECT_EQ(back.element_bytes, 12u);
  EXPECT_EQ(back.frames, 7u);
  EXPECT_EQ(back.seed, 9u);
  EXPECT_EQ(h.field_bytes(), 40u * 25 * 26 * 12);
  EXPECT_EQ(frame_offset(h, 0), kHeaderBytes);
  EXPECT_EQ(frame_offset(h, 3), kHeaderBytes + 3 * (h.field_bytes() + 2 * kFrameMetaBytes));
  auto broken = bytes;
  broken[0] = std::byte{'X'};
  EXPECT_THROW(decode_header(broken.data(), "x"), Error);
}

TEST(VoxelFormat, FrameMetadataChecks) {
  const auto begin = encode_frame_begin(4, 4.0, 1000);
  EXPECT_NO_THROW(check_frame_begin(begin.data(), 4, 1000, "x"));
  EXPECT_THROW(check_frame_begin(begin.data(), 5, 1000, "x"), Error);
  EXPECT_THROW(check_frame_begin(begin.data(), 4, 999, "x"), Error);
  const auto end = encode_frame_end({4, -2.5f, 7.25f, 1000});
  const FrameEnd e = decode_frame_end(end.data(), "x");
  EXPECT_EQ(e.frame, 4u);
  EXPECT_EQ(e.min, -2.5f);
  EXPECT_EQ(e.max, 7.25f);
  EXPECT_THROW(decode_frame_end(begin.data(), "x"), Error);
}

TEST(Pace3dDomain, OneDimensionalStacksRanksAlongZ) {
  const Domain d = make_domain(64 * 1024, 4, "1d", 2, 3);
  EXPECT_EQ(d.local[1], 25u);  // cbrt(16384) = 25.4
  EXPECT_EQ(d.local[2], 25u);
  EXPECT_EQ(d.local[0], 16384u / 625);
  EXPECT_EQ(d.global[0], 3 * d.local[0]);
  EXPECT_EQ(d.start(0), 2 * d.local[0]);
  // A rank's rows are one contiguous run of the field.
  EXPECT_EQ(d.row_file_offset(0, 1) - d.row_file_offset(0, 0), d.row_bytes());
  EXPECT_EQ(d.row_file_offset(0, 0), 2 * d.local_bytes());
}

TEST(Pace3dDomain, ThreeDimensionalGridCoversTheFieldOnce) {
  const int ranks = 12;
  uint64_t covered = 0;
  for (int r = 0; r < ranks; ++r) {
    const Domain d = make_domain(6000, 4, "3d", r, ranks);
    EXPECT_EQ(d.procs[0] * d.procs[1] * d.procs[2], ranks);
    for (int a = 0; a < 3; ++a) EXPECT_LE(d.start(a) + d.local[a], d.global[a]);
    covered += d.local_bytes();
    if (r == ranks - 1) {
      EXPECT_EQ(covered, d.global_bytes());
    }
  }
}

TEST(Pace3dDomain, ProcessGridIsBalanced) {
  EXPECT_EQ(process_grid(12), (std::array<int, 3>{3, 2, 2}));
  EXPECT_EQ(process_grid(8), (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(process_grid(7), (std::array<int, 3>{7, 1, 1}));
  EXPECT_EQ(process_grid(1), (std::array<int, 3>{1, 1, 1}));
}

TEST(Pace3dDomain, BlockSmallerThanAVoxelIsAUsageError) {
  try {
    make_domain(32, 64, "1d", 0, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}
