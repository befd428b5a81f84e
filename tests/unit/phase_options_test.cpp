// PhaseOptions: every engine hint parsed and checked in one place; unknown strata_* keys and
// bad values are errors that name what is valid.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "engine/phase_options.hpp"

using namespace strata;
using namespace strata::engine;

namespace {

std::string error_of(const std::vector<std::pair<std::string, std::string>>& hints) {
  try {
    PhaseOptions::from_hints(hints);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PhaseOptions, DefaultsLeaveTheStrategyToThePlan) {
  const PhaseOptions o = PhaseOptions::from_hints({});
  EXPECT_FALSE(o.buffer_bytes.has_value());
  EXPECT_FALSE(o.aggregators.has_value());
  EXPECT_FALSE(o.direct_threshold.has_value());
  EXPECT_EQ(o.strategy, PhaseOptions::Strategy::automatic);
  EXPECT_EQ(o.pack, PhaseOptions::Choice::automatic);
  EXPECT_EQ(o.commit, PhaseOptions::Commit::nosync);
}

TEST(PhaseOptions, ParsesEveryKnownHint) {
  const PhaseOptions o = PhaseOptions::from_hints({{"cb_buffer_size", "8M"},
                                                   {"strata_buffers", "3"},
                                                   {"cb_nodes", "4"},
                                                   {"striping_unit", "1M"},
                                                   {"strata_direct_threshold", "0"},
                                                   {"strata_strategy", "aggregate"},
                                                   {"strata_pack", "false"},
                                                   {"strata_spans", "true"},
                                                   {"strata_hole_limit", "64K"},
                                                   {"strata_commit", "in-place"},
                                                   {"strata_checksum_chunk", "1M"},
                                                   {"romio_cb_write", "enable"}});  // other MPI-IO hints pass
  EXPECT_EQ(*o.buffer_bytes, 8u << 20);
  EXPECT_EQ(*o.buffers, 3);
  EXPECT_EQ(*o.aggregators, 4);
  EXPECT_EQ(*o.align, 1u << 20);
  EXPECT_EQ(*o.direct_threshold, 0u);
  EXPECT_EQ(o.strategy, PhaseOptions::Strategy::aggregate);
  EXPECT_EQ(o.pack, PhaseOptions::Choice::off);
  EXPECT_EQ(o.spans, PhaseOptions::Choice::on);
  EXPECT_EQ(*o.hole_limit, 64u << 10);
  EXPECT_EQ(o.commit, PhaseOptions::Commit::in_place);
  EXPECT_EQ(o.checksum_chunk, 1u << 20);
}

TEST(PhaseOptions, FsyncMakesTheDefaultCommitSync) {
  EXPECT_EQ(PhaseOptions::from_hints({{"strata_fsync", "true"}}).commit, PhaseOptions::Commit::sync);
  EXPECT_EQ(PhaseOptions::from_hints({{"strata_fsync", "true"}, {"strata_commit", "in-place"}}).commit,
            PhaseOptions::Commit::in_place);
}

TEST(PhaseOptions, UnknownEngineKeyNamesTheValidOnes) {
  const std::string e = error_of({{"strata_bufers", "2"}});
  EXPECT_NE(e.find("unknown engine hint \"strata_bufers\""), std::string::npos) << e;
  EXPECT_NE(e.find("strata_buffers"), std::string::npos) << e;
  EXPECT_NE(e.find("strata_commit"), std::string::npos) << e;
}

TEST(PhaseOptions, BadValuesAreErrors) {
  EXPECT_NE(error_of({{"strata_fsync", "maybe"}}).find("must be true or false"), std::string::npos);
  EXPECT_NE(error_of({{"strata_strategy", "fast"}}).find("auto, direct or aggregate"), std::string::npos);
  EXPECT_NE(error_of({{"strata_pack", "sometimes"}}).find("true or false"), std::string::npos);
  EXPECT_NE(error_of({{"cb_buffer_size", "1K"}}).find("4 KiB minimum"), std::string::npos);
  EXPECT_NE(error_of({{"strata_buffers", "0"}}).find("between 1 and 64"), std::string::npos);
  EXPECT_NE(error_of({{"strata_commit", "later"}}).find("sync, nosync or in-place"), std::string::npos);
  EXPECT_NE(error_of({{"strata_aggr_tier", "floppy"}}).find("not a tier"), std::string::npos);
  EXPECT_NE(error_of({{"strata_strategy", "direct"}, {"strata_subfiling", "aggregator"}}).find("cannot write subfiles"),
            std::string::npos);
}

TEST(PhaseOptions, HashDiffersWhenAnOptionDiffers) {
  const uint64_t base = PhaseOptions::from_hints({}).hash();
  EXPECT_EQ(base, PhaseOptions::from_hints({}).hash());
  EXPECT_NE(base, PhaseOptions::from_hints({{"strata_pack", "true"}}).hash());
  EXPECT_NE(base, PhaseOptions::from_hints({{"strata_strategy", "direct"}}).hash());
  EXPECT_NE(base, PhaseOptions::from_hints({{"cb_buffer_size", "4M"}}).hash());
  EXPECT_NE(base, PhaseOptions::from_hints({{"strata_target", "node-local"}}).hash());
}

TEST(PhaseOptions, EveryListedHintIsAccepted) {
  for (const HintSpec& h : engine_hint_specs()) {
    const std::string name = h.name;
    const std::string value = name == "strata_aggr_tier"                                ? "dram"
                              : name == "strata_persistency"                            ? "job"
                              : name == "strata_target"                                 ? "shared"
                              : name == "strata_commit"                                 ? "sync"
                              : name == "strata_strategy"                               ? "auto"
                              : name == "strata_subfiling"                              ? "aggregator"
                              : name == "strata_buffers"                                ? "2"
                              : std::string(h.values).find("true") != std::string::npos ? "false"
                                                                                        : "8192";
    EXPECT_EQ(error_of({{name, value}}), "") << name << "=" << value;
  }
}
