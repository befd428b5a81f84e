#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/options.hpp"

using namespace strata;

namespace {
OptionSet make() {
  OptionSet o;
  o.add("backend", "NAME", "the backend");
  o.add("size", "BYTES", "size", "1M");
  o.add_flag("verify", "check");
  return o;
}
}  // namespace

TEST(Options, ParsesValuesFlagsAndPositionals) {
  OptionSet o = make();
  auto pos = o.parse({"ior", "--backend", "posix", "--verify", "--size=4K"});
  ASSERT_EQ(pos.size(), 1u);
  EXPECT_EQ(pos[0], "ior");
  EXPECT_EQ(o.get("backend"), "posix");
  EXPECT_EQ(o.get("size"), "4K");
  EXPECT_TRUE(o.flag("verify"));
  EXPECT_FALSE(o.help_requested());
}

TEST(Options, DefaultsApplyWhenNotGiven) {
  OptionSet o = make();
  o.parse({});
  EXPECT_EQ(o.get("size"), "1M");
  EXPECT_FALSE(o.given("size"));
  EXPECT_FALSE(o.flag("verify"));
}

TEST(Options, RejectsUnknownMissingAndMisusedOptions) {
  {
    OptionSet o = make();
    EXPECT_THROW(o.parse({"--nope"}), Error);
  }
  {
    OptionSet o = make();
    EXPECT_THROW(o.parse({"--backend"}), Error);
  }
  {
    OptionSet o = make();
    EXPECT_THROW(o.parse({"--verify=yes"}), Error);
  }
  {
    OptionSet o = make();
    EXPECT_THROW(o.parse({"-b", "4"}), Error);
  }
}

TEST(Options, HelpListsEveryOption) {
  OptionSet o = make();
  o.parse({"--help"});
  EXPECT_TRUE(o.help_requested());
  const std::string h = o.help_text();
  EXPECT_NE(h.find("--backend NAME"), std::string::npos);
  EXPECT_NE(h.find("--verify"), std::string::npos);
  EXPECT_NE(h.find("(default 1M)"), std::string::npos);
}
