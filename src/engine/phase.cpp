// The Phase: declarations, the collective plan, one pipelined execution, statistics.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "arch/machine.hpp"
#include "arch/node_local.hpp"
#include "arch/node_map.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/move/drain.hpp"
#include "engine/move/file_set.hpp"
#include "engine/move/io_worker.hpp"
#include "engine/commit.hpp"
#include "engine/output_index.hpp"
#include "engine/move/mover.hpp"
#include "engine/move/window.hpp"
#include "engine/plan/exchange.hpp"
#include "engine/plan/extents.hpp"
#include "engine/place/placement.hpp"
#include "engine/place/tier_hints.hpp"
#include "engine/plan/partition.hpp"
#include "fs/fs_info.hpp"
#include "strata/strata.hpp"

namespace strata {

using namespace engine;

namespace {

constexpr uint64_t kMinBuffer = 4096;
constexpr uint64_t kMaxBuffer = uint64_t{1} << 30;
constexpr uint64_t kDefaultBuffer = uint64_t{4} << 20;

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xCBF29CE484222325ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ULL;
  }
  return h;
}

struct Variable {
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
    uint64_t h = fnv1a(name.data(), name.size());
    h = fnv1a(&element_size, sizeof element_size, h);
    for (auto d : dims) h = fnv1a(&d, sizeof d, h);
    return fnv1a(&file_offset, sizeof file_offset, h);
  }
};

struct Config {
  uint64_t buffer_bytes = 0;  // 0: default
  int buffers = 2;
  int aggregators = 0;
  uint64_t align = 0;  // 0: file-system block size
  bool fsync = false;
  std::optional<uint64_t> direct_threshold;  // unset: S_buff
  uint64_t subfile_group = 0;                // partitions per subfile; 0: one shared file
  int stripe_count = 0;                      // striping_factor: aggregators at least this many
  // strata_commit: how a write becomes the output (engine/commit.hpp). sync: partial files,
  // synced, then committed; nosync: the same without the data fsync (the default; strata_fsync
  // makes it sync, as durability is what that hint asks for); in_place: straight into the
  // output's files (the old index removed at plan time), for files other tools also write.
  enum class Commit { sync, nosync, in_place } commit = Commit::nosync;
  uint64_t checksum_chunk = kChecksumChunk;  // strata_checksum_chunk: bytes per checksum in the index
};

Config parse_hints(const std::vector<Phase::Hint>& hints) {
  Config c;
  for (const auto& [k, v] : hints) {
    if (k == "cb_buffer_size") {
      c.buffer_bytes = parse_size(v, "hint cb_buffer_size");
      if (c.buffer_bytes < kMinBuffer) {
        throw_usage("hint cb_buffer_size=" + v + " is below the 4 KiB minimum of an aggregation buffer");
      }
      if (c.buffer_bytes > kMaxBuffer) throw_usage("hint cb_buffer_size=" + v + " is above the 1 GiB maximum");
    } else if (k == "strata_buffers") {
      const uint64_t n = parse_count(v, "hint strata_buffers");
      if (n < 1 || n > 64) throw_usage("hint strata_buffers=" + v + " must be between 1 and 64 (N_buff)");
      c.buffers = static_cast<int>(n);
    } else if (k == "cb_nodes" || k == "strata_aggregators") {
      const uint64_t n = parse_count(v, "hint " + k);
      if (n < 1) throw_usage("hint " + k + "=" + v + " must be at least 1");
      c.aggregators = static_cast<int>(std::min<uint64_t>(n, 1 << 20));
    } else if (k == "striping_unit") {
      c.align = parse_size(v, "hint striping_unit");
      if (c.align == 0 || c.align > kMaxBuffer) throw_usage("hint striping_unit must be between 1 byte and 1 GiB");
    } else if (k == "strata_direct_threshold") {
      c.direct_threshold = parse_size(v, "hint strata_direct_threshold");
    } else if (k == "striping_factor") {
      c.stripe_count = static_cast<int>(std::min<uint64_t>(parse_count(v, "hint striping_factor"), 1 << 20));
    } else if (k == "strata_subfiling") {
      if (v == "aggregator") {
        c.subfile_group = 1;
      } else {
        c.subfile_group = parse_count(v, "hint strata_subfiling");
        if (c.subfile_group == 0) throw_usage("hint strata_subfiling must be \"aggregator\" or a count of at least 1");
      }
    } else if (k == "strata_fsync") {
      c.fsync = v == "true" || v == "1" || v == "enable";
    } else if (k == "strata_checksum_chunk") {
      c.checksum_chunk = parse_size(v, "hint strata_checksum_chunk");
      if (c.checksum_chunk < kMinBuffer || c.checksum_chunk > kMaxBuffer) {
        throw_usage("hint strata_checksum_chunk=" + v + " must be between 4 KiB and 1 GiB");
      }
    } else if (k == "strata_commit") {
      if (v == "sync") {
        c.commit = Config::Commit::sync;
      } else if (v == "nosync") {
        c.commit = Config::Commit::nosync;
      } else if (v == "in-place") {
        c.commit = Config::Commit::in_place;
      } else {
        throw_usage("hint strata_commit=" + v + " must be sync, nosync or in-place");
      }
    }
  }
  return c;
}

struct Summary {  // one per rank, allgathered at plan()
  uint64_t lo, hi, bytes, variables, signature, fs_block;
  uint64_t declared;  // all bytes, direct ones included
  uint64_t direct;    // direct runs
  uint64_t config;    // hash of the parsed hints: must agree
  uint64_t ok;
  uint64_t in_place;  // rank 0's: the write goes straight into the output's files
};

uint64_t config_hash(const Config& c) {
  uint64_t v[10] = {c.buffer_bytes, static_cast<uint64_t>(c.buffers), static_cast<uint64_t>(c.aggregators), c.align,
                   c.fsync ? 1u : 0u, c.direct_threshold.value_or(UINT64_MAX), c.subfile_group,
                   static_cast<uint64_t>(c.stripe_count), static_cast<uint64_t>(c.commit), c.checksum_chunk};
  return fnv1a(v, sizeof v);
}

}  // namespace

class EngineImpl {
 public:
  // The engine works on its own duplicate of the communicator, so its collectives never mix
  // with the application's.
  explicit EngineImpl(MPI_Comm user) : comm(duplicate(user)), nodes(node_map(comm)) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    window_bytes.assign(static_cast<size_t>(size), 0);
    window_tier.assign(static_cast<size_t>(size), static_cast<int>(Tier::dram));
  }
  ~EngineImpl() {
    window.free();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  static MPI_Comm duplicate(MPI_Comm user) {
    MPI_Comm c = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(user, &c), "MPI_Comm_dup");
    return c;
  }

  // The window, large enough for `needed[r]` bytes on every rank r, on tier `tier_of[r]` of
  // each aggregator. Every rank decides the same way (all know `needed` and the tiers from the
  // plan and the current window), so reallocation is collective exactly when needed.
  Window& window_for(const std::vector<uint64_t>& needed, const std::vector<int>& tier_of, int rank) {
    bool fits = window.get() != MPI_WIN_NULL;
    for (size_t r = 0; r < needed.size() && fits; ++r) {
      fits = window_bytes[r] >= needed[r] && (needed[r] == 0 || window_tier[r] == tier_of[r]);
    }
    if (!fits) {
      window.free();
      const bool same_tiers = window_tier == tier_of;
      bool all_dram = true;
      for (size_t r = 0; r < needed.size(); ++r) {
        window_bytes[r] = same_tiers ? std::max(window_bytes[r], needed[r]) : needed[r];
        if (window_bytes[r] > 0 && tier_of[r] != static_cast<int>(Tier::dram)) all_dram = false;
      }
      window_tier = tier_of;
      const uint64_t mine = window_bytes[static_cast<size_t>(rank)];
      if (all_dram) {
        window = Window(comm, mine);  // MPI's memory: shared memory within a node
      } else {
        std::unique_ptr<TierMemory> memory;
        collectively(comm, [&] {
          if (mine > 0) memory = tier(static_cast<Tier>(tier_of[static_cast<size_t>(rank)])).allocate(mine);
        });
        window = Window(comm, std::move(memory));
      }
    }
    return window;
  }

  // The machine description and this node's tiers, at first use (collective).
  const Machine& machine_once() {
    if (!machine) {
      machine = load_machine(comm, nodes.node);
      for (Tier t : all_tiers()) {
        const TierFigures* f = machine->tier(t);
        tiers.push_back(make_memory_tier(t, f != nullptr ? *f : TierFigures{}, nodes.node));
      }
    }
    return *machine;
  }
  const MemoryTier& tier(Tier t) const { return *tiers[static_cast<size_t>(t)]; }

  MPI_Comm comm;
  NodeMap nodes;
  Window window;
  std::vector<uint64_t> window_bytes;  // every rank's window size
  std::vector<int> window_tier;        // every rank's window tier
  std::optional<Machine> machine;
  std::vector<std::unique_ptr<MemoryTier>> tiers;  // this node's, indexed by Tier
};

Engine::Engine(MPI_Comm comm) : impl_(std::make_unique<EngineImpl>(comm)) {}
Engine::~Engine() = default;
MPI_Comm Engine::comm() const { return impl_->comm; }

class PhaseImpl {
 public:
  PhaseImpl(Engine& engine, std::string path, PhaseMode mode, std::vector<Phase::Hint> hints)
      : engine_(*engine.impl_), comm_(engine_.comm), path_(std::move(path)), mode_(mode), hints_(std::move(hints)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  ~PhaseImpl() {
    io_.reset();
    direct_io_.reset();
  }

  int define_variable(const std::string& name, size_t element_size, std::vector<uint64_t> dims, uint64_t offset) {
    require_state(State::declaring, "define_variable");
    if (name.empty()) throw_usage("a variable needs a name");
    if (element_size == 0) throw_usage("variable \"" + name + "\" has element size 0");
    if (dims.empty()) throw_usage("variable \"" + name + "\" has no dimensions");
    for (auto d : dims) {
      if (d == 0) throw_usage("variable \"" + name + "\" has a zero dimension");
    }
    for (const auto& v : vars_) {
      if (v.name == name) throw_usage("variable \"" + name + "\" is defined twice");
    }
    vars_.push_back({name, element_size, std::move(dims), offset});
    return static_cast<int>(vars_.size()) - 1;
  }

  void add_extent(int var, uint64_t file_offset, uint64_t length, void* memory) {
    const Variable& v = variable(var, "add_extent");
    if (file_offset < v.file_offset || file_offset + length > v.file_offset + v.bytes()) {
      throw_usage("variable \"" + v.name + "\": extent at file offset " + std::to_string(file_offset) + " of " +
                  std::to_string(length) + " bytes lies outside the variable's bytes [" +
                  std::to_string(v.file_offset) + ", " + std::to_string(v.file_offset + v.bytes()) + ")");
    }
    if (length > 0 && memory == nullptr) throw_usage("variable \"" + v.name + "\": extent without memory");
    pieces_.push_back({file_offset, length, static_cast<std::byte*>(memory), 1, 1, var});
  }

  void add_subarray(int var, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count, void* memory,
                    size_t stride) {
    const Variable& v = variable(var, "add_subarray");
    const size_t nd = v.dims.size();
    if (start.size() != nd || count.size() != nd) {
      throw_usage("variable \"" + v.name + "\": subarray has " + std::to_string(count.size()) +
                  " dimensions, the variable " + std::to_string(nd));
    }
    uint64_t elements = 1;
    for (size_t d = 0; d < nd; ++d) {
      if (start[d] > v.dims[d] || count[d] > v.dims[d] - start[d]) {
        throw_usage("variable \"" + v.name + "\": subarray reaches past dimension " + std::to_string(d) + " (start " +
                    std::to_string(start[d]) + " + count " + std::to_string(count[d]) + " > " +
                    std::to_string(v.dims[d]) + ")");
      }
      elements *= count[d];
    }
    if (elements == 0) return;
    if (memory == nullptr) throw_usage("variable \"" + v.name + "\": subarray without memory");
    const size_t es = v.element_size;
    if (stride == 0) stride = es;
    if (stride < es) throw_usage("variable \"" + v.name + "\": memory stride smaller than the element size");
    // Runs along the innermost dimension (merged over trailing dimensions the block covers whole).
    size_t run_dims = 1;
    uint64_t run = count[nd - 1];
    while (run_dims < nd && count[nd - run_dims] == v.dims[nd - run_dims]) {
      run *= count[nd - run_dims - 1];
      ++run_dims;
    }
    const size_t outer = nd - run_dims;
    std::vector<uint64_t> idx(start);
    auto* mem = static_cast<std::byte*>(memory);
    for (uint64_t done = 0; done < elements; done += run) {
      uint64_t linear = 0;
      for (size_t d = 0; d < nd; ++d) linear = linear * v.dims[d] + idx[d];
      pieces_.push_back({v.file_offset + linear * es, run * es, mem, es, stride, var});
      mem += run * stride;
      for (size_t k = outer; k-- > 0;) {
        if (++idx[k] < start[k] + count[k]) break;
        idx[k] = start[k];
      }
    }
  }

  size_t dimensions(int var) const { return variable(var, "add_subarray").dims.size(); }

  template <class F>
  void deferring(F&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      if (!declaration_error_) declaration_error_ = e;
    }
  }

  void plan() {
    require_state(State::declaring, "plan");
    try {
      plan_steps();
    } catch (...) {
      state_ = State::failed;  // a failed phase stays failed: write/read/plan refuse it
      discard_partials();
      throw;
    }
  }

  void plan_steps() {
    const double t0 = MPI_Wtime();
    // Everything local first; one allgather then tells every rank every rank's summary and
    // whether anything failed, so errors cost nothing when there are none.
    Config cfg;
    std::optional<Error> failure = declaration_error_;
    Summary mine{UINT64_MAX, 0, 0, vars_.size(), 0, 4096, 0, 0, 0, 1, 0};
    declared_bytes_ = 0;
    try {
      if (failure) throw *failure;
      cfg = parse_hints(hints_);
      tier_hints_ = parse_tier_hints(hints_);
      sel_ = normalise(std::move(pieces_), names());
      if (rank_ == 0 && cfg.align == 0) mine.fs_block = std::max<uint64_t>(fs_info(path_).block_size, 512);
      if (rank_ == 0) mine.in_place = prepare_commit(cfg) ? 0 : 1;
    } catch (const Error& e) {
      failure = e;
    } catch (const std::exception& e) {  // a filesystem_error, bad_alloc...: still reported everywhere
      failure = Error(ErrorKind::runtime, e.what());
    }
    // Large aligned runs go straight to the file from their owner (no copy through an
    // aggregator); the rest — small extents and unaligned heads and tails — is aggregated.
    // Subfiles hold the aggregators' partitions, so a write with subfiling aggregates all.
    if (cfg.subfile_group > 0 && mode_ == PhaseMode::write) cfg.direct_threshold = 0;
    // Tiers: a node-local target is a file per partition on its aggregator's node, so every
    // byte passes through the aggregator of its partition.
    if (tier_hints_.node_local) {
      cfg.subfile_group = 1;
      cfg.direct_threshold = 0;
    }
    split_direct(cfg);
    if (agg_.bytes > 0) mine.lo = agg_.lo;
    mine.hi = agg_.hi;
    mine.bytes = agg_.bytes;
    mine.declared = sel_.bytes;
    mine.direct = direct_.size();
    const uint64_t tier_config = tier_hints_.hash();
    mine.config = fnv1a(&tier_config, sizeof tier_config, config_hash(cfg));
    for (const auto& v : vars_) mine.signature = fnv1a(&mine.signature, sizeof mine.signature, v.signature());
    mine.ok = failure ? 0 : 1;
    std::vector<Summary> all(static_cast<size_t>(size_));
    MPI_Allgather(&mine, sizeof(Summary), MPI_BYTE, all.data(), sizeof(Summary), MPI_BYTE, comm_);
    for (int r = 0; r < size_; ++r) {
      if (all[static_cast<size_t>(r)].ok == 0) raise_from(comm_, r, failure ? &*failure : nullptr);
    }
    for (const Summary& s : all) {
      if (s.config != all[0].config) {
        throw Error(ErrorKind::usage, "ranks pass different engine hints (cb_buffer_size, strata_buffers, aggregators, "
                                      "striping, subfiling...): every rank must give the same");
      }
    }
    for (const Summary& s : all) {
      if (s.variables != all[0].variables || s.signature != all[0].signature) {
        check_variables();  // collective on every rank alike: names the variable that differs
        break;
      }
    }
    PlanInput in;
    in.lo = UINT64_MAX;
    for (const Summary& s : all) {
      in.lo = std::min(in.lo, s.lo);
      in.hi = std::max(in.hi, s.hi);
      in.total_bytes += s.bytes;
    }
    if (in.total_bytes == 0) in.lo = in.hi = 0;
    in.node_of_rank = engine_.nodes.node_of_rank;
    in.align = cfg.align != 0 ? cfg.align : all[0].fs_block;
    uint64_t buffer = cfg.buffer_bytes != 0 ? cfg.buffer_bytes : (cfg.align != 0 ? cfg.align : kDefaultBuffer);
    buffer = std::max(in.align, (buffer + in.align - 1) / in.align * in.align);  // a whole number of units
    in.buffer_bytes = std::min(buffer, std::max(kMaxBuffer / in.align, uint64_t{1}) * in.align);
    in.buffers = cfg.buffers;
    in.aggregators = cfg.aggregators;
    if (in.aggregators == 0 && cfg.stripe_count > 0) {
      // Default: one aggregator per node, and at least one per stripe (the stripe count).
      in.aggregators = std::max(engine_.nodes.node_count, cfg.stripe_count);
    }
    fsync_ = cfg.fsync;
    commit_ = mode_ == PhaseMode::write && all[0].in_place == 0;
    commit_sync_ = cfg.commit == Config::Commit::sync;
    checksum_chunk_ = cfg.checksum_chunk;
    plan_ = make_plan(in);
    // ---- Tiers: aggregators and their memory tiers elected by the cost model (engine/place/) ----
    place_on_tiers();
    // ---- end of tiers ----
    my_partition_ = plan_.partition_of_rank(rank_);
    for (const Summary& s : all) declared_bytes_ += s.declared;
    subfile_group_ = cfg.subfile_group;
    // Reading: rank 0 reads the output's index (if any) and shares its list of files.
    std::vector<SubFile> listed;
    std::optional<Error> index_error;
    if (mode_ == PhaseMode::read && rank_ == 0) {
      try {
        if (auto index = read_output_index(index_output())) {
          for (const auto& f : index->files) listed.push_back({resolve_indexed_path(path_, f.path), f.begin, f.end, -1});
        } else if (tier_hints_.node_local) {  // tiers: never fall back silently to the shared file
          throw_usage("no node-local copy of \"" + path_ + "\": " + index_path(index_output()) +
                      " is missing (write with hint strata_target=node-local first)");
        }
      } catch (const Error& e) {
        index_error = e;
      }
    }
    if (mode_ == PhaseMode::read) {
      listed = share_from_rank0(listed);
      collectively(comm_, [&] {
        if (index_error) throw *index_error;
        files_ = choose_files(std::move(listed));
      });
    } else {
      files_ = choose_files({});  // deterministic from the plan: nothing to agree on
    }

    // When every rank's aggregated bytes are one dense interval and the intervals neither
    // overlap nor leave gaps, every byte of the domain is declared exactly once: the summaries
    // already say so, and each aggregator's ranges are its whole partition — no exchange.
    // Direct runs never pass through an aggregator, so their overlaps are checked here: every
    // rank gets every direct run (they are large, hence few) only when some rank has one.
    uint64_t direct_total = 0;
    for (const Summary& s : all) direct_total += s.direct;
    std::vector<ReceivedRange> direct_all;
    if (direct_total > 0) direct_all = gather_direct_runs(all);
    ReceivedRanges received;
    if (dense_and_tiled(all)) {
      if (my_partition_ >= 0) {  // each rank's one interval, clipped to this partition
        const size_t p = static_cast<size_t>(my_partition_);
        for (int r = 0; r < size_; ++r) {
          const Summary& sr = all[static_cast<size_t>(r)];
          if (sr.bytes == 0) continue;
          const uint64_t b = std::max(plan_.start[p], sr.lo), e = std::min(plan_.end[p], sr.hi);
          if (e > b) received.push_back({b, e - b, r});
        }
      }
    } else {
      received = exchange_ranges(comm_, plan_, agg_);
    }
    transfers_ = transfers_by_round(plan_, agg_);
    std::vector<uint64_t> needed(static_cast<size_t>(size_), 0);
    std::vector<int> tier_of(static_cast<size_t>(size_), static_cast<int>(Tier::dram));
    for (int p = 0; p < plan_.partitions(); ++p) {
      needed[static_cast<size_t>(plan_.aggregator[static_cast<size_t>(p)])] =
          plan_.buffer_bytes * static_cast<uint64_t>(plan_.buffers);
      tier_of[static_cast<size_t>(plan_.aggregator[static_cast<size_t>(p)])] = static_cast<int>(tier_of_partition_[static_cast<size_t>(p)]);
    }
    if (!tier_hints_.dry_run) window_ = &engine_.window_for(needed, tier_of, rank_);
    // One agreement for both: overlaps found by aggregators, and opening the file.
    collectively(comm_, [&] {
      check_direct_overlaps(direct_all, received);
      if (my_partition_ >= 0) runs_ = rounds_of_partition(plan_, my_partition_, received);
      if (tier_hints_.dry_run) return;  // tiers: plan and placement only
      open_file();
      // The stream is allocated here, so running out of memory is agreed like any error.
      stream_.assign(need_stream() ? sel_.bytes : 0, std::byte{0});
      if (mode_ == PhaseMode::write && !commit_ && rank_ == 0) {
        // Written in place, the old index is stale: it goes now, and comes back when the phase closes.
        for (const std::string& out : {index_output(), path_}) {
          if (out != index_output() && !tier_hints_.drain) continue;
          if (::unlink(index_path(out).c_str()) != 0 && errno != ENOENT) {
            throw_system("cannot remove the old index \"" + index_path(out) + "\"", errno);
          }
        }
      }
    });
    stats_.plan_s = MPI_Wtime() - t0;
    stats_.rounds = plan_.global_rounds;
    stats_.bytes = sel_.bytes;
    stats_.direct_bytes = sel_.bytes - agg_.bytes;
    stats_.aggregators = static_cast<uint64_t>(plan_.partitions());
    stats_.aggregator = my_partition_ >= 0;
    stats_.buffer_bytes = plan_.buffer_bytes;
    stats_.buffers = static_cast<uint64_t>(plan_.buffers);
    stats_.plan_signature = plan_signature();
    stats_.tier = my_partition_ >= 0 ? tier_name(tier_of_partition_[static_cast<size_t>(my_partition_)]) : "";
    stats_.tier_fallbacks = placement_.fallbacks;
    state_ = State::planned;
  }

  void execute(PhaseMode mode) {
    if (state_ == State::declaring) plan();
    require_state(State::planned, mode == PhaseMode::write ? "write" : "read");
    if (tier_hints_.dry_run) throw_usage("this phase is a dry run (hint strata_dry_run): it plans and places only");
    if (mode != mode_) {
      throw_usage(std::string("this phase was opened for ") + (mode_ == PhaseMode::write ? "writing" : "reading"));
    }
    // Direct runs move straight between the file and the caller's memory when one contiguous
    // piece holds them; the packed stream is built only when something needs it (aggregated
    // bytes, or a direct run over strided or several pieces). A read either uses the caller's
    // memory for every direct run or the stream for all, so unpacking never overwrites them.
    std::vector<std::byte*> direct_memory(direct_.size(), nullptr);
    const bool streamed = need_stream();
    for (size_t i = 0; i < direct_.size(); ++i) direct_memory[i] = contiguous_memory(direct_[i].file_offset, direct_[i].length);
    if (mode == PhaseMode::read && streamed) std::fill(direct_memory.begin(), direct_memory.end(), nullptr);
    std::vector<std::byte>& stream = stream_;
    if (streamed && mode == PhaseMode::write) pack(sel_, stream.data());
    // Direct runs start first and proceed on the I/O thread while aggregation goes on.
    if (!direct_.empty() && direct_io_) {
      std::vector<IoSpan> spans;
      for (size_t i = 0; i < direct_.size(); ++i) {
        const StreamExtent& d = direct_[i];
        spans.push_back({d.file_offset, d.length,
                         direct_memory[i] != nullptr ? direct_memory[i] : stream.data() + d.stream_offset});
      }
      if (mode == PhaseMode::write) {
        direct_io_->submit_write(std::move(spans));
      } else {
        direct_io_->submit_read(std::move(spans));
      }
    }
    Move m;
    m.comm = comm_;
    m.plan = &plan_;
    m.window = window_;
    m.io = io_.get();
    m.runs = &runs_;
    m.transfers = &transfers_;
    m.stream = stream.data();
    m.stats = &stats_;
    if (mode == PhaseMode::write) {
      move_write(m);
    } else {
      move_read(m);
    }
    // A read agrees now, so no rank uses data another rank failed to read. A write's file
    // errors are agreed by close(), which waits for the I/O threads anyway: one collective less
    // per phase (as with MPI_File_iwrite_all, the data is safe only once close succeeds).
    if (mode == PhaseMode::read) {
      collectively(comm_, [&] {
        if (direct_io_) direct_io_->wait_all();
        raise_io_errors();
      });
    } else if (direct_io_) {
      // Direct runs may write from the caller's memory: done before write() returns, so the
      // caller may reuse its buffers. Aggregated rounds write from the engine's window.
      const double w = MPI_Wtime();
      direct_io_->wait_all();
      stats_.wait_s += MPI_Wtime() - w;
    }
    if (mode == PhaseMode::read && streamed) unpack(sel_, stream.data());
    if (mode == PhaseMode::read) stream_ = {};  // a write's direct runs may still read it: freed by close()
    state_ = State::done;
  }

  PhaseStats close(PhaseStats* max) {
    try {
      return close_steps(max);
    } catch (...) {
      discard_partials();
      throw;
    }
  }

  PhaseStats close_steps(PhaseStats* max) {
    const double t0 = MPI_Wtime();
    collectively(comm_, [&] {
      for (auto* w : {&io_, &direct_io_}) {
        if (*w) {
          (*w)->wait_all();
          stats_.io_s += (*w)->io_seconds();
          stats_.fs_requests += (*w)->requests();
        }
      }
      raise_io_errors();
      io_.reset();
      direct_io_.reset();
      stream_ = {};
      // With fsync, the files are closed first and synced once per node below: every rank's
      // data is then in its node's cache, and one fsync per node and file makes it durable
      // (sixteen ranks fsyncing one file each cost sixteen times the journal work).
      const bool sync = fsync_ && mode_ == PhaseMode::write && state_ == State::done;
      files_.close_all(false);
      if (tier_hints_.drain && state_ == State::done) drain_partition();  // tiers: node-local copy to the shared file
      if (!sync && !commit_ && state_ == State::done) finish_output();
    });
    if (commit_ && state_ == State::done) {
      commit_written();
    } else if (fsync_ && mode_ == PhaseMode::write && state_ == State::done) {
      collectively(comm_, [&] {
        if (engine_.nodes.local_rank == 0) sync_files_of_node();
        finish_output();
      });
    }
    if (state_ != State::done) discard_partials();  // planned, never written
    stats_.close_s = MPI_Wtime() - t0;
    state_ = State::closed;
    if (max != nullptr) {
      double d[6] = {stats_.plan_s, stats_.aggregation_s, stats_.io_s, stats_.wait_s, stats_.close_s, 0};
      double dm[6];
      MPI_Allreduce(d, dm, 6, MPI_DOUBLE, MPI_MAX, comm_);
      unsigned long long u[3] = {stats_.bytes, stats_.fs_requests, stats_.direct_bytes}, us[3];
      MPI_Allreduce(u, us, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm_);
      *max = stats_;
      max->plan_s = dm[0];
      max->aggregation_s = dm[1];
      max->io_s = dm[2];
      max->wait_s = dm[3];
      max->close_s = dm[4];
      max->bytes = us[0];
      max->fs_requests = us[1];
      max->direct_bytes = us[2];
      max->tier.clear();  // tiers: every tier the phase aggregated on
      for (const PlacedPartition& part : placement_.partitions) {
        if (max->tier.find(part.tier) == std::string::npos) max->tier += (max->tier.empty() ? "" : ",") + part.tier;
      }
    }
    return stats_;
  }

 private:
  enum class State { declaring, planned, done, closed, failed };

  void require_state(State s, const char* what) const {
    if (state_ == State::failed) throw_usage(std::string("Phase::") + what + " on a phase whose plan failed");
    if (state_ != s) throw_usage(std::string("Phase::") + what + " called out of order (declare, plan, write or read, close)");
  }

  const Variable& variable(int var, const char* what) const {
    require_state(State::declaring, what);
    if (var < 0 || static_cast<size_t>(var) >= vars_.size()) {
      throw_usage(std::string(what) + ": variable " + std::to_string(var) + " is not defined");
    }
    return vars_[static_cast<size_t>(var)];
  }

  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& v : vars_) n.push_back(v.name);
    return n;
  }

  // Every rank's direct runs, for every rank (MPI_Allgatherv; called only when some exist).
  std::vector<ReceivedRange> gather_direct_runs(const std::vector<Summary>& all) {
    std::vector<uint64_t> mine;
    for (const StreamExtent& d : direct_) {
      mine.push_back(d.file_offset);
      mine.push_back(d.length);
    }
    std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      counts[static_cast<size_t>(r)] = static_cast<int>(2 * all[static_cast<size_t>(r)].direct);
      displs[static_cast<size_t>(r)] = total;
      total += counts[static_cast<size_t>(r)];
    }
    std::vector<uint64_t> flat(static_cast<size_t>(total));
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, flat.data(), counts.data(), displs.data(),
                   MPI_UINT64_T, comm_);
    std::vector<ReceivedRange> out;
    for (int r = 0; r < size_; ++r) {
      for (int i = 0; i < counts[static_cast<size_t>(r)]; i += 2) {
        const size_t at = static_cast<size_t>(displs[static_cast<size_t>(r)] + i);
        out.push_back({flat[at], flat[at + 1], r});
      }
    }
    std::sort(out.begin(), out.end(), [](const ReceivedRange& a, const ReceivedRange& b) { return a.offset < b.offset; });
    return out;
  }

  // Direct runs must overlap neither each other nor aggregated bytes: rank 0 checks direct
  // against direct, each aggregator checks them against the ranges it receives. Local part of
  // a collective step.
  void check_direct_overlaps(const std::vector<ReceivedRange>& direct, const ReceivedRanges& received) const {
    auto clash = [](const ReceivedRange& a, const ReceivedRange& b) {
      throw_usage("rank " + std::to_string(b.from) + " declares bytes [" + std::to_string(b.offset) + ", " +
                  std::to_string(b.offset + b.length) + ") that overlap rank " + std::to_string(a.from) + "'s bytes [" +
                  std::to_string(a.offset) + ", " + std::to_string(a.offset + a.length) +
                  ") (every byte of a phase must be declared by one rank only)");
    };
    if (rank_ == 0) {
      for (size_t i = 1; i < direct.size(); ++i) {
        if (direct[i].offset < direct[i - 1].offset + direct[i - 1].length) clash(direct[i - 1], direct[i]);
      }
    }
    for (const ReceivedRange& r : received) {
      auto it = std::upper_bound(direct.begin(), direct.end(), r.offset,
                                 [](uint64_t o, const ReceivedRange& d) { return o < d.offset; });
      if (it != direct.begin()) {
        const ReceivedRange& d = *std::prev(it);
        if (r.offset < d.offset + d.length) clash(d, r);
      }
      if (it != direct.end() && it->offset < r.offset + r.length) clash(r, *it);
    }
  }

  bool need_stream() const {
    if (agg_.bytes > 0) return true;
    for (const StreamExtent& d : direct_) {
      if (contiguous_memory(d.file_offset, d.length) == nullptr) return true;
    }
    return false;
  }

  // The I/O threads' first failure, if any, as an Error. Local part of a collective step.
  void raise_io_errors() const {
    for (const IoWorker* w : {io_.get(), direct_io_.get()}) {
      if (w != nullptr) {
        if (auto e = w->error()) throw_runtime(*e);
      }
    }
  }

  // fsync of every file of the phase that exists, by one rank of each node.
  void sync_files_of_node() const {
    for (const SubFile& f : files_.files()) {
      const int fd = ::open(f.path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT) continue;  // a subfile no aggregator wrote: created empty later
        throw_system("cannot open \"" + f.path + "\" to sync it", errno);
      }
      const int rc = ::fsync(fd);
      const int err = errno;
      ::close(fd);
      if (rc != 0) throw_system("fsync of \"" + f.path + "\" failed", err);
    }
  }

  // The caller's memory for file bytes [offset, offset + length) when one contiguous piece
  // holds them all, else null.
  std::byte* contiguous_memory(uint64_t offset, uint64_t length) const {
    const auto& pieces = sel_.pieces;
    auto it = std::upper_bound(pieces.begin(), pieces.end(), offset,
                               [](uint64_t o, const Piece& p) { return o < p.file_offset; });
    if (it == pieces.begin()) return nullptr;
    const Piece& p = *std::prev(it);
    if (p.stride != p.element_size || offset + length > p.file_offset + p.length) return nullptr;
    return p.memory + (offset - p.file_offset);
  }

  // True when the ranks' aggregated bytes tile the domain: each rank one dense interval (its
  // extents coalesce into one), the intervals disjoint and adjacent. Same answer on every rank.
  bool dense_and_tiled(const std::vector<Summary>& all) const {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const Summary& s : all) {
      if (s.bytes == 0) continue;
      if (s.hi - s.lo != s.bytes) return false;
      spans.emplace_back(s.lo, s.hi);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      if (spans[i].first != spans[i - 1].second) return false;
    }
    return true;
  }

  // A hash of the plan, to check it is the same on every rank.
  uint64_t plan_signature() const {
    uint64_t h = fnv1a(&plan_.global_rounds, sizeof plan_.global_rounds);
    for (size_t p = 0; p < plan_.start.size(); ++p) {
      h = fnv1a(&plan_.start[p], sizeof(uint64_t), h);
      h = fnv1a(&plan_.end[p], sizeof(uint64_t), h);
      h = fnv1a(&plan_.aggregator[p], sizeof(int), h);
    }
    h = fnv1a(&plan_.buffer_bytes, sizeof plan_.buffer_bytes, h);
    return fnv1a(&plan_.buffers, sizeof plan_.buffers, h);
  }

  // Splits sel_ into direct runs and the aggregated rest. A run goes direct when its part
  // aligned to the partition unit is at least the threshold (default S_buff, or 4 MiB when no
  // buffer size is given); hint strata_direct_threshold=0 turns direct runs off.
  void split_direct(const Config& cfg) {
    agg_ = Selection{};
    direct_.clear();
    const uint64_t unit = cfg.align != 0 ? cfg.align : uint64_t{1} << 20;  // 1 MiB: aligned on any usual stripe
    const uint64_t threshold = cfg.direct_threshold.value_or(std::max<uint64_t>(
        cfg.buffer_bytes != 0 ? cfg.buffer_bytes : kDefaultBuffer, unit));
    auto keep = [&](uint64_t off, uint64_t len, uint64_t stream) {
      if (len == 0) return;
      if (agg_.bytes == 0) agg_.lo = off;
      agg_.hi = off + len;
      agg_.bytes += len;
      agg_.extents.push_back({off, len, stream});
    };
    for (const StreamExtent& e : sel_.extents) {
      const uint64_t a = (e.file_offset + unit - 1) / unit * unit;
      const uint64_t b = (e.file_offset + e.length) / unit * unit;
      if (threshold == 0 || b <= a || b - a < threshold) {
        keep(e.file_offset, e.length, e.stream_offset);
        continue;
      }
      keep(e.file_offset, a - e.file_offset, e.stream_offset);
      direct_.push_back({a, b - a, e.stream_offset + (a - e.file_offset)});
      keep(b, e.file_offset + e.length - b, e.stream_offset + (b - e.file_offset));
    }
  }

  // Every rank must define the same variables in the same order.
  void check_variables() {
    const unsigned long long count = vars_.size();
    unsigned long long lo = 0, hi = 0;
    MPI_Allreduce(&count, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm_);
    MPI_Allreduce(&count, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_);
    collectively(comm_, [&] {
      if (lo != hi) {
        throw_usage("ranks define different numbers of variables (" + std::to_string(lo) + " to " +
                    std::to_string(hi) + "); every rank must define the same variables in the same order");
      }
    });
    std::vector<unsigned long long> sig(vars_.size()), smin(vars_.size()), smax(vars_.size());
    for (size_t i = 0; i < vars_.size(); ++i) sig[i] = vars_[i].signature();
    MPI_Allreduce(sig.data(), smin.data(), static_cast<int>(sig.size()), MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm_);
    MPI_Allreduce(sig.data(), smax.data(), static_cast<int>(sig.size()), MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_);
    collectively(comm_, [&] {
      for (size_t i = 0; i < vars_.size(); ++i) {
        if (smin[i] != smax[i]) {
          throw_usage("variable \"" + vars_[i].name + "\" is defined differently on some ranks (name, element size, "
                      "global shape and file offset must agree; variables must come in the same order)");
        }
      }
    });
  }

  // The files of the phase: written, one shared file or one per group of partitions; read,
  // what the output's index lists (or the one file). Local part of a collective step.
  FileSet choose_files(std::vector<SubFile> listed) {
    std::vector<SubFile> files;
    if (mode_ == PhaseMode::read) {
      const bool subfiled = listed.size() > 1 || (!listed.empty() && listed[0].path != path_);
      FileSet set(std::move(listed), subfiled);
      set.check_contiguous("index \"" + index_path(path_) + "\"");
      return set;
    }
    if (tier_hints_.node_local && plan_.partitions() > 0) return node_local_files();  // tiers
    const std::string tail = commit_ ? kPartialSuffix : "";  // committed at close
    if (subfile_group_ == 0 || plan_.partitions() == 0) {
      files.push_back({path_ + tail, 0, UINT64_MAX, -1});
      return FileSet(std::move(files), false);
    }
    const size_t parts = static_cast<size_t>(plan_.partitions());
    for (size_t p = 0, f = 0; p < parts; p += subfile_group_, ++f) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".subfile.%05zu", f);
      const size_t next = p + subfile_group_;
      files.push_back({path_ + suffix + tail, p == 0 ? 0 : plan_.start[p], next < parts ? plan_.start[next] : UINT64_MAX, -1});
    }
    files.front().begin = plan_.start[0];
    return FileSet(std::move(files), true);
  }

  // Rank 0's list of files, for every rank (an empty list means the one file at path_).
  std::vector<SubFile> share_from_rank0(std::vector<SubFile> files) {
    std::string text;
    if (rank_ == 0) {
      for (const auto& f : files) text += f.path + '\n' + std::to_string(f.begin) + '\n' + std::to_string(f.end) + '\n';
    }
    unsigned long long n = text.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);
    text.resize(n);
    MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, comm_);
    std::vector<SubFile> out;
    std::istringstream in(text);
    std::string path, begin, end;
    while (std::getline(in, path) && std::getline(in, begin) && std::getline(in, end)) {
      out.push_back({path, std::stoull(begin), std::stoull(end), -1});
    }
    if (out.empty()) out.push_back({path_, 0, UINT64_MAX, -1});
    return out;
  }

  // Opens the files this rank touches: its aggregation runs and direct runs; rank 0 also opens
  // a single shared file so that it exists (write) or is checked (read). Local part of a
  // collective step.
  void open_file() {
    std::vector<size_t> touched;
    auto touch = [&](uint64_t global, uint64_t length) {
      files_.split(global, length, [&](const SubFile& f, uint64_t, uint64_t, uint64_t) {
        const size_t i = files_.index_of(f.begin);
        if (std::find(touched.begin(), touched.end(), i) == touched.end()) touched.push_back(i);
      });
    };
    for (const auto& round : runs_) {
      for (const Run& r : round) touch(r.file_offset, r.length);
    }
    for (const StreamExtent& d : direct_) touch(d.file_offset, d.length);
    if (rank_ == 0 && !files_.subfiled() && touched.empty()) touched.push_back(0);
    const int flags = mode_ == PhaseMode::write ? (O_WRONLY | O_CREAT) : O_RDONLY;
    for (size_t i : touched) files_.open(i, flags);
    // Aggregation rounds and direct runs have a thread each, so a long direct write never
    // delays the buffer an aggregation round waits for.
    if (my_partition_ >= 0) io_ = std::make_unique<IoWorker>(files_);
    if (!direct_.empty()) direct_io_ = std::make_unique<IoWorker>(files_);
  }

  // Rank 0, after a write: subfiles cut to their final size (no stale tail from an older,
  // larger output) and the index. Local part of a collective step.
  void finish_output() {
    if (rank_ != 0 || mode_ != PhaseMode::write) return;
    OutputIndex index = make_index();
    if (files_.subfiled()) {
      for (const SubFile& f : files_.files()) size_subfile(f, false);
    }
    write_output_index(index_output(), index);
    if (tier_hints_.drain) {  // tiers: the drained shared file has its own index
      index.files = {{std::filesystem::path(path_).filename().string(), 0, UINT64_MAX, std::nullopt, {}}};
      write_output_index(path_, index);
    }
  }

  // The index of what this phase wrote, without sizes and checksums. Files are named by their
  // final names, relative to the index's folder.
  OutputIndex make_index() const {
    OutputIndex index;
    for (const auto& v : vars_) index.variables.push_back({v.name, v.element_size, v.dims, v.file_offset});
    index.bytes = declared_bytes_;
    index.writer_ranks = size_;
    for (const SubFile& f : files_.files()) {
      // Node-local copies are named by their absolute paths (they are not beside the index).
      const std::string name = tier_hints_.node_local ? f.path : std::filesystem::path(final_path(f.path)).filename().string();
      index.files.push_back({name, f.begin, f.end, std::nullopt, {}});
    }
    return index;
  }

  // Every listed subfile exists (one no aggregator wrote is created empty) at its size, which
  // it returns; with `sync`, a subfile whose size changed is fsynced. Rank 0.
  uint64_t size_subfile(const SubFile& f, bool sync) const {
    const uint64_t size = std::min(f.end, plan_.hi) > f.begin ? std::min(f.end, plan_.hi) - f.begin : 0;
    const int fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw_system("cannot create \"" + f.path + "\"", errno);
    struct stat st {};
    int rc = ::fstat(fd, &st);
    const bool changed = rc == 0 && static_cast<uint64_t>(st.st_size) != size;
    if (rc == 0 && changed) rc = ::ftruncate(fd, static_cast<off_t>(size));
    if (rc == 0 && changed && sync) rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) throw_system("cannot set the size of \"" + f.path + "\"", err);
    return size;
  }

  // Rank 0, before the plan's agreement: whether this phase commits (engine/commit.hpp). A
  // commit interrupted after its intent record is completed first (a read then sees it, a
  // write replaces it); a write removes the partial files a killed write left. Files that are
  // not regular (a device) and node-local targets are written in place.
  bool prepare_commit(const Config& cfg) const {
    if (tier_hints_.dry_run) return false;  // a dry run touches no file
    roll_forward(path_);
    if (mode_ != PhaseMode::write || cfg.commit == Config::Commit::in_place || tier_hints_.node_local) return false;
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return false;
    for (const std::string& p : leftover_partials(path_)) {
      if (::unlink(p.c_str()) != 0 && errno != ENOENT) throw_system("cannot remove the uncommitted \"" + p + "\"", errno);
    }
    return true;
  }

  // Rank 0, after an agreed failure or a phase closed unwritten: the partial files go, unless
  // a commit record names them (a commit that failed half-way rolls forward instead).
  void discard_partials() const {
    if (!commit_ || rank_ != 0) return;
    struct stat st {};
    if (::stat(intent_path(path_).c_str(), &st) == 0) return;
    for (const SubFile& f : files_.files()) ::unlink(f.path.c_str());
  }

  // After a write: every rank's partial files synced (unless strata_commit=nosync), sized,
  // checksummed in parallel, then committed by rank 0. Collective.
  void commit_written() {
    const bool sync = commit_sync_ || fsync_;
    const std::vector<SubFile>& files = files_.files();
    std::vector<uint64_t> sizes(files.size(), 0);
    collectively(comm_, [&] {
      if (rank_ == 0) {
        for (size_t i = 0; i < files.size(); ++i) {
          if (files_.subfiled()) {
            sizes[i] = size_subfile(files[i], sync);
          } else {
            struct stat st {};
            if (::stat(files[i].path.c_str(), &st) != 0) throw_system("cannot stat \"" + files[i].path + "\"", errno);
            sizes[i] = static_cast<uint64_t>(st.st_size);
          }
        }
      }
      if (sync && engine_.nodes.local_rank == 0) sync_files_of_node();
    });
    MPI_Bcast(sizes.data(), static_cast<int>(sizes.size()), MPI_UINT64_T, 0, comm_);
    std::vector<std::string> paths;
    for (const SubFile& f : files) paths.push_back(f.path);
    const auto sums = hash_chunks(comm_, paths, sizes, checksum_chunk_);
    collectively(comm_, [&] {
      if (rank_ != 0) return;
      OutputIndex index = make_index();
      index.checksum_chunk = checksum_chunk_;
      for (size_t i = 0; i < files.size(); ++i) {
        index.files[i].size = sizes[i];
        index.files[i].checksums = sums[i];
      }
      commit_output(path_, index, sync);
    });
  }

  // ---- Tiers (engine/place/, arch/memory_tier, arch/machine) ---------------------------------

  // The output whose index describes what this phase writes or reads: the node-local copy's
  // with strata_target=node-local, else the output's.
  std::string index_output() const { return tier_hints_.node_local ? node_local_output(path_) : path_; }

  // Elects each partition's aggregator and tier (collective) and records the report.
  void place_on_tiers() {
    const Machine& machine = engine_.machine_once();
    PlacementInput pin;
    pin.plan = &plan_;
    pin.node_of_rank = &engine_.nodes.node_of_rank;
    pin.machine = &machine;
    pin.local_tiers = &engine_.tiers;
    pin.my_bytes.assign(static_cast<size_t>(plan_.partitions()), 0);
    for (const StreamExtent& e : agg_.extents) {
      for (uint64_t off = e.file_offset, end = e.file_offset + e.length; off < end;) {
        const int p = plan_.partition_of(off);
        const uint64_t stop = std::min(end, plan_.end[static_cast<size_t>(p)]);
        pin.my_bytes[static_cast<size_t>(p)] += stop - off;
        if (stop <= off) break;
        off = stop;
      }
    }
    pin.persistent = tier_hints_.persistent;
    pin.forced = tier_hints_.forced;
    pin.want_table = tier_hints_.cost_table;
    Placement placed = place_aggregators(comm_, pin);
    placement_ = PlacementReport{};
    placement_.machine = machine.name + " (" + machine.source + ")";
    placement_.forced_tier = tier_hints_.forced ? tier_name(*tier_hints_.forced) : "";
    placement_.fallbacks = placed.fallbacks;
    tier_of_partition_.clear();
    for (int p = 0; p < plan_.partitions(); ++p) {
      const Elected& e = placed.partitions[static_cast<size_t>(p)];
      plan_.aggregator[static_cast<size_t>(p)] = e.aggregator;
      tier_of_partition_.push_back(e.tier);
      placement_.partitions.push_back({plan_.start[static_cast<size_t>(p)], plan_.end[static_cast<size_t>(p)], e.aggregator,
                                       engine_.nodes.node_of_rank[static_cast<size_t>(e.aggregator)], tier_name(e.tier),
                                       e.cost, e.fallback});
    }
    for (const CandidateRow& c : placed.table) {
      placement_.candidates.push_back({c.partition, c.rank, c.node, tier_name(c.tier), c.c1, c.c2, filter_name(c.filtered)});
    }
  }

  // A write to node-local storage: one file per partition, in its aggregator's node directory.
  FileSet node_local_files() {
    node_local_dir(engine_.nodes.node);  // this node's directory exists
    const std::string name = std::filesystem::path(path_).filename().string();
    std::vector<SubFile> files;
    const size_t parts = static_cast<size_t>(plan_.partitions());
    for (size_t p = 0; p < parts; ++p) {
      const int node = engine_.nodes.node_of_rank[static_cast<size_t>(plan_.aggregator[p])];
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".part.%05zu", p);
      const auto dir = std::filesystem::absolute(std::filesystem::path(node_local_root()) / std::to_string(node));
      files.push_back({(dir / (name + suffix)).string(), p == 0 ? 0 : plan_.start[p], p + 1 < parts ? plan_.start[p + 1] : UINT64_MAX, -1});
    }
    files.front().begin = plan_.start[0];
    return FileSet(std::move(files), true);
  }

  // After a node-local write, this partition's aggregator copies its node file into the shared
  // file. Local part of a collective step.
  void drain_partition() {
    if (mode_ != PhaseMode::write || my_partition_ < 0) return;
    const SubFile& f = files_.files()[static_cast<size_t>(my_partition_)];
    const uint64_t end = std::min(f.end, plan_.hi);
    std::error_code ec;
    if (end <= f.begin || !std::filesystem::exists(f.path, ec)) return;  // a partition of holes only
    drain_file(f.path, path_, f.begin, end - f.begin);
  }

 public:
  const PlacementReport& placement() const {
    if (state_ == State::declaring || state_ == State::failed) throw_usage("Phase::placement before a successful plan()");
    return placement_;
  }

 private:
  // ---- end of tiers ----

  EngineImpl& engine_;
  MPI_Comm comm_;
  std::string path_;
  PhaseMode mode_;
  std::vector<Phase::Hint> hints_;
  int rank_ = 0, size_ = 1;
  State state_ = State::declaring;
  std::vector<Variable> vars_;
  std::vector<Piece> pieces_;
  std::optional<Error> declaration_error_;
  Selection sel_;
  Selection agg_;                     // the aggregated part of sel_ (extents only)
  std::vector<StreamExtent> direct_;  // runs this rank writes or reads itself
  Plan plan_;
  int my_partition_ = -1;
  std::vector<std::vector<Run>> runs_;
  std::vector<std::vector<Transfer>> transfers_;
  Window* window_ = nullptr;  // the engine's
  FileSet files_;
  uint64_t subfile_group_ = 0;
  uint64_t declared_bytes_ = 0;
  std::unique_ptr<IoWorker> io_;         // aggregation rounds (aggregators)
  std::unique_ptr<IoWorker> direct_io_;  // direct runs
  std::vector<std::byte> stream_;        // this rank's bytes in file order, when needed
  bool fsync_ = false;
  bool commit_ = false;       // written to partial files, committed at close (engine/commit.hpp)
  bool commit_sync_ = false;  // the commit syncs the data first (strata_commit=sync, or strata_fsync)
  uint64_t checksum_chunk_ = kChecksumChunk;
  PhaseStats stats_;
  TierHints tier_hints_;
  std::vector<Tier> tier_of_partition_;
  PlacementReport placement_;
};

Phase::Phase(Engine& engine, std::string path, PhaseMode mode, std::vector<Hint> hints)
    : impl_(std::make_unique<PhaseImpl>(engine, std::move(path), mode, std::move(hints))) {}

// Declarations are local: a bad one is remembered and raised, on every rank, by plan(), so a
// rank with a bad declaration never leaves the others waiting in a collective.
Phase::~Phase() = default;
Phase::Phase(Phase&&) noexcept = default;
Phase& Phase::operator=(Phase&&) noexcept = default;

int Phase::define_variable(const std::string& name, size_t element_size, std::vector<uint64_t> global_dims,
                           uint64_t file_offset) {
  int id = -1;
  impl_->deferring([&] { id = impl_->define_variable(name, element_size, std::move(global_dims), file_offset); });
  return id;
}
void Phase::add_extent(int var, uint64_t file_offset, uint64_t length, void* memory) {
  impl_->deferring([&] { impl_->add_extent(var, file_offset, length, memory); });
}
void Phase::add_subarray(int var, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count, void* memory,
                         size_t memory_stride) {
  impl_->deferring([&] { impl_->add_subarray(var, start, count, memory, memory_stride); });
}
void Phase::add_subarray(int var, const uint64_t* start, const uint64_t* count, void* memory, size_t memory_stride) {
  impl_->deferring([&] {
    const size_t nd = impl_->dimensions(var);
    impl_->add_subarray(var, std::vector<uint64_t>(start, start + nd), std::vector<uint64_t>(count, count + nd), memory,
                        memory_stride);
  });
}
void Phase::plan() {
  watchdog::Scope scope("engine plan");
  impl_->plan();
}
const PlacementReport& Phase::placement() const { return impl_->placement(); }
void Phase::write() {
  watchdog::Scope scope("engine write");
  impl_->execute(PhaseMode::write);
}
void Phase::read() {
  watchdog::Scope scope("engine read");
  impl_->execute(PhaseMode::read);
}
PhaseStats Phase::close(PhaseStats* max) {
  watchdog::Scope scope("engine close");
  return impl_->close(max);
}

}  // namespace strata
