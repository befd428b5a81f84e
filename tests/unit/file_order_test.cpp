// FileOrder and FileOrderBuffer (src/backends/transfer_steps.hpp): a rank's data in file order,
// worked out once and staged for each transfer.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "backends/transfer_steps.hpp"

using namespace strata;

namespace {

// Two variables (f64 and f32) of 1000 elements, one-element blocks in a shuffled order over both.
Decomposition shuffled(uint32_t seed) {
  Decomposition d;
  d.variables.push_back({"a", ElemType::f64, {1000}});
  d.variables.push_back({"b", ElemType::f32, {1000}});
  for (int v = 0; v < 2; ++v) {
    for (uint64_t i = 0; i < 1000; i += 3) d.blocks.push_back({v, {i}, {1 + i % 2}});
  }
  std::shuffle(d.blocks.begin(), d.blocks.end(), std::mt19937(seed));
  return d;
}

// The bytes of element `elem` of variable `var` as a serial writer in file order would put them.
std::vector<std::byte> reference(const Decomposition& d, const std::vector<std::byte>& user) {
  std::vector<std::pair<std::pair<int, uint64_t>, std::vector<std::byte>>> elements;
  uint64_t mem = 0;
  for (const Block& b : d.blocks) {
    const uint64_t es = elem_size(d.variables[static_cast<size_t>(b.var)].type);
    for (uint64_t k = 0; k < b.count[0]; ++k, mem += es) {
      elements.push_back({{b.var, b.start[0] + k},
                          {user.begin() + static_cast<long>(mem), user.begin() + static_cast<long>(mem + es)}});
    }
  }
  std::sort(elements.begin(), elements.end());
  std::vector<std::byte> out;
  for (const auto& e : elements) out.insert(out.end(), e.second.begin(), e.second.end());
  return out;
}

}  // namespace

TEST(FileOrder, StagesShuffledBlocksInFileOrderAndBack) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Decomposition d = shuffled(seed);
    const FileOrder order(d);
    ASSERT_TRUE(order.staged());
    EXPECT_EQ(order.bytes(), d.local_bytes());
    const auto& ext = order.extents();
    for (size_t i = 1; i < ext.size(); ++i) {
      EXPECT_TRUE(ext[i - 1].var < ext[i].var ||
                  (ext[i - 1].var == ext[i].var && ext[i - 1].elem_begin + ext[i - 1].elems <= ext[i].elem_begin));
    }
    std::vector<std::byte> user(d.local_bytes());
    std::iota(reinterpret_cast<unsigned char*>(user.data()),
              reinterpret_cast<unsigned char*>(user.data()) + user.size(), static_cast<unsigned char>(seed));
    // A write: the staged copy is the file's bytes, in order.
    FileOrderBuffer write(order, user.data(), Access::write);
    ASSERT_NE(write.data(), user.data());
    EXPECT_TRUE(std::equal(write.data(), write.data() + order.bytes(), reference(d, user).begin()));
    // A read: what lands in the staged copy goes back to each block's place in the user's buffer;
    // the same FileOrder serves any number of transfers.
    std::vector<std::byte> back(d.local_bytes());
    for (int pass = 0; pass < 2; ++pass) {
      std::fill(back.begin(), back.end(), std::byte{0});
      FileOrderBuffer read(order, back.data(), Access::read);
      std::copy(write.data(), write.data() + order.bytes(), read.data());
      read.finish_read();
      EXPECT_EQ(back, user);
    }
  }
}

TEST(FileOrder, UsesTheUsersBufferWhenMemoryIsInFileOrder) {
  Decomposition d = shuffled(1);
  std::sort(d.blocks.begin(), d.blocks.end(),
            [](const Block& a, const Block& b) { return a.var != b.var ? a.var < b.var : a.start < b.start; });
  const FileOrder order(d);
  EXPECT_FALSE(order.staged());
  std::vector<std::byte> user(d.local_bytes());
  FileOrderBuffer stream(order, user.data(), Access::write);
  EXPECT_EQ(stream.data(), user.data());
  // Per-process files keep memory order: nothing is staged even when it differs from the variables' order.
  EXPECT_FALSE(FileOrder(shuffled(2), false).staged());
}

TEST(FileOrder, MergesRunsThatMeetInTheFileOnceStaged) {
  // Memory holds [0,10), [20,30), [10,20): three runs apart in memory, one run in the file.
  Decomposition d;
  d.variables.push_back({"v", ElemType::f32, {40}});
  d.blocks = {{0, {0}, {10}}, {0, {20}, {10}}, {0, {10}, {10}}};
  const FileOrder order(d);
  ASSERT_TRUE(order.staged());
  ASSERT_EQ(order.extents().size(), 1u);
  EXPECT_EQ(order.extents()[0].elem_begin, 0u);
  EXPECT_EQ(order.extents()[0].elems, 30u);
  ASSERT_EQ(order.pieces().size(), 3u);
  std::vector<std::byte> user(d.local_bytes());
  for (size_t i = 0; i < user.size(); ++i) user[i] = static_cast<std::byte>(i);
  FileOrderBuffer stream(order, user.data(), Access::write);
  EXPECT_TRUE(std::equal(stream.data(), stream.data() + order.bytes(), reference(d, user).begin()));
  // A decomposition that keeps its blocks apart (a replayed trace's requests) keeps three extents.
  d.blocks_apart = true;
  EXPECT_EQ(FileOrder(d).extents().size(), 3u);
}
