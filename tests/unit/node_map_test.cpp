#include <gtest/gtest.h>

#include "arch/node_map.hpp"
#include "common/error.hpp"

using namespace strata;

TEST(NodeMap, GroupsConsecutiveRanks) {
  EXPECT_EQ(parse_ranks_per_node("2", 6), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(parse_ranks_per_node("3", 7), (std::vector<int>{0, 0, 0, 1, 1, 1, 2}));
}

TEST(NodeMap, DensifiesExplicitMaps) {
  EXPECT_EQ(parse_node_map("0,0,1,1,2", 5), (std::vector<int>{0, 0, 1, 1, 2}));
  EXPECT_EQ(parse_node_map("5,2,5,9", 4), (std::vector<int>{1, 0, 1, 2}));
}

TEST(NodeMap, RejectsBadMaps) {
  EXPECT_THROW(parse_ranks_per_node("0", 4), Error);
  EXPECT_THROW(parse_ranks_per_node("-1", 4), Error);
  EXPECT_THROW(parse_ranks_per_node("two", 4), Error);
  EXPECT_THROW(parse_node_map("0,0,1", 4), Error);     // wrong length
  EXPECT_THROW(parse_node_map("0,-1,1,1", 4), Error);  // negative
  EXPECT_THROW(parse_node_map("0,a,1,1", 4), Error);   // not a number
  EXPECT_THROW(parse_node_map("0,0,1,1,", 4), Error);  // trailing comma
}
