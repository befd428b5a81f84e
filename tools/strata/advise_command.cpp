// strata advise: striping and MPI-IO hints for a file system and a job, each with its reason
// and source (src/advise/). Every rank computes the advice; rank 0 prints it.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "advise/advice.hpp"
#include "advise/advice_report.hpp"
#include "arch/node_map.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "fs/fs_info.hpp"
#include "json_file.hpp"

namespace strata::cli {

namespace {

const char* kAdviseUsage =
    "usage: [mpirun -np N] strata advise [--path P | --fs NAME [--osts N]] --block-size B\n"
    "                                    [--nodes N] [--ppn P] [options]\n\n"
    "Advises the striping (Lustre, BeeGFS) and the MPI-IO hints (ROMIO, OMPIO, Open MPI MCA, Cray\n"
    "MPICH_MPIIO_HINTS) for a job whose ranks each write B bytes (--block-size) per write call,\n"
    "with one reason per rule and the paper it comes from (docs/advisor.md). The file system is\n"
    "detected from --path (default: the current directory) or named with --fs. strata run applies\n"
    "the same advice by default (strata run --no-advice turns it off).\n\n"
    "To fit the stripe-count rule to a campaign's measurements on your file system (beside the\n"
    "paper's 5.6N + 4.9 and 5N + 3), run the harness: strata-bench calibrate RESULTS.sqlite\n"
    "--json fit.json (see its --help and docs/advisor.md); --rule fit.json then uses that fit.\n";

void add_advise_options(OptionSet& o) {
  o.section("file system");
  o.add("path", "P", "detect the file system of P (statfs)", ".");
  o.add("fs", "NAME", "name the file system instead: lustre, beegfs, gpfs, ext4, xfs, tmpfs, nfs, ...");
  o.add("osts", "N", "OSTs (storage targets) to stripe over; 0 = unknown, no cap", "0");
  o.add("max-stripe-size", "B", "largest stripe size the file system allows", "4G");
  o.add("stripe-step", "B", "stripe sizes are multiples of this", "64K");
  o.section("job");
  o.add("nodes", "N", "compute nodes", "the nodes of this run");
  o.add("ppn", "P", "ranks per node", "the largest ranks per node of this run");
  o.add("block-size", "B", "bytes one rank writes per write call (required; K, M, G = 1024^n)");
  o.add("variables", "N", "datasets (variables) per output step", "1");
  o.add("dataset-size", "B", "global size of one dataset", "block x ranks, divided by --variables for multi-dataset");
  o.add("strategy", "S", "per-dataset (a collective call per dataset) or multi-dataset (one for all)", "per-dataset");
  o.add("files", "N", "files the application would create per step (for file per process vs shared)", "0");
  o.add("memory-budget", "B", "collective buffer one aggregator may hold (multi-dataset)", "64M");
  o.section("rules");
  o.add("stripe-ratio", "K", "stripe size = K x block size: 1, 1/2 or 1/4", "1/4");
  o.add("stripe-fit", "F", "stripe count fit: 5.6n+4.9 (Hazel Hen ws9) or 5n+3 (its predecessor)", "5.6n+4.9");
  o.add("rule", "FILE", "stripe count from a calibrated fit instead: the JSON of strata-bench calibrate --json FILE");
  o.section("output");
  o.add("json", "FILE", "also write the advice as JSON (rank 0)");
  o.add_flag("quiet", "do not print the table");
}

int64_t parse_signed_count(const std::string& text, const std::string& what) {
  return static_cast<int64_t>(std::min<uint64_t>(parse_count(text, what), static_cast<uint64_t>(INT64_MAX)));
}

advise::AdviceInput input_from(const OptionSet& o, const NodeMap& nodes, int size) {
  advise::AdviceInput in;
  if (o.given("path") && o.given("fs")) throw_usage("give --path or --fs, not both");
  if (o.given("fs")) {
    in.fs_type = o.get("fs");
    std::transform(in.fs_type.begin(), in.fs_type.end(), in.fs_type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  } else {
    FsInfo fs = fs_info(o.get("path"));
    if (fs.type == "unknown") {
      std::ostringstream m;
      m << "cannot tell the file system of \"" << o.get("path") << "\" (statfs magic 0x" << std::hex << fs.magic
        << "): name it with --fs";
      throw_usage(m.str());
    }
    in.fs_type = fs.type;
  }
  in.targets = parse_signed_count(o.get("osts"), "--osts");
  in.max_stripe_bytes = parse_size(o.get("max-stripe-size"), "--max-stripe-size");
  in.stripe_step_bytes = parse_size(o.get("stripe-step"), "--stripe-step");
  if (o.given("nodes")) {
    in.nodes = parse_signed_count(o.get("nodes"), "--nodes");
  } else {
    in.nodes = nodes.node_count;
  }
  if (o.given("ppn")) {
    in.ranks_per_node = parse_signed_count(o.get("ppn"), "--ppn");
  } else {
    std::vector<int> per_node(static_cast<size_t>(nodes.node_count), 0);
    for (int r = 0; r < size; ++r) ++per_node[static_cast<size_t>(nodes.node_of_rank[static_cast<size_t>(r)])];
    in.ranks_per_node = *std::max_element(per_node.begin(), per_node.end());
  }
  if (!o.given("block-size")) throw_usage("strata advise needs --block-size B (bytes one rank writes per call)");
  in.block_bytes = parse_size(o.get("block-size"), "--block-size");
  in.variables = parse_signed_count(o.get("variables"), "--variables");
  if (o.given("dataset-size")) {
    in.dataset_bytes = parse_size(o.get("dataset-size"), "--dataset-size");
    if (in.dataset_bytes == 0) throw_usage("--dataset-size must be more than 0 bytes");
  }
  const std::string strategy = o.get("strategy");
  if (strategy == "per-dataset") {
    in.strategy = advise::Strategy::per_dataset;
  } else if (strategy == "multi-dataset") {
    in.strategy = advise::Strategy::multi_dataset;
  } else {
    throw_usage("--strategy must be per-dataset or multi-dataset (got \"" + strategy + "\")");
  }
  in.files = parse_signed_count(o.get("files"), "--files");
  in.memory_budget_bytes = parse_size(o.get("memory-budget"), "--memory-budget");
  const std::string k = o.get("stripe-ratio");
  if (k == "1" || k == "1/1") {
    in.stripe_divisor = 1;
  } else if (k == "1/2" || k == "0.5") {
    in.stripe_divisor = 2;
  } else if (k == "1/4" || k == "0.25") {
    in.stripe_divisor = 4;
  } else {
    throw_usage("--stripe-ratio must be 1, 1/2 or 1/4 (got \"" + k + "\")");
  }
  const std::string fit = o.get("stripe-fit");
  if (fit == "5.6n+4.9") {
    in.fit = advise::StripeCountFit::hazel_hen;
  } else if (fit == "5n+3") {
    in.fit = advise::StripeCountFit::predecessor;
  } else {
    throw_usage("--stripe-fit must be 5.6n+4.9 or 5n+3 (got \"" + fit + "\")");
  }
  if (o.given("rule")) {
    if (o.given("stripe-fit")) throw_usage("give --rule FILE or --stripe-fit, not both");
    std::ifstream f(o.get("rule"));
    if (!f) throw_usage("cannot read the rule file \"" + o.get("rule") + "\" (--rule)");
    std::stringstream text;
    text << f.rdbuf();
    in.rule = advise::stripe_rule_from_json(text.str(), o.get("rule"));
  }
  return in;
}

}  // namespace

int advise_command(const std::vector<std::string>& args, const Environment&) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  OptionSet o;
  add_advise_options(o);
  collectively(comm, [&] {
    auto positional = o.parse(args);
    if (!positional.empty()) throw_usage("unexpected argument \"" + positional[0] + "\" (see strata advise --help)");
    if (!o.help_requested() && o.given("json")) check_record_path(o.get("json"), "--json");
  });
  if (o.help_requested()) {
    if (rank == 0) std::printf("%s\noptions:\n%s", kAdviseUsage, o.help_text().c_str());
    return 0;
  }
  NodeMap nodes = node_map(comm);
  advise::AdviceInput in;
  advise::Advice a;
  collectively(comm, [&] {
    in = input_from(o, nodes, size);
    a = advise::advise(in);
  });
  collectively(comm, [&] {
    if (rank != 0) return;
    if (o.given("json")) {
      write_json_file(o.get("json"), advise::to_json(a, in));
    }
    if (!o.flag("quiet")) std::fputs(advise::to_table(a, in).c_str(), stdout);
  });
  return 0;
}

}  // namespace strata::cli
