// The phase's strategy, chosen by cost: from a few numbers per rank (what the plan's one
// allgather carries) and the machine's measured figures (arch/io_figures.hpp), predict the time
// of every alternative the engine can run and take the cheapest:
//   direct          every rank writes (reads) its own runs, no aggregation: no fences, no puts;
//   aggregate k S N k aggregators, S_buff = S, N_buff = N, every byte through them;
//   ... + direct    the same with runs whose aligned part is at least the hybrid threshold
//                   written by their owners beside the rounds.
// Hints fix any dimension (strata_strategy, cb_nodes, cb_buffer_size, strata_buffers,
// strata_direct_threshold): the model then chooses only among what is left. This is the
// aggregation paper's cost model (section 4.2) applied to the whole strategy, not only to
// where aggregators go. Pure: no MPI, unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/io_figures.hpp"

namespace strata::engine {

struct RankShape {
  uint64_t lo = 0, hi = 0;  // first and one-past-last declared byte (0, 0 when none)
  uint64_t bytes = 0;       // declared bytes
  uint64_t runs = 0;        // coalesced extents
  uint64_t big_bytes = 0;   // bytes in the aligned parts of runs at least the hybrid threshold
  uint64_t big_runs = 0;    // such runs
  uint64_t pieces = 0;      // declared pieces of memory: a run over several is copied piece by piece
  uint64_t viewed = 0;      // of them, planned as views (engine/plan/piece_views.hpp): walked, not copied
};

struct StrategyInput {
  std::vector<RankShape> ranks;
  int nodes = 1;
  int cores_per_node = 1;  // I/O threads and copies that can run at once on a node
  uint64_t align = 4096;   // partition unit
  bool write = true;
  bool whole_spans = true;     // a round may be written as whole spans (a new file, or a read)
  bool sieve_allowed = true;   // else in place: runs only, no read-modify-write (strata_target=in-place)
  bool direct_allowed = true;  // owners may write unaligned runs themselves (no stripe locks, no subfiles)
  bool aggregate_allowed = true;
  bool dense = false;  // the ranks' bytes tile the domain: no range exchange
  // The contiguous intervals all ranks' runs make together (plan/run_sketch.hpp), when estimated:
  // what the aggregators write run by run where no whole span may be written (in place). Absent:
  // as many as the runs.
  std::optional<uint64_t> intervals;
  bool commit = false;  // a committed write: index, intent record and renames at close
  // The write goes into the output's previous file, recycled as its partial file (engine/commit.cpp):
  // its requests rewrite cached pages, priced by IoFigures::rewrite rather than IoFigures::write.
  bool recycled = false;
  uint64_t hybrid_threshold = 0;  // the threshold big_* were counted at (0: no hybrid)
  // Fixed by hints (unset: the model chooses).
  std::optional<int> aggregators;
  std::optional<uint64_t> buffer_bytes;
  std::optional<int> buffers;
  bool force_direct = false, force_aggregate = false;
  bool hybrid_forced_off = false;  // strata_direct_threshold=0
  bool hybrid_forced_on = false;   // strata_direct_threshold given
  bool pack = true;                // puts of many runs packed into one (strata_pack)
  // A write's short runs staged (strata_stage): each rank puts its round's bytes as they lie in its
  // stream, with a list of where each run goes, and the aggregator places them (move/packing.hpp).
  bool stage = false;         // allowed: a write whose rounds fit the lists' 32-bit places
  bool stage_forced = false;  // strata_stage=true: aggregation only staged
  // Every rank on one node's shared memory (engine/move/window.hpp): an unstaged write's runs are
  // copied by their owners straight into the aggregators' buffers, a read's out of them.
  bool shared_copy = false;
  // Of a shared window (shared_copy): the smallest segment the engine keeps from earlier phases
  // (0: none yet). A copied write into a larger one maps each page it copies to for the first
  // time (a page fault per page per rank), into this one it does not.
  uint64_t window_kept = 0;
  // The writes go into one file of a node-local kernel file system (ext4, xfs, tmpfs...): its
  // buffered writes take the file's lock, so one node's writers take turns (they add up rather
  // than share the cores); a striped parallel file system (Lustre, GPFS...) or a file per
  // aggregator lets them run at once.
  bool one_file_lock = true;
  // strata_compare_mpiio: also predict MPI-IO's own collective write of the same requests
  // (alternative "mpi-io", never chosen): ROMIO's or OMPIO's two-phase, with their defaults
  // unless the hints set cb_buffer_size / cb_nodes.
  bool compare_mpiio = false;
  bool mpiio_romio = false;
  std::optional<uint64_t> mpiio_buffer;
  std::optional<int> mpiio_aggregators;
};

struct Alternative {
  std::string name;
  bool direct = false;  // every byte by its owner
  int aggregators = 0;
  uint64_t buffer_bytes = 0;
  int buffers = 0;
  bool hybrid = false;  // large aligned runs direct beside the rounds
  bool staged = false;  // runs placed by their aggregator from each rank's stream slice and run list
  bool copied = false;  // runs copied by their owners into shared buffers (StrategyInput::shared_copy)
  uint64_t rounds = 0;
  double predicted_s = 0;
  double move_s = 0, io_s = 0, sync_s = 0;  // puts, file I/O, fences and collectives (predicted)
  double plan_s = 0;   // of predicted_s: planning (MPI-IO: flattening, exchanging and sorting the runs)
  double reuse_s = 0;  // what replaces plan_s when the plan is reused (its per-run part: reused_prediction)
  // A copied write (of plan_s): finding its runs' memory as it copies them (find_s: a phase that
  // keeps no copy program), or finding and keeping them (keep_s: a repeated phase's first
  // execution; its next ones copy by the program and pay neither).
  double find_s = 0, keep_s = 0;
  // Of move_s: a copied phase's first touches of a window the engine did not keep yet (not paid
  // again when the plan is reused: its window is kept).
  double touch_s = 0;
  bool mpiio = false;  // MPI-IO's own collective write (strata_compare_mpiio): never chosen
};

// MPI-IO's collective write of the same requests (engine/plan/strategy.cpp explains the
// model; docs/engine.md its calibration). Deterministic like choose_strategy.
Alternative predict_mpiio(const StrategyInput& in, const IoFigures& f);
// An alternative's prediction when its plan is reused: the plan's per-run work replaced by
// the one reduction that finds it, and what a phase declared again does per run (hashing its
// declarations, binding their memory) — nothing for a repeated phase (Phase::repeat), which
// declares nothing. A copied write finds its runs' memory again (find_s), unless it repeats a
// phase: then it keeps them (keep_s), or copies by the program kept (`program_kept`); its
// window is the one kept (no touch_s).
double reused_prediction(const Alternative& a, const IoFigures& f, int ranks, bool repeated, bool program_kept);
// A prediction in its two parts: the plan, or the reduction and declarations that replace it when
// it is reused (`reused`; then `repeated` and `program_kept` as for reused_prediction), and the
// write with its close — a copied write's finding (or keeping) of its runs' memory among the
// latter, as it happens while the runs are copied. The write's part is what the job's measured
// ratio applies to (engine/plan/write_calibration.hpp).
struct PredictionParts {
  double plan_s = 0;
  double write_s = 0;
};
PredictionParts prediction_parts(const Alternative& a, const IoFigures& f, int ranks, bool reused, bool repeated,
                                 bool program_kept);

struct StrategyChoice {
  std::vector<Alternative> alternatives;  // every candidate, in the order considered
  size_t chosen = 0;
  StrategyInput input;  // what they were priced from
  const Alternative& best() const { return alternatives[chosen]; }
};

// Deterministic: every rank computes the same choice from the same inputs.
StrategyChoice choose_strategy(const StrategyInput& in, const IoFigures& f);
// A kept choice priced again for a write whose file is (or is not) recycled, the alternative
// chosen kept (a reused plan runs it whatever the prices): the write after next of an output
// reuses the plan of the write before it, which went to new pages.
StrategyChoice repriced(const StrategyChoice& c, bool recycled, const IoFigures& f);

}  // namespace strata::engine
