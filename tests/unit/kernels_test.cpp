#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>

#include "common/error.hpp"
#include "decomp/selection.hpp"
#include "kernels/array1d/array1d_kernel.hpp"
#include "kernels/ior/ior_kernel.hpp"
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
}  // namespace

TEST(IorKernel, StridedLayoutMatchesIor) {
  const Kernel& k = find_kernel("ior");
  auto o = options_for(k, {"--block-size", "64K", "--transfer-size", "16K", "--segments", "3"});
  auto s = k.build(o, 2, 4);
  const auto& d = s.decomposition;
  ASSERT_EQ(d.blocks.size(), 3u);
  const uint64_t block = 64 * 1024;  // bytes: IOR's elements
  EXPECT_EQ(d.variables[0].type, ElemType::u8);
  for (uint64_t seg = 0; seg < 3; ++seg) EXPECT_EQ(d.blocks[seg].start[0], (seg * 4 + 2) * block);
  EXPECT_EQ(d.variables[0].shape[0], 4 * 3 * block);
  EXPECT_EQ(d.transfer_bytes, 16u * 1024);
  EXPECT_NO_THROW(d.validate());
}

TEST(IorKernel, SequentialLayoutKeepsARanksSegmentsTogether) {
  const Kernel& k = find_kernel("ior");
  auto o = options_for(k, {"--block-size", "8K", "--transfer-size", "8K", "--segments", "2", "--layout", "sequential"});
  auto s = k.build(o, 1, 3);
  EXPECT_EQ(s.decomposition.blocks[0].start[0], 2u * 8192);
  EXPECT_EQ(s.decomposition.blocks[1].start[0], 3u * 8192);
}

TEST(IorKernel, RejectsBadSizes) {
  const Kernel& k = find_kernel("ior");
  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{"--block-size", "0"},
                                             {"--block-size", "-4K"},
                                             {"--block-size", "64K", "--transfer-size", "24K"},
                                             {"--block-size", "64K", "--transfer-size", "128K"},
                                             {"--segments", "0"},
                                             {"--layout", "diagonal"},
                                             {"--block-size", "12", "--transfer-size", "5"}}) {
    auto o = options_for(k, bad);
    EXPECT_THROW(k.build(o, 0, 2), Error) << bad[0] << " " << bad[1];
  }
}

TEST(Array1dKernel, ChunksTileTheArray) {
  const Kernel& k = find_kernel("array1d");
  for (const char* dist : {"uniform", "random", "normal"}) {
    auto o = options_for(k, {"--dist", dist, "--size", "4K", "--seed", "42"});
    uint64_t expect_start = 0;
    for (int r = 0; r < 5; ++r) {
      auto s = k.build(o, r, 5);
      s.decomposition.validate();
      for (const auto& b : s.decomposition.blocks) {
        EXPECT_EQ(b.start[0], expect_start) << dist;
        expect_start += b.count[0];
      }
      if (r == 4) {
        EXPECT_EQ(expect_start, s.decomposition.variables[0].shape[0]) << dist;
      }
    }
  }
}

TEST(Array1dKernel, RandomSizesStayWithinTheMaximumAndDependOnTheSeed) {
  auto a = array1d_counts("random", 1000, 0, 1, 64);
  auto b = array1d_counts("random", 1000, 0, 2, 64);
  EXPECT_NE(a, b);
  for (auto c : a) EXPECT_LE(c, 1000u);
  auto n = array1d_counts("normal", 1000, 250, 1, 4000);
  double mean = std::accumulate(n.begin(), n.end(), 0.0) / 4000.0;
  EXPECT_NEAR(mean, 1000.0, 20.0);
}

TEST(Kernels, UnknownKernelNamesTheKnownOnes) {
  try {
    find_kernel("nosuchkernel");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ior"), std::string::npos);
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}

TEST(BlocksKernel, TilesCoverEveryElementOnceAcrossRanks) {
  const Kernel& k = find_kernel("blocks");
  for (uint64_t seed : {1, 2, 3, 99}) {
    for (int ranks : {1, 3, 8}) {
      auto o =
          options_for(k, {"--shape", "7x5x6", "--vars", "2", "--tiles-per-rank", "2", "--seed", std::to_string(seed)});
      std::vector<std::vector<int>> hits(2, std::vector<int>(7 * 5 * 6, 0));
      for (int r = 0; r < ranks; ++r) {
        auto s = k.build(o, r, ranks);
        ASSERT_NO_THROW(s.decomposition.validate()) << "seed " << seed << " ranks " << ranks;
        for (const auto& e : flatten(s.decomposition)) {
          for (uint64_t i = 0; i < e.elems; ++i) ++hits[static_cast<size_t>(e.var)][e.elem_begin + i];
        }
      }
      for (const auto& var : hits) {
        for (int h : var) ASSERT_EQ(h, 1) << "seed " << seed << " ranks " << ranks;
      }
    }
  }
}

TEST(BlocksKernel, ShuffledMemoryIsNotInFileOrder) {
  const Kernel& k = find_kernel("blocks");
  auto o = options_for(k, {"--shape", "16x16", "--tiles-per-rank", "6"});
  auto s = k.build(o, 0, 2);
  EXPECT_FALSE(memory_in_file_order(flatten(s.decomposition)));
  auto f = options_for(k, {"--shape", "16x16", "--tiles-per-rank", "6", "--memory-order", "file"});
  EXPECT_GT(k.build(f, 0, 2).decomposition.blocks.size(), 3u);
}

namespace {
// A trace file in the test's temporary folder; returns its path.
std::string write_trace(const std::string& name, const std::string& json) {
  const std::string path = ::testing::TempDir() + name;
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(json.c_str(), f);
  std::fclose(f);
  return path;
}
}  // namespace

TEST(TraceKernel, FoldsJobRanksAndKeepsEachRequestApart) {
  // A 3-rank job: rank 0 writes two neighbouring requests, rank 2 one, in a second variable too.
  const std::string path = write_trace("trace_fold.json", R"({"format": "strata-trace", "version": 1, "ranks": 3,
    "variables": [{"name": "a", "requests": [[0, 0, 10], [0, 10, 6], [2, 16, 4]]},
                  {"name": "b", "requests": [[1, 5, 3]]}]})");
  const Kernel& k = find_kernel("trace");
  auto o = options_for(k, {"--trace", path});
  // On 2 ranks: job ranks 0 and 2 write from rank 0, job rank 1 from rank 1.
  const Decomposition d0 = k.build(o, 0, 2).decomposition;
  ASSERT_EQ(d0.variables.size(), 2u);
  EXPECT_EQ(d0.variables[0].shape[0], 20u);  // the furthest byte of "a"
  EXPECT_EQ(d0.variables[1].shape[0], 8u);
  ASSERT_EQ(d0.blocks.size(), 3u);
  EXPECT_EQ(d0.blocks[2].start[0], 16u);
  EXPECT_EQ(d0.local_bytes(), 20u);
  EXPECT_EQ(flatten(d0).size(), 3u);  // the neighbours stay two requests
  const Decomposition d1 = k.build(o, 1, 2).decomposition;
  ASSERT_EQ(d1.blocks.size(), 1u);
  EXPECT_EQ(d1.blocks[0].var, 1);
  EXPECT_NO_THROW(d0.validate());
}

TEST(TraceKernel, RefusesOverlapsAndBadTraces) {
  const Kernel& k = find_kernel("trace");
  const std::string overlap = write_trace("trace_overlap.json", R"({"format": "strata-trace", "version": 1,
    "ranks": 2, "variables": [{"name": "a", "requests": [[0, 0, 10], [1, 8, 4]]}]})");
  EXPECT_THROW(k.build(options_for(k, {"--trace", overlap}), 0, 2), Error);
  const std::string rank = write_trace("trace_rank.json", R"({"format": "strata-trace", "version": 1,
    "ranks": 2, "variables": [{"name": "a", "requests": [[2, 0, 10]]}]})");
  EXPECT_THROW(k.build(options_for(k, {"--trace", rank}), 0, 2), Error);
  const std::string empty = write_trace("trace_empty.json", R"({"format": "strata-trace", "version": 1,
    "ranks": 2, "variables": [{"name": "a", "requests": [[0, 0, 0]]}]})");
  EXPECT_THROW(k.build(options_for(k, {"--trace", empty}), 0, 2), Error);
  EXPECT_THROW(k.build(options_for(k, {}), 0, 2), Error);  // no --trace
  EXPECT_THROW(k.build(options_for(k, {"--trace", "/nonexistent.json"}), 0, 2), Error);
}
