// The Phase's implementation, shared by the files that hold its steps:
//   phase.cpp        declarations, execution (write or read), close, the public API
//   phase_plan.cpp   the collective plan, as named steps (summaries, strategy, partitions,
//                    placement, range exchange, window, open)
//   phase_files.cpp  the output's files and their names, subfiles, node-local copies, the index
//   commit.cpp       the crash-consistent commit of a write
//   phase_drain.cpp  a burst-buffer write's drain to its target (engine/drain_job.hpp)
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "engine/commit.hpp"
#include "engine/engine_impl.hpp"
#include "engine/move/file_set.hpp"
#include "engine/move/io_worker.hpp"
#include "engine/move/packing.hpp"
#include "engine/move/window.hpp"
#include "engine/output_index.hpp"
#include "engine/phase_options.hpp"
#include "engine/place/tier_hints.hpp"
#include "engine/plan/exchange.hpp"
#include "engine/plan/extents.hpp"
#include "engine/plan/partition.hpp"
#include "engine/plan/piece_views.hpp"
#include "engine/plan/spans.hpp"
#include "engine/plan/strategy.hpp"
#include "engine/plan_cache.hpp"
#include "strata/strata.hpp"

namespace strata {

using namespace engine;

inline constexpr uint64_t kDefaultBuffer = uint64_t{4} << 20;
// A synced write's writeback starts every this many bytes (move/io_worker.hpp). Measured on
// this project's 2-core VM (ext4, 256 MiB, then fsync): one 256 MiB pwrite then fsync took
// 0.16-0.74 s; 8-32 MiB pieces each followed by sync_file_range(WRITE) 0.08-0.15 s, the final
// fsync falling from ~90 ms to 2-20 ms.
inline constexpr uint64_t kWriteBehindBytes = uint64_t{16} << 20;

struct PhaseVariable {
  std::string name;
  size_t element_size;
  std::vector<uint64_t> dims;
  uint64_t file_offset;
  uint64_t bytes() const {
    uint64_t n = element_size;
    for (auto d : dims) n *= d;
    return n;
  }
  uint64_t signature() const {
    uint64_t h = fnv1a(name);
    h = fnv1a(&element_size, sizeof element_size, h);
    for (auto d : dims) h = fnv1a(&d, sizeof d, h);
    return fnv1a(&file_offset, sizeof file_offset, h);
  }
};

struct RankSummary {  // one per rank, allgathered at plan()
  // Declared bytes (extents after coalescing); and the hybrid split: runs whose aligned part is
  // at least the hybrid threshold go direct (d_*), the rest is aggregated (h_*).
  uint64_t lo, hi, bytes, runs;
  uint64_t h_lo, h_hi, h_bytes;
  // Σ over extents of t(start) - t(end), for all declared bytes and for the hybrid's aggregated
  // part: summed over ranks it equals t(lo) - t(hi) exactly when the extents tile [lo, hi)
  // (their boundaries cancel), so tiling is known without exchanging a single range.
  uint64_t tiling, h_tiling;
  uint64_t d_lo, d_hi, d_bytes, d_runs;
  uint64_t variables, signature;
  uint64_t config;  // hash of the parsed hints: must agree
  uint64_t ok;
  // Rank 0's: the file system's block size, whether the write goes straight into the output's
  // files, whether the file system is striped (stripe locks: owners write aligned runs only),
  // whether the write's partial file is the output's previous file (recycled_: cached pages).
  uint64_t fs_block, in_place, striped, recycled;
  uint64_t key;       // this rank's plan key (engine/plan_cache.hpp)
  uint64_t relative;  // the same without its first declared byte
  uint64_t pieces;    // declared pieces (a run over several pieces of memory is one run, several copies)
  uint64_t viewed;    // of them, planned as views (plan/piece_views.hpp): walked, not copied or sorted
};

class PhaseImpl {
 public:
  PhaseImpl(Engine& engine, std::string path, PhaseMode mode, std::vector<Phase::Hint> hints)
      : public_engine_(engine),
        engine_(*engine.impl_),
        comm_(engine_.comm),
        path_(std::move(path)),
        mode_(mode),
        hints_(std::move(hints)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  ~PhaseImpl() {
    io_.reset();
    direct_io_.reset();
  }

  // Phase::repeat: this fresh phase takes `prior`'s declarations (a phase with the same engine,
  // path, mode and hints, closed after a successful write or read): its variables, its pieces
  // in file order with their memory, and the digest of them its plan key used. Local.
  void repeat_of(PhaseImpl& prior);
  Engine& engine() const { return public_engine_; }
  const std::string& path() const { return path_; }
  PhaseMode mode() const { return mode_; }
  const std::vector<Phase::Hint>& hints() const { return hints_; }

  int define_variable(const std::string& name, size_t element_size, std::vector<uint64_t> dims, uint64_t offset);

  void add_extent(int var, uint64_t file_offset, uint64_t length, void* memory);
  // n runs whose bytes lie back to back from `memory` (Phase::add_extents): one variable lookup.
  void add_extents(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, std::byte* memory);
  void add_extents_at(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, void* const* memory);
  void add_extents_like(int var, int like, std::ptrdiff_t memory_shift);
  template <typename MemoryOf>
  void append_extents(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, MemoryOf&& memory_of);

  void add_subarray(int var, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count, void* memory,
                    size_t stride);

  size_t dimensions(int var) const { return variable(var, "add_subarray").dims.size(); }

  template <class F>
  void deferring(F&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      if (!declaration_error_) declaration_error_ = e;
    }
  }

  void plan();
  std::vector<std::pair<const char*, double>> plan_steps_s_;  // a fresh plan's steps, for the debug log
  // Room for n more declared pieces (Phase::add_extents knows how many come; Phase::reserve is
  // told). `exact`: just that room (the caller declares that many and no more).
  void reserve_pieces(size_t n, bool exact = false) {
    if (pieces_.capacity() < pieces_.size() + n)
      pieces_.reserve(exact ? pieces_.size() + n : std::max(pieces_.size() + n, 2 * pieces_.capacity()));
  }

  void plan_steps();
  // The plan's named steps (phase_plan.cpp), in order.
  // Options, rank 0's look at the file, this rank's plan key (key_); then the normalised
  // selection and the summary, unless a cached plan is reused.
  RankSummary local_start(std::optional<Error>& failure);
  uint64_t plan_key(const RankSummary& mine);
  void local_summary(RankSummary& mine, std::optional<Error>& failure);
  // Plan reuse (engine/plan_cache.hpp): the cached plan of the agreed key, the new phase's
  // memory bound to it, its file offsets moved by `shift` bytes (a write of the same layout
  // further on in its file), its strategy priced for this write's file (`recycled`: the
  // output's previous file, rank 0's recycled_).
  void reuse(const CachedPlan& cached, int64_t shift, bool recycled);
  // After reuse(): the plan's file offsets moved by `shift` bytes.
  void shift_plan(int64_t shift);
  void keep_plan(const std::vector<RankSummary>& all, bool defer_open);
  void agree(const std::vector<RankSummary>& all, const std::optional<Error>& failure);
  void choose_strategy_of(const std::vector<RankSummary>& all);
  std::optional<uint64_t> touching_intervals(const std::vector<RankSummary>& all, const engine::StrategyInput& in);
  void partition(const std::vector<RankSummary>& all);
  void choose_phase_files();
  std::vector<ReceivedRange> direct_runs_to_know(const std::vector<RankSummary>& all);
  ReceivedRanges ranges_to_receive(const std::vector<RankSummary>& all);
  std::vector<uint64_t> window_needs() const;
  std::vector<int> window_tiers() const;
  SpanPolicy span_policy() const;
  void log_plan() const;
  void remove_stale_index() const;
  uint64_t hybrid_unit() const;
  uint64_t hybrid_threshold() const;
  // The plan's last steps, fresh or reused: the window, opening the files (agreed, or
  // deferred to close when `defer`), the statistics. A fresh plan computes the rounds' file
  // I/O there (`direct_all`, `received`: null when reused).
  void open_and_finish(double t0, bool defer, const std::vector<ReceivedRange>* direct_all,
                       const ReceivedRanges* received);
  const std::vector<RoundIo>& round_io() const {
    static const std::vector<RoundIo> none;
    return round_io_ ? *round_io_ : none;
  }

  void execute(PhaseMode mode);

  PhaseStats close(PhaseStats* max);

  PhaseStats close_steps(PhaseStats* max);

 private:
  enum class State { declaring, planned, done, closed, failed };

  void require_state(State s, const char* what) const;

  const PhaseVariable& variable(int var, const char* what) const;

  // The variable whose bytes hold a file offset (the first defined, for errors).
  std::string name_at(uint64_t offset) const;

  // Every rank's direct runs, for every rank (MPI_Allgatherv; called only when some exist).
  std::vector<ReceivedRange> gather_direct_runs(const std::vector<uint64_t>& runs_of_rank);

  // Direct runs must overlap neither each other nor aggregated bytes: rank 0 checks direct
  // against direct, each aggregator checks them against the ranges it receives. Local part of
  // a collective step.
  void check_direct_overlaps(const std::vector<ReceivedRange>& direct, const ReceivedRanges& received) const;

  bool need_stream() const;
  // A copied write whose every piece is contiguous memory (and whose direct runs have theirs):
  // each run is copied from the caller's memory into its aggregator's shared buffer, no stream.
  bool copies_from_memory() const;
  // Whether every declared piece is contiguous memory (no stride): walked once, then known.
  bool pieces_contiguous() const;
  // Whether every direct run's bytes lie in declared contiguous memory (one piece or several).
  bool direct_runs_have_memory() const;

  // The I/O threads' first failure, if any, as an Error. Local part of a collective step.
  void raise_io_errors() const;

  // fsync of every file of the phase that exists, by one rank of each node.
  void sync_files_of_node() const;
  // Whether close() fsyncs the written data (strata_fsync, or a sync commit).
  bool syncs_data() const { return options_.fsync || (commit_ && options_.commit == PhaseOptions::Commit::sync); }

  // The caller's memory for file bytes [offset, offset + length) when one contiguous piece
  // holds them all, else null.
  std::byte* contiguous_memory(uint64_t offset, uint64_t length) const;
  std::vector<std::pair<std::byte*, uint64_t>> gathered_memory(uint64_t offset, uint64_t length) const;

  // True when the ranks' bytes (or the hybrid's aggregated bytes) tile their domain: every
  // byte declared exactly once, no hole (the summaries' byte counts and tiling sums tell; a
  // 64-bit keyed hash, so a false answer has odds of 2^-64). Same answer on every rank.
  bool dense_and_tiled(const std::vector<RankSummary>& all, bool hybrid) const;

  // A hash of the plan, to check it is the same on every rank.
  uint64_t plan_signature() const;

  // Splits sel_ into direct runs and the aggregated rest. A run goes direct when its part
  // aligned to the partition unit is at least the threshold (default S_buff, or 4 MiB when no
  // buffer size is given); hint strata_direct_threshold=0 turns direct runs off.
  void split_direct();
  bool owners_write_node_files(const std::vector<RankSummary>& all);
  void hand_runs_to_owners();
  void start_node_file();
  void size_node_file(const SubFile& f) const;
  void prepare_drain_target();
  void follow_with_drain(const SubFile& mine);

  // Every rank must define the same variables in the same order.
  void check_variables();

  // The files of the phase: written, one shared file or one per group of partitions; read,
  // what the output's index lists (or the one file). Local part of a collective step.
  FileSet choose_files(std::vector<SubFile> listed);

  // Rank 0's list of files, for every rank (an empty list means the one file at path_).
  std::vector<SubFile> share_from_rank0(std::vector<SubFile> files);

  // Opens the files this rank touches: its aggregation runs and direct runs; rank 0 also opens
  // a single shared file so that it exists (write) or is checked (read). Local part of a
  // collective step.
  void open_file();

  // Rank 0, after a write: subfiles cut to their final size (no stale tail from an older,
  // larger output) and the index. Local part of a collective step.
  void finish_output();
  // A write in place of an output of ours (strata_commit=in-place, an HDF5 container, a file that
  // is not regular): not committed, but its index keeps the checksums of the ranges written, so
  // strata verify checks its data. Not the caller's own file (strata_target=in-place: no index),
  // node-local copies, a drain's or a dry run's.
  bool indexes_in_place() const {
    return mode_ == PhaseMode::write && !commit_ && !options_.tiers.in_place && !options_.tiers.node_local &&
           !options_.tiers.dry_run && !drain_;
  }
  // Every rank's written ranges and their hashes gathered to rank 0 (in_place_hashes_). Collective.
  void gather_written_hashes();

  // The index of what this phase wrote, without sizes and checksums. Files are named by their
  // final names, relative to the index's folder.
  OutputIndex make_index() const;

  // Every listed subfile exists (one no aggregator wrote is created empty) at its size, which
  // it returns; with `sync`, a subfile whose size changed is fsynced. Rank 0.
  uint64_t size_subfile(const SubFile& f, bool sync) const;
  // The end of the declared variables in the output's address space: the file's size, whatever
  // bytes the ranks wrote (trailing elements no rank owns are part of it, as zeros).
  uint64_t declared_end() const;
  void extend_in_place() const;

  // Rank 0, before the plan's agreement: whether this phase commits (engine/commit.hpp). A
  // commit interrupted after its intent record is completed first (a read then sees it, a
  // write replaces it); a write removes the partial files a killed write left. Files that are
  // not regular (a device) and node-local targets are written in place.
  bool prepare_commit();

  // Rank 0, after an agreed failure or a phase closed unwritten: the partial files go, unless
  // a commit record names them (a commit that failed half-way rolls forward instead).
  void discard_partials() const;

  // The close's statistics as one array (the failing rank's code first, then the times the
  // close reduces by maximum, then the counts it sums): kStats doubles.
  static constexpr int kStats = 14;
  void stats_array(const std::optional<Error>& failure, double* d) const;

  // After a write: the partial files synced once per node (unless strata_commit=nosync), every
  // rank's checksums and statistics sent to rank 0, which commits when every part went well
  // and broadcasts the reduced statistics and the outcome into `reduced`. Collective: the
  // close's one agreement. Sets close_s (and rank 0's commit_s).
  void commit_written(std::optional<Error>& failure, double t0, double* reduced);
  void commit_index(const std::vector<uint64_t>& hashes, bool sync) const;
  uint64_t clear_unwritten(const std::string& path, const std::vector<IndexedFile::Range>& ranges, uint64_t end,
                           bool sync) const;

  // ---- Tiers (engine/place/, arch/memory_tier, arch/machine) ---------------------------------

  // The output whose index describes what this phase writes or reads: the node-local copy's
  // with strata_target=node-local, else the output's.
  std::string index_output() const { return options_.tiers.node_local ? node_local_output(path_) : path_; }

  // Elects each partition's aggregator and tier (collective) and records the report.
  void place_on_tiers();

  // A write to node-local storage: one file per partition, in its aggregator's node directory.
  FileSet node_local_files();

  // ---- Drains (hint strata_drain, engine/drain_job.hpp; phase_drain.cpp) ----------------------
  // At plan(), collective: waits for this engine's drains that this phase reads or replaces;
  // a read with a drain target reads the target; a write checks node-local space (one
  // reduction), falling back to writing the target directly when it is short.
  void resolve_drain();
  // At close, collective (drain phases only): the node files' sizes to rank 0, which clears an
  // earlier drain's leftovers and writes the drain record. Returns this rank's failure.
  std::optional<Error> record_drain();
  // After the close's agreement: the drain starts (aggregators' threads), kept by the engine.
  void start_drain();

 public:
  DrainStats wait_drain();

 private:
 public:
  const PlacementReport& placement() const;

 private:
  // ---- end of tiers ----

  Engine& public_engine_;
  EngineImpl& engine_;
  MPI_Comm comm_;
  std::string path_;
  PhaseMode mode_;
  std::vector<Phase::Hint> hints_;
  int rank_ = 0, size_ = 1;
  State state_ = State::declaring;
  std::vector<PhaseVariable> vars_;
  std::unordered_set<std::string> var_names_;  // of vars_
  std::vector<Piece> pieces_;
  // Each variable's pieces, while they are one block of pieces_ ([begin, end); kMixed: not one
  // block; kLike: declared by like_blocks_[end] alone), for add_extents_like; and whether any
  // piece has a memory stride.
  static constexpr size_t kMixed = SIZE_MAX, kLike = SIZE_MAX - 1;
  std::vector<std::pair<size_t, size_t>> var_pieces_;
  bool strided_ = false;
  // The variables declared like another's runs (add_extents_like): not copied into pieces_ but
  // kept as which pieces they repeat (pieces_ [begin, end), moved by `shift` in the file and
  // `memory` in memory), where they sit in declaration order (before pieces_[at]). The plan key
  // hashes which variable copies which; the plan views them where they lie (plan/piece_views.hpp)
  // or, when it cannot, materialize() copies them in.
  struct LikeBlock {
    size_t at, begin, end;
    uint64_t shift;
    std::ptrdiff_t memory;
    int var, like;
    uint64_t lo, hi, bytes;  // moved ([lo, hi) empty when no byte)
  };
  std::vector<LikeBlock> like_blocks_;
  size_t like_pieces_ = 0;  // the like blocks' pieces, in all
  // What a block of pieces_ is, for the like blocks that repeat it (computed once a block).
  struct LikeSource {
    size_t begin = 0, end = 0;
    uint64_t lo = UINT64_MAX, hi = 0, bytes = 0;
    bool sorted = true;  // non-empty, in file order, disjoint
  };
  std::vector<LikeSource> like_sources_;
  const LikeSource& like_source(size_t begin, size_t end);
  // The like blocks copied into pieces_, in declaration order (as add_extents_like once did).
  void materialize();
  // The declared pieces as the selection's views (views_), when every like block and every run
  // of explicit pieces between them is in file order and they follow one another in the file
  // (the order of declaration is the file's: normalise() would keep it). False: nothing done.
  bool view_selection();
  // The viewed selection made one array (sel_.pieces), for what needs it.
  void flatten_selection();
  PieceViews views_;
  bool viewed_ = false;  // sel_'s pieces are views_ (sel_.pieces empty)
  void declared(int var, size_t begin);
  uint64_t declared_lo_ = UINT64_MAX;  // the lowest file offset of a non-empty piece declared (as CachedPlan::kNoBase)
  std::optional<Error> declaration_error_;
  std::optional<Error> deferred_error_;  // this rank's plan failure, agreed at close (a direct committed write)
  Selection sel_;
  Selection agg_;  // the aggregated part of sel_ (extents only)
  // The selection's extents are made from its pieces when a step first needs them (extents()):
  // a copied write of a real map never does. `agg_all_`: every byte aggregated, agg_'s extents
  // are the selection's, made when a step needs them (aggregated()).
  bool extents_pending_ = false;
  bool agg_all_ = false;
  const std::vector<StreamExtent>& extents();
  const Selection& aggregated();
  std::vector<StreamExtent> direct_;  // runs this rank writes or reads itself
  Plan plan_;
  int my_partition_ = -1;
  std::shared_ptr<const std::vector<RoundIo>> round_io_;  // aggregators: each round's file I/O
  std::shared_ptr<const PackedTransfers> transfers_;      // this rank's puts (gets), per global round
  std::vector<uint32_t> order_;  // normalise()'s order of the declared pieces (plan reuse binds memory by it)
  uint64_t key_ = 0;             // this rank's plan key
  uint64_t relative_key_ = 0;    // the same without its first declared byte (engine/plan_cache.hpp)
  uint64_t pieces_digest_ = 0;   // the hash of the declared pieces (memory excepted, from pieces_base_)
  uint64_t pieces_base_ = CachedPlan::kNoBase;  // this rank's first declared byte (kNoBase: none)
  uint64_t agreed_relative_ = 0;                // every rank's relative key, combined
  bool repeated_ = false;                       // declared by repeat_of(): sel_ holds the pieces, in file order
  bool closed_ok_ = false;                      // closed after a successful write or read: repeat_of() may take it
  uint64_t agreed_key_ = 0;                     // every rank's, combined (the cache's key)
  bool copy_ = false;  // runs copied into a shared window (Alternative::copied, every tier dram)
  // What the copied movement reads, kept with the pieces (repeat_of() takes them): whether every
  // piece is contiguous memory (once known), and the runs with their memory found for the
  // transfers `program_for_` (a copy program: built by a repeated phase, engine/move/packing.hpp).
  mutable std::optional<bool> pieces_contiguous_;
  std::shared_ptr<const PackedTransfers> program_for_;
  CopyProgram program_;
  bool repeats_ = false;           // made by Phase::repeat (repeated_ is cleared by the plan)
  bool owners_local_ = false;      // a node-local write whose owners write their node's partition files: no rounds
  bool node_local_tiled_ = false;  // a node-local write whose bytes tile the domain: its files are rewritten in place
  bool sole_owner_ = false;        // owners_local_: this rank aggregates a partition no other rank writes
  bool defer_open_ = false;        // the plan's files are opened without an agreement (a committed direct write)
  StrategyChoice strategy_;
  Window* window_ = nullptr;  // the engine's
  FileSet files_;
  uint64_t declared_bytes_ = 0;
  uint64_t direct_candidates_ = 0;  // this rank's runs long enough to go direct in a hybrid (its summary's d_runs)
  // Staged writes at an aggregator: its round buffers (N_buff x S_buff), written by io_ (so
  // declared before it: io_ is joined first).
  ByteBuffer placed_;
  std::unique_ptr<IoWorker> io_;             // aggregation rounds (aggregators)
  std::unique_ptr<IoWorker> direct_io_;      // direct runs
  ByteBuffer stream_;                        // this rank's bytes in file order, when needed
  bool commit_ = false;                      // written to partial files, committed at close (engine/commit.hpp)
  bool clean_ = false;                       // rank 0: the output is one this engine left clean (EngineImpl::clean)
  EngineImpl::CleanOutput fs_;               // rank 0: the output folder's block size and striping
  bool calibrated_ = false;                  // a write predicted at the job's measured ratio: observed at close
  bool recycled_ = false;                    // rank 0: the partial file is the previous output's old file
  std::vector<WrittenHash> written_hashes_;  // what this rank's I/O threads wrote, hashed
  std::vector<uint64_t> in_place_hashes_;    // rank 0, indexes_in_place(): every rank's (file, offset, length, hash)
  PhaseStats stats_;
  PhaseOptions options_;  // from the hints (engine/phase_options.hpp), completed by the plan
  std::vector<Tier> tier_of_partition_;
  PlacementReport placement_;
  std::shared_ptr<engine::DrainJob> drain_;  // a write with a drain target (or its fallback)
  size_t drain_group_ = 0;                   // the target's subfile group (strata_subfiling), 0: one file
};

}  // namespace strata
