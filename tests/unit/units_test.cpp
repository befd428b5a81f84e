#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/units.hpp"

using namespace strata;

TEST(Units, ParsesBinarySuffixes) {
  EXPECT_EQ(parse_size("0", "x"), 0u);
  EXPECT_EQ(parse_size("512", "x"), 512u);
  EXPECT_EQ(parse_size("4k", "x"), 4096u);
  EXPECT_EQ(parse_size("4K", "x"), 4096u);
  EXPECT_EQ(parse_size("64KiB", "x"), 65536u);
  EXPECT_EQ(parse_size("100KB", "x"), 102400u);
  EXPECT_EQ(parse_size("1M", "x"), 1048576u);
  EXPECT_EQ(parse_size("2g", "x"), 2ULL << 30);
  EXPECT_EQ(parse_size("1T", "x"), 1ULL << 40);
  EXPECT_EQ(parse_size("7B", "x"), 7u);
}

TEST(Units, RejectsBadSizesWithTheOptionName) {
  for (const char* bad : {"", "-1", "abc", "1X", "1MM", "1.5M", "K", "1KBB", "99999999999999999999"}) {
    try {
      parse_size(bad, "--block-size");
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find("--block-size"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_size("16777216T", "x"), Error);  // overflows 64 bits
}

TEST(Units, CountsAreWholeNumbers) {
  EXPECT_EQ(parse_count("12", "n"), 12u);
  EXPECT_THROW(parse_count("12k", "n"), Error);
  EXPECT_THROW(parse_count("-3", "n"), Error);
}

TEST(Units, ShapesTakeBothSpellings) {
  EXPECT_EQ(parse_shape("24x20x16", "--shape", 1, 6), (std::vector<uint64_t>{24, 20, 16}));
  EXPECT_EQ(parse_shape("48,48,48", "--grid", 3, 3), (std::vector<uint64_t>{48, 48, 48}));
  EXPECT_EQ(parse_shape("7", "--shape", 1, 6), (std::vector<uint64_t>{7}));
  for (const char* bad : {"", "x", "4x", "x4", "4,,4", "4x0x4", "4x-1x4", "4xax4", "4 x4x4", "1x2x3x4", "1x2"}) {
    try {
      parse_shape(bad, "--grid", 3, 3);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find("--grid needs 3 positive sizes"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_shape("1x2x3x4x5x6x7", "--shape", 1, 6), Error);
  try {
    parse_shape("8,0,8", "--grid", 3, 3);
    FAIL() << "accepted a zero size";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("greater than zero"), std::string::npos) << e.what();
  }
}

TEST(Units, FormatsSizes) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(1536 * 1024), "1.50 MiB");
}
