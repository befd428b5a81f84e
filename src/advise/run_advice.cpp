#include "advise/run_advice.hpp"

#include <algorithm>
#include <map>

#include "advise/advice_report.hpp"
#include "common/error.hpp"

namespace strata::advise {

RunFacts run_facts(MPI_Comm file_comm, const NodeMap& nodes, uint64_t local_bytes, uint64_t transfer_bytes,
                   RunFacts f) {
  f.variables = std::max<int64_t>(f.variables, 1);
  // Per-dataset backends write each variable with its own call.
  uint64_t per_call = f.call_per_variable ? local_bytes / static_cast<uint64_t>(f.variables) : local_bytes;
  if (transfer_bytes > 0) per_call = std::min(per_call, transfer_bytes);
  unsigned long long mine = per_call, largest = 0;
  check_mpi(MPI_Allreduce(&mine, &largest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, file_comm), "MPI_Allreduce");
  f.block_bytes = largest;
  int size = 1;
  MPI_Comm_size(file_comm, &size);
  std::vector<int> node_of(static_cast<size_t>(size));
  check_mpi(MPI_Allgather(&nodes.node, 1, MPI_INT, node_of.data(), 1, MPI_INT, file_comm), "MPI_Allgather");
  std::map<int, int64_t> per_node;
  for (int n : node_of) ++per_node[n];
  f.nodes = static_cast<int64_t>(per_node.size());
  for (const auto& [n, count] : per_node) f.ranks_per_node = std::max(f.ranks_per_node, count);
  return f;
}

RunAdvice advice_for_run(const RunFacts& facts, const Hints& explicit_hints, bool wanted) {
  RunAdvice r;
  r.hints = explicit_hints;
  const auto& known = known_file_systems();
  if (!wanted) {
    r.not_applied_because = "--no-advice";
  } else if (!facts.mpi_io) {
    r.not_applied_because = "backend " + facts.backend + " does not use MPI-IO: it takes no MPI-IO hints";
  } else if (std::find(known.begin(), known.end(), facts.fs_type) == known.end()) {
    r.not_applied_because = "the advisor does not know the file system \"" + facts.fs_type + "\"";
  } else if (facts.block_bytes == 0) {
    r.not_applied_because = "no rank writes any data";
  }
  if (!r.not_applied_because.empty()) return r;

  AdviceInput& in = r.input;
  in.fs_type = facts.fs_type;
  in.nodes = facts.nodes;
  in.ranks_per_node = facts.ranks_per_node;
  in.block_bytes = facts.block_bytes;
  in.variables = facts.variables;
  in.dataset_bytes = facts.dataset_bytes;
  in.files = facts.files;
  // One call for every variable (mpiio-*, pnetcdf's wait_all, the engine) is multi-dataset I/O;
  // with one variable the per-dataset bound is the safer of the two.
  in.strategy = !facts.call_per_variable && facts.variables > 1 ? Strategy::multi_dataset : Strategy::per_dataset;
  r.advice = advise(in);
  if (facts.sizes_own_buffers && !r.advice.striping_applies) {
    // The engine plans one phase for every variable and sizes its own buffers and aggregators;
    // the per-call collective-buffering bounds are for MPI-IO's calls. With striping, the
    // stripe rules (stripe-aligned partitions, buffer = stripe size) are the engine's too.
    r.not_applied_because = "the strata engine sizes its own buffers where the file system has no striping";
    r.hints = explicit_hints;
    return r;
  }
  r.advised = r.advice.hints_for(facts.io_component);
  for (const auto& [k, v] : r.advised) {
    for (const auto& [ek, ev] : explicit_hints) {
      if (ek == k) {
        r.overridden.push_back(k);
        break;
      }
    }
  }
  r.hints = merge_hints(r.advised, explicit_hints);
  r.applied = true;
  return r;
}

nlohmann::json to_json(const RunAdvice& r) {
  nlohmann::json j = {{"applied", r.applied}};
  if (!r.applied) {
    j["not_applied_because"] = r.not_applied_because;
    return j;
  }
  nlohmann::json full = to_json(r.advice, r.input);
  nlohmann::json hints = nlohmann::json::object();
  for (const auto& [k, v] : r.advised) {
    if (std::find(r.overridden.begin(), r.overridden.end(), k) == r.overridden.end()) hints[k] = v;
  }
  j["hints"] = hints;
  j["overridden_by_explicit_hints"] = r.overridden;
  for (const char* key : {"fs_type", "striping_applies", "stripe_count", "stripe_size_bytes", "cb_buffer_size_bytes",
                          "cb_nodes", "lfs_setstripe", "layout", "reasons", "input"}) {
    j[key] = full[key];
  }
  return j;
}

}  // namespace strata::advise
