#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "common/error.hpp"
#include "common/hints.hpp"

using namespace strata;

TEST(Hints, ParsesAList) {
  Hints h = parse_hint_list("cb_nodes=4, cb_buffer_size=1048576,striping_unit=65536");
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].first, "cb_nodes");
  EXPECT_EQ(h[0].second, "4");
  EXPECT_EQ(h[1].first, "cb_buffer_size");
  EXPECT_EQ(h[2].second, "65536");
}

TEST(Hints, RejectsMalformedLists) {
  for (const char* bad : {"", "cb_nodes", "=4", "cb_nodes=", "cb_nodes=4,", "a b=1", "cb_nodes=4,,x=1"}) {
    EXPECT_THROW(parse_hint_list(bad), Error) << bad;
  }
}

TEST(Hints, ReadsAFileAndLetsTheCommandLineWin) {
  const std::string path = ::testing::TempDir() + "/strata_hints_test.txt";
  {
    std::ofstream f(path);
    f << "# ROMIO-style hints\n\ncb_nodes 2\nromio_cb_write enable\n";
  }
  Hints file = read_hints_file(path);
  ASSERT_EQ(file.size(), 2u);
  Hints merged = merge_hints(file, parse_hint_list("cb_nodes=8"));
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].second, "8");
  EXPECT_EQ(merged[1].second, "enable");
  std::remove(path.c_str());
}

TEST(Hints, RejectsMissingFilesAndBadLines) {
  EXPECT_THROW(read_hints_file("/nonexistent/strata/hints"), Error);
  const std::string path = ::testing::TempDir() + "/strata_hints_bad.txt";
  {
    std::ofstream f(path);
    f << "cb_nodes 2\njust_a_key\n";
  }
  try {
    read_hints_file(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":2"), std::string::npos) << e.what();  // names the line
  }
  std::remove(path.c_str());
}
