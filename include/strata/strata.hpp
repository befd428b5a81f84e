// Strata's aggregation engine, C++ API.
//
// A Phase is everything one output (or input) step moves. Each rank declares what it holds —
// per variable, extents (file offset, length, memory) or subarrays of a global array with a
// contiguous or strided memory layout — then plan() (collective) computes the whole phase once:
// file domain, stripe-aligned partitions, one aggregator per partition, rounds of S_buff bytes.
// write() or read() (collective) moves every variable in one pipelined execution: ranks put
// their bytes with MPI one-sided communication into the aggregators' N_buff buffers while the
// previous buffer is written by a background thread. close() (collective) syncs if asked and
// returns statistics. Errors are strata::Error (strata/error.hpp), agreed on every rank.
//
//   strata::Engine engine(MPI_COMM_WORLD);          // once: node map, aggregation buffers
//   strata::Phase phase(engine, "out.dat", strata::PhaseMode::write);
//   int vx = phase.define_variable("vx", sizeof(double), {n_global}, /*file_offset=*/0);
//   phase.add_subarray(vx, {my_start}, {my_count}, vx_data);
//   phase.plan();
//   phase.write();
//   strata::PhaseStats stats = phase.close();
//
// Hints (MPI_Info-style keys): cb_buffer_size (S_buff, default the stripe size when striping_unit
// is given, else 4 MiB), strata_buffers (N_buff, default 2), cb_nodes or strata_aggregators
// (default one per node, and at least striping_factor when given), striping_unit (partition alignment, default the
// file-system block size), strata_subfiling (aggregator: one file per aggregator's partition, or K: one file per K
// partitions — with one aggregator per node, per K nodes; files PATH.subfile.NNNNN),
// strata_direct_threshold (runs whose aligned part reaches this size bypass aggregation
// and go straight to the file from their owner; default S_buff, 0: never), strata_fsync (true:
// sync in close). Tiers and targets (docs/tiers.md): strata_aggr_tier, strata_persistency,
// strata_target=node-local, strata_drain=PATH (docs/drain.md), strata_cost_table, strata_dry_run.
//
// Plan once, write many — the interface the engine (plan reuse) and the drop-in layer
// (src/preload, unmodified MPI-IO programs) agree on:
//  - A phase whose file-side declarations equal an earlier phase's of the same Engine on every
//    rank reuses that plan whole. The key is, per rank, the mode, the parsed hints, the variables
//    and every declared run's file offset and length with its memory layout (element size and
//    stride) — never a memory address: the new phase's buffers are bound to the cached plan — and
//    a read's path. A write reuses a plan made for another file, and one whose runs all lie the
//    same number of bytes further on (or back) on every rank: the next record or time step of a
//    file (PhaseStats::plan_shift; kept aligned on striped file systems). Ranks agree with one
//    reduction inside plan(); PhaseStats::plan_reused says so.
//  - Phase::add_extents declares many runs whose bytes lie back to back in one buffer (a packed
//    MPI-IO request) in one call.
//  - Hint strata_target=in-place writes into an existing file that the caller owns (a program's
//    own MPI-IO file): exactly the declared bytes, nothing else — no partial file, no rename, no
//    index, no truncation, no zero-filled holes or read-modify-write of bytes no rank declared,
//    no extension beyond the last declared byte. Data is on the file when close() returns.
//  - Hint strata_compare_mpiio=true makes plan() also predict MPI-IO's own collective write of
//    the same requests (ROMIO/OMPIO two-phase): PlacementReport::strategies then holds an
//    alternative named "mpi-io" (never chosen) beside the engine's, both whole-phase predictions
//    (plan or its reuse, movement, I/O, commit), the same on every rank, so a caller may decide
//    to pass a call through to MPI-IO without another agreement. A phase planned and then closed
//    without write() writes nothing.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/error.hpp"

namespace strata {

enum class PhaseMode { write, read };

struct PhaseStats {
  double plan_s = 0;         // plan(): summaries, partitions, range exchange, window, file open
  double aggregation_s = 0;  // one-sided puts/gets and the fences between rounds
  double io_s = 0;           // file writes/reads by this rank's I/O thread (aggregators)
  double wait_s = 0;         // waiting for a buffer's I/O to finish before reusing it
  double close_s = 0;        // sync (if asked) and close
  double execute_s = 0;      // write() or read() as a whole
  double commit_s =
      0;  // part of close_s: rank 0's commit (index, intent, renames; after every rank's checksums arrived)
  uint64_t rounds = 0;          // global rounds
  uint64_t bytes = 0;           // bytes this rank declared
  uint64_t direct_bytes = 0;    // of which written or read directly by this rank (large aligned runs)
  uint64_t aggregators = 0;     // aggregators in the phase
  uint64_t fs_requests = 0;     // pwrite/pread calls issued by this rank
  uint64_t buffer_bytes = 0;    // S_buff
  uint64_t buffers = 0;         // N_buff
  bool aggregator = false;      // this rank aggregated
  uint64_t plan_signature = 0;  // a hash of the plan: the same on every rank
  std::string tier;             // the memory tier of this rank's aggregation buffers ("" if not an aggregator)
  uint64_t tier_fallbacks = 0;  // partitions whose cheapest tier lacked capacity, so the next one was taken
  std::string strategy;         // the plan's choice: "direct", "aggregate k=2 S=4 MiB N=2"...
  double predicted_s = 0;       // the prediction of the phase: model_s, its write part times `calibration`
  double model_s = 0;           // the cost model's own: its plan (or reuse) part and its write-and-close part
  double model_write_s = 0;     // of model_s: the write and its close (compare with write_close_s)
  double calibration = 1;       // a write's: this job's earlier such writes, measured over model_write_s (1: none yet)
  uint64_t operations = 0;      // one-sided operations this rank issued (puts or gets; packed runs count once)
  uint64_t collectives = 0;     // collective calls of the phase (the same on every rank): fences included
  double place_s = 0;           // part of plan_s, this rank's: electing the aggregators and their tiers
  double exchange_s = 0;        // part of plan_s, this rank's: telling each aggregator what it receives
  bool plan_reused = false;     // plan() reused an earlier phase's plan (same declarations on every rank)
  int64_t plan_shift = 0;       // bytes the reused plan was moved by (a write of its layout elsewhere)
  double arrival_s = 0;      // part of plan_s, this rank's: waiting in the plan's first agreement for the last rank to
                             // arrive (the application's skew, not the engine's work): the vote on a kept plan, else
                             // the summaries' allgather
  double phase_s = 0;        // plan_s - arrival_s + execute_s + close_s of this rank; in close()'s `max`, the slowest
                             // rank's: the phase's measured time, beside predicted_s
  double write_close_s = 0;  // execute_s + close_s of this rank; in close()'s `max`, the slowest rank's
};

// A burst-buffer write's two moments (hint strata_drain=PATH, docs/drain.md), from
// Phase::wait_drain(): times from the phase's plan() on, the slowest rank's.
struct DrainStats {
  bool drained = false;   // the phase drained to a target (false: no drain, or the fallback below)
  bool fallback = false;  // node-local space was short: the phase wrote the target directly
  std::string target;
  std::string note;      // why the fallback was taken
  double return_s = 0;   // until close() returned: the application could go on
  double durable_s = 0;  // until the target was committed and synced
  double copy_s = 0;     // the copies themselves (the slowest aggregator's)
  uint64_t bytes = 0;    // bytes copied to the target
};

// Where plan() placed the aggregators (the cost model of the aggregation paper, section 4.2):
// per partition the elected rank and tier, and, with hint strata_cost_table=true, on rank 0
// every candidate's costs (C1 aggregation + C2 I/O, seconds; filtered: "capacity" or
// "persistency" when the tier could not be chosen).
struct PlacedPartition {
  uint64_t begin = 0, end = 0;  // file bytes
  int aggregator = -1;
  int node = -1;
  std::string tier;
  double cost_s = 0;
  bool fallback = false;
};
struct PlacementCandidate {
  int partition = 0, rank = 0, node = 0;
  std::string tier;
  double c1_s = 0, c2_s = 0;
  std::string filtered;
};
// Every strategy the plan considered (engine/plan/strategy.hpp): its predicted time and how
// it splits (puts, file I/O, fences and collectives), the chosen one marked.
struct StrategyAlternative {
  std::string name;
  bool direct = false, hybrid = false, chosen = false;
  int aggregators = 0, buffers = 0;
  uint64_t buffer_bytes = 0, rounds = 0;
  double predicted_s = 0, move_s = 0, io_s = 0, sync_s = 0;
  double plan_s = 0;  // of predicted_s: planning (for "mpi-io": flattening, exchanging, sorting the runs)
};
struct PlacementReport {
  std::string machine;      // the machine description's source
  std::string forced_tier;  // STRATA_AGGR_TIER / hint strata_aggr_tier, or ""
  std::vector<PlacedPartition> partitions;
  std::vector<PlacementCandidate> candidates;  // rank 0, with strata_cost_table=true
  uint64_t fallbacks = 0;
  std::vector<StrategyAlternative> strategies;  // every rank
  bool figures_measured = false;                // the machine's I/O figures were probed (else stated defaults)
  bool figures_doubtful = false;                // ... on a busy machine (strata info --tiers says how busy)
};

// The small self-describing index the engine writes beside its output, PATH.strata-index.json:
// the variables, and which file holds which range of the global layout (one shared file, or
// subfiles with hint strata_subfiling). Any number of ranks can read the data back with it.
struct IndexedVariable {
  std::string name;
  size_t element_size = 1;
  std::vector<uint64_t> dims;
  uint64_t file_offset = 0;
};
struct IndexedFile {
  std::string path;                      // as written: relative to the index's folder
  uint64_t begin = 0, end = UINT64_MAX;  // global bytes [begin, end) live at (offset - begin) in this file
  // Committed outputs (index version 2): the file's size and the XXH3-64 of each chunk of
  // OutputIndex::checksum_chunk bytes (the last one shorter); empty in older indexes.
  std::optional<uint64_t> size;
  std::vector<uint64_t> checksums;
  // Index version 3: the XXH3-64 of each range the writers wrote (hashed while in memory),
  // sorted, none crossing a multiple of checksum_chunk; bytes in no range were never written
  // and read as zeros. Used instead of `checksums` when not empty.
  struct Range {
    uint64_t offset = 0, length = 0, hash = 0;
  };
  std::vector<Range> ranges;
  // Bytes inside the ranges that no rank owned (a whole-span write filled them with zeros):
  // (offset, length), sorted and disjoint. A reader at another rank count checks no data there.
  std::vector<std::pair<uint64_t, uint64_t>> holes;
};
struct OutputIndex {
  std::vector<IndexedVariable> variables;
  std::vector<IndexedFile> files;
  uint64_t bytes = 0;  // bytes declared by the writers
  int writer_ranks = 0;
  uint64_t checksum_chunk = 0;   // 0: no checksums (an index written before version 2)
  bool checksum_ranges = false;  // version 3: IndexedFile::ranges, not IndexedFile::checksums
  // Written in place (strata_commit=in-place, an HDF5 container): the ranges' checksums hold, but
  // bytes in no range are not known to be zeros (a container's metadata, a file's earlier bytes).
  bool in_place = false;
};
std::string index_path(const std::string& output);
// Reads PATH.strata-index.json; nothing when there is none; a usage Error when it is malformed.
std::optional<OutputIndex> read_output_index(const std::string& output);
// Reads an index file by its own path (an index, or the intent record of a commit).
std::optional<OutputIndex> read_index_file(const std::string& path);

class PhaseImpl;
class EngineImpl;

// The engine's context on a communicator: the node map, learnt once, and the RMA window of
// aggregation buffers, kept from phase to phase (re-allocated only when a plan needs more).
// Construction and destruction are collective. Phases of one engine run one at a time.
class Engine {
 public:
  explicit Engine(MPI_Comm comm);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  MPI_Comm comm() const;
  // Collective: waits for the drain that this engine's last write phase of `path` started
  // (hint strata_drain), raising its failure on every rank; DrainStats{} when there is none.
  DrainStats wait_drain(const std::string& path);
  // Phases this engine has executed (write() or read() calls that ran), for callers that
  // report how many collective executions an operation took. Local; the same on every rank.
  uint64_t executions() const;

 private:
  friend class PhaseImpl;
  std::unique_ptr<EngineImpl> impl_;
};

class Phase {
 public:
  using Hint = std::pair<std::string, std::string>;
  // Collective over the engine's communicator only at plan(), write()/read() and close().
  Phase(Engine& engine, std::string path, PhaseMode mode, std::vector<Hint> hints = {});
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;
  Phase(Phase&&) noexcept;
  Phase& operator=(Phase&&) noexcept;
  // Collective like the constructor: the next phase of `done` — its engine, path, mode and hints —
  // declaring what it declared: the same variables, and the same runs at the same memory (whose
  // bytes may have changed since). Nothing is declared again and nothing hashed: plan() finds
  // done's plan at the cost of one reduction, as the time step of a simulation writing the same
  // arrays would want. `done` must have written or read and closed without error; it is
  // consumed. A repeated phase accepts no further declarations.
  static Phase repeat(Phase&& done);

  // Defines a variable: every rank defines the same variables in the same order (checked at
  // plan()). `file_offset` is where the variable's row-major global array starts in the file.
  int define_variable(const std::string& name, size_t element_size, std::vector<uint64_t> global_dims,
                      uint64_t file_offset);
  // A run of bytes of variable `var` at absolute file offset `file_offset`; memory is contiguous.
  void add_extent(int var, uint64_t file_offset, uint64_t length, void* memory);
  // Room for `runs` more declared runs, for a caller that declares many one add_extent at a time
  // and knows how many: their list is allocated once (memory a first phase would otherwise grow,
  // copy and fault in several times). Only a hint: declaring more or fewer is correct.
  void reserve(size_t runs);
  // n runs of `var`: run i at file offset offsets[i], lengths[i] bytes; their bytes lie one
  // after another in `memory` (run 0 first). The same as n add_extent calls.
  void add_extents(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, void* memory);
  // n runs of `var` anywhere in memory: run i at file offset offsets[i], lengths[i] bytes at
  // memory[i]. The same as n add_extent calls, checked and appended at once (a decomposition whose
  // memory is not in file order declares hundreds of thousands of runs this way).
  void add_extents_at(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, void* const* memory);
  // Variable `var` declared like `like`, one of this phase's variables whose runs came from a
  // single add_extents or add_extents_at call: the same runs, at the same place within `var`'s
  // bytes (moved by var's file offset less like's), their memory moved by `memory_shift` bytes.
  // What a decomposition's hundreds of variables do (the same map, the next field of the
  // buffer): the runs are neither copied nor sorted again — the plan walks them where `like`'s
  // lie, moved (or, when the variables' order of declaration is not the file's, copies them).
  // `like` may itself be declared like another. A usage error when a moved run falls outside
  // `var`'s bytes.
  void add_extents_like(int var, int like, std::ptrdiff_t memory_shift);
  // A subarray block of `var`. Element i of the block (row-major over `count`) is at
  // memory + i·memory_stride; memory_stride 0 means element_size (contiguous). A stride larger
  // than the element size describes an array of structures.
  void add_subarray(int var, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count, void* memory,
                    size_t memory_stride = 0);

  // The same with raw arrays of as many entries as the variable has dimensions (for the C API).
  void add_subarray(int var, const uint64_t* start, const uint64_t* count, void* memory, size_t memory_stride = 0);

  // Records a declaration problem the caller found in its own checks; plan() raises it on
  // every rank as a usage error, as it does the phase's own (no collective is needed for it).
  void fail(const std::string& message);
  void plan();
  // After plan(): where the aggregators are and on which tier.
  const PlacementReport& placement() const;
  void write();
  void read();
  // Local statistics of this rank; close() also fills the phase-wide maxima in `max`.
  PhaseStats close(PhaseStats* max = nullptr);
  // After close(), collective: with hint strata_drain, waits until the data is durable on the
  // target and returns both moments; a drain's failure is raised on every rank. The next phase
  // of the same output (or target) waits for it anyway, and so does the engine's destruction.
  DrainStats wait_drain();

 private:
  std::unique_ptr<PhaseImpl> impl_;
};

}  // namespace strata
