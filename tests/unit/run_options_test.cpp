// RunOptions: the run options' table is what parses, checks and describes them.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "common/error.hpp"
#include "run/catalogue.hpp"
#include "run/run_options.hpp"
#include "run/run_record.hpp"

using strata::RunOptions;

namespace {

std::string usage_error(const std::vector<std::string>& args) {
  try {
    RunOptions::parse(args);
  } catch (const strata::Error& e) {
    EXPECT_EQ(e.kind(), strata::ErrorKind::usage) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RunOptions, EveryRowSetsItsField) {
  const RunOptions r =
      RunOptions::parse({"ior",      "--backend",     "mpiio-coll",  "--per-variable", "--fsync", "--read",
                         "--verify", "--repetitions", "4",           "--seed",         "9",       "--step",
                         "2",        "--hints",       "cb_nodes=2",  "--output",       "o.dat",   "--json",
                         "r.json",   "--quiet",       "--no-advice", "--block-size",   "8K"});
  EXPECT_EQ(r.kernel, "ior");
  EXPECT_EQ(r.backend, "mpiio-coll");
  EXPECT_TRUE(r.io.per_variable && r.io.fsync && r.read && r.verify && r.quiet && r.no_advice);
  EXPECT_FALSE(r.writes());  // --read alone
  EXPECT_EQ(r.repetitions, 4u);
  EXPECT_EQ(r.seed, 9u);
  EXPECT_EQ(r.step, 2u);
  EXPECT_EQ(r.hints, (strata::Hints{{"cb_nodes", "2"}}));
  EXPECT_EQ(r.output, "o.dat");
  EXPECT_EQ(r.json, "r.json");
  EXPECT_EQ(r.parsed.get("block-size"), "8K");  // the kernel's own, for it to read
  EXPECT_EQ(r.io.container, "raw");             // a default from its row
  const RunOptions d = RunOptions::parse({"ior", "--backend", "posix"});
  EXPECT_TRUE(d.writes() && !d.read && !d.io.fsync);
  EXPECT_EQ(d.repetitions, 1u);
  EXPECT_EQ(d.layout(), strata::Layout::shared);
}

TEST(RunOptions, BackendSwitchesFollowTheTable) {
  EXPECT_NE(usage_error({"ior", "--backend", "posix", "--per-variable"})
                .find("--per-variable applies to backend mpiio-coll only"),
            std::string::npos);
  EXPECT_NE(
      usage_error({"ior", "--backend", "mpiio-ind", "--container", "hdf5"}).find("applies to backend strata only"),
      std::string::npos);
  EXPECT_EQ(usage_error({"ior", "--backend", "posix", "--container", "raw"}), "");  // the default is no switch
  EXPECT_NE(usage_error({"ior", "--backend", "strata", "--container", "zip"}).find("unknown container"),
            std::string::npos);
  EXPECT_NE(usage_error({"ior", "--backend", "nfs4"}).find("unknown backend \"nfs4\""), std::string::npos);
  EXPECT_NE(usage_error({"ior"}).find("needs --backend"), std::string::npos);
}

TEST(RunOptions, KindsTakeTheirOwnRows) {
  // Application kernels choose a mode, not a backend; backend-only options are unknown to them.
  const RunOptions p = RunOptions::parse({"pace3d", "--style", "mf", "--fsync"});
  EXPECT_EQ(p.kind(), strata::KernelKind::application);
  EXPECT_EQ(p.mode, "mf");
  EXPECT_TRUE(p.io.fsync);
  EXPECT_NE(usage_error({"pace3d", "--backend", "posix"}).find("unknown option \"--backend\""), std::string::npos);
  EXPECT_NE(usage_error({"pace3d", "--style", "zz"}).find("unknown --style \"zz\""), std::string::npos);
  EXPECT_NE(usage_error({"nosuch"}).find("unknown kernel \"nosuch\""), std::string::npos);
}

TEST(RunOptions, TheCatalogueListsEveryRowAndBackend) {
  const nlohmann::json c = strata::catalogue();
  std::set<std::string> listed;
  for (const auto& o : c["run_options"]) listed.insert(o["name"].get<std::string>());
  for (const auto& s : strata::run_option_specs()) EXPECT_EQ(listed.count(s.name), 1u) << s.name;
  ASSERT_EQ(c["backends"].size(), strata::backend_table().size());
  for (size_t i = 0; i < c["backends"].size(); ++i) {
    const auto& row = strata::backend_table()[i];
    EXPECT_EQ(c["backends"][i]["name"], row.name);
    EXPECT_EQ(c["backends"][i]["file_extension"], row.can.file_extension);
    EXPECT_EQ(c["backends"][i]["layouts"].size(), row.can.layouts.size());
  }
  EXPECT_EQ(strata::default_output("ior", "posix", {}), "strata-ior.dat");
  strata::IoOptions h5;
  h5.container = "hdf5";
  EXPECT_EQ(strata::default_output("ior", "strata", h5), "strata-ior.h5");
}

TEST(RunOptions, ACampaignSwitchIsItsRow) {
  // --fsync is the switch of the table: the record names it, with the report's line for its state.
  const auto on = strata::run_switches(RunOptions::parse({"ior", "--backend", "posix", "--fsync"}));
  const auto off = strata::run_switches(RunOptions::parse({"ior", "--backend", "posix"}));
  ASSERT_EQ(on.size(), 1u);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(on[0].name, "fsync");
  EXPECT_TRUE(on[0].on);
  EXPECT_EQ(on[0].line, "fsync: included in close time");
  EXPECT_FALSE(off[0].on);
  EXPECT_EQ(off[0].line, "fsync: not included (add --fsync)");
  strata::RunRecord record;
  record.switches = on;
  EXPECT_EQ(strata::to_json(record)["fsync"], true);  // the record's key, as before the table had switches
  for (const auto& s : strata::run_option_specs()) {
    if (s.campaign_switch) {
      EXPECT_EQ(s.metavar, nullptr) << s.name << " is a switch but takes a value";
    }
  }

  // A second switch declared only in a row (here, --no-advice marked as one in a copy of the table)
  // is in the record's JSON under its name, in the report's lines and in the catalogue's entry.
  std::vector<strata::RunOptionSpec> specs = strata::run_option_specs();
  for (auto& s : specs) {
    if (std::string(s.name) == "no-advice") {
      s.campaign_switch = strata::CampaignSwitch{"advice: not applied", "advice: applied (add --no-advice to skip it)",
                                                 "advice not applied", "advice applied"};
    }
  }
  const RunOptions o = RunOptions::parse({"ior", "--backend", "posix", "--no-advice"});
  record.switches = strata::run_switches(o, specs);
  ASSERT_EQ(record.switches.size(), 2u);
  EXPECT_EQ(record.switches[0].line, "advice: not applied");
  EXPECT_EQ(record.switches[1].line, "fsync: not included (add --fsync)");
  const nlohmann::json j = strata::to_json(record);
  EXPECT_EQ(j["no-advice"], true);
  EXPECT_EQ(j["fsync"], false);
  int marked = 0;
  for (const auto& entry : strata::run_options_json(specs)) {
    if (!entry.contains("campaign_switch")) continue;
    ++marked;
    if (entry["name"] == "no-advice") {
      EXPECT_EQ(entry["campaign_switch"]["label_on"], "advice not applied");
    } else {
      EXPECT_EQ(entry["name"], "fsync");
      EXPECT_EQ(entry["campaign_switch"]["label_off"], "fsync not included");
    }
  }
  EXPECT_EQ(marked, 2);
  int in_the_catalogue = 0;
  const nlohmann::json catalogue = strata::catalogue();
  for (const auto& entry : catalogue["run_options"]) in_the_catalogue += entry.contains("campaign_switch");
  EXPECT_EQ(in_the_catalogue, 1);

  // Only a flag can be a switch: a row with a value says so rather than guessing.
  for (auto& s : specs) {
    if (std::string(s.name) == "seed") s.campaign_switch = strata::CampaignSwitch{"", "", "", ""};
  }
  EXPECT_THROW(strata::run_switches(o, specs), std::logic_error);
}
