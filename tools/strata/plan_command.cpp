// strata plan KERNEL: a dry run of the engine for a kernel configuration. The phase is
// declared and planned as `strata run KERNEL --backend strata` would (the shared raw layout),
// aggregators are placed by the cost model, and nothing is written: the partitions, each one's
// elected aggregator and tier, and every candidate's cost (the shape of the aggregation paper's
// Table 2) are printed, or written as JSON.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common/error.hpp"
#include "common/hints.hpp"
#include "common/options.hpp"
#include "common/units.hpp"
#include "help_table.hpp"
#include "json_file.hpp"
#include "kernels/kernel.hpp"
#include "plan_report.hpp"
#include "strata/strata.hpp"

namespace strata::cli {

namespace {

void add_plan_options(OptionSet& o) {
  o.section("plan options");
  o.add("output", "PATH", "the file the phase would write (its file system sets the partition alignment)",
        "strata-KERNEL.dat in the current directory");
  o.add("hints", "K=V,K=V",
        "engine hints (cb_buffer_size, strata_buffers, strata_aggregators, strata_aggr_tier, "
        "strata_persistency...), over those of the file named by STRATA_HINTS");
  o.add("seed", "S", "seed of random kernel parameters (as strata run --seed)", "1");
  o.add("json", "FILE", "write the plan, the placement and the cost table as JSON (rank 0)");
  o.add_flag("quiet", "do not print the tables");
}

std::string plan_help(const Kernel* k) {
  std::string text =
      "usage: mpirun -np N strata plan KERNEL [kernel options] [options]\n\n"
      "Plans KERNEL's write phase through the engine without writing anything: the partitions,\n"
      "the aggregator and memory tier elected for each by the cost model (docs/tiers.md), and the\n"
      "cost C1 + C2 of every candidate rank on every tier its node has.\n\nkernels:\n";
  text += kernels_help_table(false);
  text += "\n";
  OptionSet o;
  add_plan_options(o);
  if (k != nullptr) k->add_options(o);
  text += o.help_text();
  if (k == nullptr) text += "\n`strata plan KERNEL --help` adds the kernel's own options.\n";
  text +=
      "\nexample:\n  STRATA_RANKS_PER_NODE=2 mpirun -np 8 strata plan array1d --dist random --size 1M --json "
      "plan.json\n";
  return text;
}

// Declares KERNEL's phase as strata run --backend strata would and plans it without writing.
PlanResult plan_kernel(MPI_Comm comm, const Kernel& kernel, const OptionSet& options) {
  PlanResult r;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &r.ranks);
  r.kernel = kernel.name();
  KernelSetup setup;
  Hints hints;
  collectively(comm, [&] {
    setup = kernel.build(options, rank, r.ranks);
    hints = hints_from_environment_and(options.get("hints"));
  });
  r.params = setup.params;
  const std::string path = options.given("output") ? options.get("output") : "strata-" + kernel.name() + ".dat";
  hints.emplace_back("strata_dry_run", "true");
  hints.emplace_back("strata_cost_table", "true");

  const Decomposition& d = setup.decomposition;
  std::vector<std::byte> buffer(d.local_bytes());  // declared, never read: nothing moves in a dry run
  Engine engine(comm);
  Phase phase(engine, path, PhaseMode::write, hints);
  std::vector<int> ids;
  for (int v = 0; v < static_cast<int>(d.variables.size()); ++v) {
    const Variable& var = d.variables[static_cast<size_t>(v)];
    ids.push_back(phase.define_variable(var.name, elem_size(var.type), var.shape, d.variable_offset(v)));
  }
  uint64_t mem = 0;
  for (const Block& b : d.blocks) {
    phase.add_subarray(ids[static_cast<size_t>(b.var)], b.start, b.count, buffer.data() + mem);
    mem += b.elements() * elem_size(d.variables[static_cast<size_t>(b.var)].type);
  }
  phase.plan();
  r.placement = phase.placement();
  r.stats = phase.close();
  return r;
}

}  // namespace

int plan_command(const std::vector<std::string>& args, const Environment&) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const Kernel* kernel = nullptr;
  OptionSet options;
  bool help = args.empty() || args[0] == "--help" || args[0] == "-h";
  collectively(comm, [&] {
    if (help) return;
    if (args[0].rfind("-", 0) == 0) throw_usage("strata plan needs a KERNEL first (see strata plan --help)");
    kernel = &find_kernel(args[0]);
    add_plan_options(options);
    kernel->add_options(options);
    auto extra = options.parse({args.begin() + 1, args.end()});
    if (!extra.empty())
      throw_usage("unexpected argument \"" + extra[0] + "\" (see strata plan " + args[0] + " --help)");
    help = options.help_requested();
    if (!help && options.given("json")) check_record_path(options.get("json"), "--json");
  });
  if (help) {
    if (rank == 0) std::fputs(plan_help(kernel).c_str(), stdout);
    return args.empty() ? 2 : 0;
  }
  const PlanResult plan = plan_kernel(comm, *kernel, options);
  collectively(comm, [&] {
    if (rank != 0) return;
    if (!options.flag("quiet")) std::fputs(plan_text(plan).c_str(), stdout);
    if (options.given("json")) write_json_file(options.get("json"), plan_json(plan));
  });
  return 0;
}

}  // namespace strata::cli
