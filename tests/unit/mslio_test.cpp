// MSLIO's data volume against the paper's Table I, and its text format.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/mslio/mslio_text.hpp"
#include "kernels/mslio/mslio_volume.hpp"

using namespace strata::mslio;

TEST(MslioVolume, EveryCellOfTableOneWithinTwoPercent) {
  ASSERT_EQ(table_one().size(), 21u);
  double worst = 0;
  for (const TableOneCell& c : table_one()) {
    const Volume v = volume(c.ccross, c.subelements);
    EXPECT_EQ(v.files, c.files) << "ccross " << c.ccross;
    const double mb = static_cast<double>(v.bytes) / 1e6;
    const double error = std::fabs(mb - c.total_mb) / c.total_mb;
    EXPECT_LT(error, 0.02) << "ccross " << c.ccross << " x " << c.subelements << ": " << mb << " MB, Table I "
                           << c.total_mb;
    worst = std::max(worst, error);
  }
  EXPECT_LT(worst, 0.009);  // the fit is better than the 2 %: under 0.9 % everywhere
}

TEST(MslioVolume, TheAcceptanceCells) {
  struct Cell {
    unsigned c;
    uint64_t s;
    double mb;
    uint64_t files;
  };
  for (const Cell& cell :
       {Cell{3, 64, 1.7, 64}, Cell{4, 128, 26.6, 256}, Cell{5, 32, 7.1, 1024}, Cell{6, 256, 1683.5, 4096}}) {
    const Volume v = volume(cell.c, cell.s);
    EXPECT_EQ(v.files, cell.files);
    EXPECT_NEAR(static_cast<double>(v.bytes) / 1e6, cell.mb, 0.02 * cell.mb) << cell.c << "x" << cell.s;
  }
}

TEST(MslioVolume, FileSizeIsFourteenBytesPerValueAndScalesWithDimensions) {
  EXPECT_EQ(points_per_file(64), 951u);  // ceil((0.443*4096 + 1.32*64 + 1) / 2) = ceil(950.004)
  EXPECT_EQ(values_per_file(64, 2), 1902u);
  EXPECT_EQ(bytes_per_file(64, 2), 1902u * 14);
  EXPECT_EQ(bytes_per_file(64, 3), 951u * 3 * 14);
  EXPECT_EQ(local_problems(0), 1u);
  EXPECT_EQ(local_problems(9), 262144u);
}

TEST(MslioText, ValuesAreThirteenCharactersAndANewline) {
  char out[kValueBytes];
  for (double v : {0.0, -1.0, 1.5e-7, -4.294967e9, 123456.789, 9.5367431640625e-07}) {
    ASSERT_TRUE(format_value(v, out)) << v;
    EXPECT_EQ(out[kValueBytes - 1], '\n');
    EXPECT_EQ(std::strtod(std::string(out, kValueBytes - 1).c_str(), nullptr), std::stod(std::string(out, 13)));
  }
  EXPECT_FALSE(format_value(-1e200, out));  // a negative three-digit exponent would not fit
}

TEST(MslioText, FileIsDimensionByDimensionAndChecksBack) {
  // Three points of two dimensions, point by point in memory.
  const std::vector<double> memory = {1.0, -1.0, 2.0, -2.0, 3.0, -3.0};
  std::vector<char> text(6 * kValueBytes);
  ASSERT_TRUE(format_file(memory.data(), 3, 2, text.data()));
  const std::string s(text.begin(), text.end());
  EXPECT_EQ(s.substr(0, 14), " 1.000000e+00\n");
  EXPECT_EQ(s.substr(14, 14), " 2.000000e+00\n");  // dimension 0 first
  EXPECT_EQ(s.substr(42, 14), "-1.000000e+00\n");  // then dimension 1
  EXPECT_FALSE(check_file(text.data(), text.size(), memory.data(), 3, 2, 7));
  // A changed digit, a shifted value and a short file are all found.
  auto changed = text;
  changed[16] = '3';
  auto bad = check_file(changed.data(), changed.size(), memory.data(), 3, 2, 7);
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->find("local problem 7, dimension 0, point 1"), std::string::npos) << *bad;
  auto shifted = text;
  shifted[13] = ' ';
  EXPECT_TRUE(check_file(shifted.data(), shifted.size(), memory.data(), 3, 2, 7));
  EXPECT_TRUE(check_file(text.data(), text.size() - 1, memory.data(), 3, 2, 7));
}
