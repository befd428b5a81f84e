// The file of earlier jobs' write ratios (engine/write_history.hpp).
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "engine/write_history.hpp"

using namespace strata;
using namespace strata::engine;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path scratch(const char* name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("strata-write-history-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST(WriteHistory, KeepsEachPlansRatiosForItsFiguresAndDropsOldOnes) {
  const std::filesystem::path file = scratch("writes.json");
  std::filesystem::remove(file);
  const int64_t now = 1'800'000'000;
  ASSERT_TRUE(store_write_history(file.string(), 11, {{7, false, {2.0, 4.0}, now}, {7, true, {0.5}, now}}, now));
  ASSERT_TRUE(store_write_history(file.string(), 12, {{7, false, {9.0}, now - 10}}, now));
  // The same figures and plan: replaced; another plan: added.
  ASSERT_TRUE(
      store_write_history(file.string(), 11, {{7, false, {4.0, 3.0}, now + 5}, {8, false, {1.5}, now + 5}}, now + 5));
  const std::string text = read(file);
  std::vector<WriteRecord> mine = parse_write_history(text, 11, now + 5);
  ASSERT_EQ(mine.size(), 3u);
  std::map<std::pair<uint64_t, bool>, std::vector<double>> by;
  for (const WriteRecord& w : mine) by[{w.key, w.recycled}] = w.ratios;
  EXPECT_EQ(by.at({7, false}), (std::vector<double>{4.0, 3.0}));
  EXPECT_EQ(by.at({7, true}), (std::vector<double>{0.5}));
  EXPECT_EQ(by.at({8, false}), (std::vector<double>{1.5}));
  // Other figures' records stay in the file, apart.
  ASSERT_EQ(parse_write_history(text, 12, now + 5).size(), 1u);
  EXPECT_TRUE(parse_write_history(text, 13, now + 5).empty());
  // A day later they are ignored; the next store drops them.
  EXPECT_TRUE(parse_write_history(text, 11, now + 5 + kMaxAge_s + 1).empty());
  ASSERT_TRUE(store_write_history(file.string(), 11, {{9, true, {1.0}, now + kMaxAge_s + 10}}, now + kMaxAge_s + 10));
  EXPECT_EQ(parse_write_history(read(file), 11, now + kMaxAge_s + 10).size(), 1u);
  EXPECT_TRUE(parse_write_history(read(file), 12, now + kMaxAge_s + 10).empty());
  std::filesystem::remove_all(file.parent_path());
}

TEST(WriteHistory, TextThatIsNoHistoryIsNone) {
  for (const char* text : {"", "{", "[]", "{\"strata_write_history\": 2, \"records\": []}",
                           "{\"strata_write_history\": 1, \"records\": [{\"figures\": \"zz\", \"key\": \"1\", "
                           "\"recycled\": false, \"ratios\": [2], \"time\": 5}]}"}) {
    EXPECT_TRUE(parse_write_history(text, 0, 5).empty()) << text;
  }
  const std::string good =
      "{\"strata_write_history\": 1, \"records\": [{\"figures\": \"000000000000000b\", \"key\": \"7\", "
      "\"recycled\": true, \"ratios\": [2, \"x\", 3], \"time\": 5}]}";
  const std::vector<WriteRecord> r = parse_write_history(good, 11, 5);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].ratios, (std::vector<double>{2.0, 3.0}));
  EXPECT_TRUE(r[0].recycled);
}

TEST(WriteHistory, NamedByTheEnvironmentOrBesideTheMachineCache) {
  const char* old = std::getenv("STRATA_WRITE_HISTORY");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("STRATA_WRITE_HISTORY", "off", 1);
  EXPECT_EQ(write_history_path(), "");
  ::setenv("STRATA_WRITE_HISTORY", "/x/y.json", 1);
  EXPECT_EQ(write_history_path(), "/x/y.json");
  ::unsetenv("STRATA_WRITE_HISTORY");
  const std::string beside = write_history_path();
  EXPECT_NE(beside.find("/strata/writes-"), std::string::npos) << beside;
  if (old != nullptr) ::setenv("STRATA_WRITE_HISTORY", saved.c_str(), 1);
}

TEST(WriteHistory, AnotherProbeIsAnotherIdentity) {
  IoFigures a;
  IoFigures b = a;
  EXPECT_EQ(figures_identity(a), figures_identity(b));
  b.probed_at = 5;
  EXPECT_NE(figures_identity(a), figures_identity(b));
  b = a;
  b.write[2].seconds *= 1.01;
  EXPECT_NE(figures_identity(a), figures_identity(b));
}
