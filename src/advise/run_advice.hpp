// The advice strata run applies: the same rules as strata advise, fed with what the run knows
// (file system of the output, nodes and ranks sharing the file, bytes per write call), merged
// under the explicit hints (--hints, STRATA_HINTS), which win key by key.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advise/advice.hpp"
#include "arch/node_map.hpp"
#include "common/hints.hpp"

namespace strata::advise {

// What the rules need to know about a run.
struct RunFacts {
  std::string backend;             // its name, for the reasons; what it does is below (its BackendCapabilities)
  bool mpi_io = true;              // it goes through MPI-IO (posix does not: no hints to give)
  bool call_per_variable = false;  // one collective call per variable (per-dataset I/O)
  bool sizes_own_buffers = false;  // it plans its own aggregation (the engine)
  std::string io_component;        // "romio" or "ompio"
  std::string fs_type;             // of the output
  int64_t nodes = 1;               // nodes holding ranks that share one file
  int64_t ranks_per_node = 1;
  uint64_t block_bytes = 0;  // largest bytes a rank passes to one write call
  int64_t variables = 1;
  uint64_t dataset_bytes = 0;  // the largest variable's global size
  int64_t files = 1;           // files of the target
};

struct RunAdvice {
  bool applied = false;
  std::string not_applied_because;  // when not applied
  AdviceInput input;
  Advice advice;
  Hints advised;                        // the component's advised keys
  std::vector<std::string> overridden;  // advised keys an explicit hint replaced
  Hints hints;                          // what the run asks for: advice under the explicit hints
};

// Collective over `file_comm` (the ranks sharing this rank's file): counts their nodes and
// takes the largest write call. `local_bytes` is this rank's data; `transfer_bytes` the
// largest request per call (0 = one call).
// `facts` holds the backend's part (backend, mpi_io, call_per_variable, sizes_own_buffers) and
// io_component, fs_type, variables, dataset_bytes and files; this fills nodes, ranks_per_node
// and block_bytes.
RunFacts run_facts(MPI_Comm file_comm, const NodeMap& nodes, uint64_t local_bytes, uint64_t transfer_bytes,
                   RunFacts facts);

// Pure: the advice for a run, or why there is none (--no-advice, posix, a file system the
// advisor does not know), merged under `explicit_hints`.
RunAdvice advice_for_run(const RunFacts& facts, const Hints& explicit_hints, bool wanted);

// {"applied", "not_applied_because", "hints" (applied), "overridden_by_explicit_hints",
//  "stripe_count", ..., "reasons", "input"}: the record's "advice" object.
nlohmann::json to_json(const RunAdvice& r);

}  // namespace strata::advise
