// The collective plan of a phase, as named steps.
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/seeded_random.hpp"
#include "engine/phase_impl.hpp"
#include "engine/place/placement.hpp"
#include "engine/plan/run_sketch.hpp"
#include "fs/fs_info.hpp"

namespace strata {

namespace {

// A boundary's term in the tiling sum (a keyed hash, so boundaries cancel only when equal).
uint64_t boundary(uint64_t offset) { return splitmix64(offset ^ 0x5bd1e9955bd1e995ULL); }

// Runs per rank (on average) from which the intervals the runs make together are estimated.
constexpr uint64_t kSketchRuns = 64;

}  // namespace

void PhaseImpl::plan() {
  require_state(State::declaring, "plan");
  try {
    plan_steps();
  } catch (...) {
    state_ = State::failed;  // a failed phase stays failed: write/read/plan refuse it
    discard_partials();
    throw;
  }
}

void PhaseImpl::plan_steps() {
  const double t0 = MPI_Wtime();
  // 0. Options, rank 0's look at the file, this rank's plan key. When the engine keeps plans,
  // one reduction tells whether every rank declared what it declared for one of them (and
  // that no rank failed): then that plan is reused whole (engine/plan_cache.hpp).
  std::optional<Error> failure = declaration_error_;
  resolve_drain();  // drains only (hint strata_drain): waits, a read of the target, the space check
  plan_steps_s_.clear();
  plan_steps_s_.emplace_back("start", t0);
  RankSummary mine = local_start(failure);
  stats_.collectives = 0;
  if (!engine_.plans.empty()) {
    plan_steps_s_.emplace_back("local", MPI_Wtime());
    engine::KeyVote vote;
    vote.failed = failure ? 1 : 0;
    vote.exact = rank_key_term(key_, rank_);
    vote.relative = rank_key_term(relative_key_, rank_);
    vote.recycled = recycled_ ? 1 : 0;  // (rank 0's)
    if (mode_ == PhaseMode::write && !failure && pieces_base_ != CachedPlan::kNoBase)
      vote.vote(engine_.plans.candidate(relative_key_, pieces_base_), pieces_base_);
    const double arrived = MPI_Wtime();  // the reduction's time is mostly waiting for the last rank
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &vote, 1, engine_.key_vote_type(), engine_.key_vote_op(), comm_),
              "MPI_Allreduce");
    stats_.arrival_s = MPI_Wtime() - arrived;
    plan_steps_s_.emplace_back("arrival", MPI_Wtime());
    ++stats_.collectives;
    if (vote.failed == 0) {
      std::shared_ptr<const CachedPlan> cached = engine_.plans.find(vote.exact);
      int64_t shift = 0;
      uint64_t key = 0;
      if (!cached && vote.agreed(key, shift)) {  // the plan every rank voted for, if it is theirs
        cached = engine_.plans.find(key);
        if (cached && (cached->relative_key != vote.relative || !shift_allowed(*cached, shift))) cached = nullptr;
      }
      if (cached) {
        agreed_key_ = cached->key;
        agreed_relative_ = cached->relative_key;
        reuse(*cached, shift, vote.recycled != 0);
        plan_steps_s_.emplace_back("reuse", MPI_Wtime());
        open_and_finish(t0, defer_open_, nullptr, nullptr);  // the rest: opening the files
        return;
      }
    }
  }
  // 1. Everything local first; one allgather then tells every rank every rank's summary and
  // whether anything failed, so errors cost nothing when there are none.
  plan_steps_s_.clear();
  auto step = [&](const char* name) { plan_steps_s_.emplace_back(name, MPI_Wtime()); };
  step("start");
  if (repeated_) {  // no plan to reuse: the pieces back in the order they were declared
    std::vector<Piece> sorted = viewed_ ? views_.flatten() : std::move(sel_.pieces);
    views_ = PieceViews{};
    viewed_ = false;
    sel_ = Selection{};
    if (order_.empty()) {
      pieces_ = std::move(sorted);
    } else {
      pieces_.resize(order_.size());
      for (size_t k = 0; k < order_.size(); ++k) pieces_[k] = sorted[order_[k]];
    }
    repeated_ = false;  // key_ holds the digest already
  }
  local_summary(mine, failure);
  step("summary");
  std::vector<RankSummary> all(static_cast<size_t>(size_));
  // With no plan kept, this is the plan's first agreement: mostly waiting for the last rank.
  const double arrived = MPI_Wtime();
  MPI_Allgather(&mine, sizeof(RankSummary), MPI_BYTE, all.data(), sizeof(RankSummary), MPI_BYTE, comm_);
  if (engine_.plans.empty()) stats_.arrival_s = MPI_Wtime() - arrived;
  ++stats_.collectives;
  step("allgather");
  agreed_key_ = agreed_relative_ = 0;
  for (int r = 0; r < size_; ++r) {
    agreed_key_ += rank_key_term(all[static_cast<size_t>(r)].key, r);
    agreed_relative_ += rank_key_term(all[static_cast<size_t>(r)].relative, r);
  }
  // 2. Agreement: errors, hints, variables.
  agree(all, failure);
  // 3. The strategy, by cost (or by hints); then which bytes go direct and which are aggregated.
  choose_strategy_of(all);
  step("strategy");
  split_direct();
  step("split");
  // 4. Partitions, rounds and aggregators (with their memory tiers).
  partition(all);
  // A node-local write whose partitions each hold one node's bytes: their owners write them.
  sole_owner_ = false;
  owners_local_ = owners_write_node_files(all);
  node_local_tiled_ = mode_ == PhaseMode::write && options_.tiers.node_local && dense_and_tiled(all, false);
  step("partitions");
  // 5. Files: the output's (written) or the index's (read).
  choose_phase_files();
  // 6. Ranges: what each aggregator receives (and the overlaps), the transfers, the window.
  const std::vector<ReceivedRange> direct_all = direct_runs_to_know(all);
  const double exchange_t0 = MPI_Wtime();
  const ReceivedRanges received = ranges_to_receive(all);
  stats_.exchange_s = MPI_Wtime() - exchange_t0;
  step("ranges");
  // Owners writing their node's files (step 4): the aggregators' ranges above only checked
  // that no two ranks declare a byte twice.
  if (owners_local_) hand_runs_to_owners();
  const Machine& machine = engine_.machine_once();
  const uint64_t pack_from = options_.pack == PhaseOptions::Choice::on    ? 1
                             : options_.pack == PhaseOptions::Choice::off ? 0
                                                                          : pack_threshold(machine.io);
  // Copied (one node's shared memory): every aggregation buffer on main memory, no datatype.
  copy_ = strategy_.best().copied && plan_.partitions() > 0 && !owners_local_ &&
          std::all_of(tier_of_partition_.begin(), tier_of_partition_.end(), [](Tier t) { return t == Tier::dram; });
  if (strategy_.best().staged && plan_.partitions() > 0 && !owners_local_) {
    stats_.collectives += 2;
    transfers_ = std::make_shared<const PackedTransfers>(comm_, plan_, transfers_by_round(plan_, aggregated()));
  } else if (copy_ && mode_ == PhaseMode::write && direct_.empty() && pieces_contiguous() &&
             plan_.buffer_bytes * static_cast<uint64_t>(plan_.buffers) <= UINT32_MAX) {
    // Every byte aggregated and copied from contiguous memory: found from the plan as it is copied.
    transfers_ = std::make_shared<const PackedTransfers>(PackedTransfers::copied_by_plan(plan_.global_rounds));
  } else if (copy_) {
    transfers_ =
        std::make_shared<const PackedTransfers>(PackedTransfers::copied(transfers_by_round(plan_, aggregated())));
  } else {
    transfers_ = std::make_shared<const PackedTransfers>(transfers_by_round(plan_, aggregated()), pack_from);
  }
  step("transfers");
  // 7. One agreement for both: overlaps found by aggregators, and opening the files. A
  // committed write by owners alone has nothing to agree on before it writes: its files are
  // new partial files, so a failure to open one is agreed at close (which discards them).
  defer_open_ = mode_ == PhaseMode::write && commit_ && strategy_.best().direct && direct_all.empty();
  open_and_finish(t0, defer_open_, &direct_all, &received);
  keep_plan(all, defer_open_);
  step("kept");
}

void PhaseImpl::open_and_finish(double t0, bool defer, const std::vector<ReceivedRange>* direct_all,
                                const ReceivedRanges* received) {
  const Machine& machine = engine_.machine_once();
  if (!options_.tiers.dry_run && plan_.partitions() > 0 && !owners_local_) {
    const uint64_t allocations = engine_.window_allocations;
    window_ = &engine_.window_for(window_needs(), window_tiers(), rank_, copy_);
    if (engine_.window_allocations != allocations) stats_.collectives += 2;  // free and allocate
  }
  plan_steps_s_.emplace_back("window", MPI_Wtime());
  auto open_step = [&] {
    if (direct_all != nullptr) {  // a fresh plan: overlaps checked, each round's file I/O planned
      check_direct_overlaps(*direct_all, *received);
      if (owners_local_) {
        check_received_overlaps(*received);  // no rounds to plan: the owners write
      } else if (my_partition_ >= 0) {
        std::vector<RoundIo> rounds =
            plan_round_io(rounds_of_partition(plan_, my_partition_, *received), *direct_all, span_policy(),
                          options_.hole_limit.value_or(hole_limit_from(machine.io)), machine.io);
        if (transfers_ && transfers_->staged()) {  // where each run landed, placed in file order
          auto places = staged_places(plan_, my_partition_, *received, size_);
          for (size_t g = 0; g < places.size() && g < rounds.size(); ++g) rounds[g].places = std::move(places[g]);
        }
        round_io_ = std::make_shared<const std::vector<RoundIo>>(std::move(rounds));
      }
    }
    if (options_.tiers.dry_run) return;  // tiers: plan and placement only
    open_file();
    // The stream is allocated here, so running out of memory is agreed like any error.
    // The last phase's, so its pages are not faulted in again; not cleared (the packing or the
    // reads fill every byte of it), so a phase of the same size writes nothing here.
    stream_ = engine_.take_stream();
    stream_.resize(need_stream() ? sel_.bytes : 0);
    // Staged: an aggregator places its rounds' runs into buffers of its own (uninitialised: the
    // runs and the holes' zeros cover every byte it writes), the last phase's when they fit.
    if (transfers_ && transfers_->staged() && my_partition_ >= 0) {
      placed_ = engine_.take_placed();
      placed_.resize(plan_.buffer_bytes * static_cast<uint64_t>(plan_.buffers));
    }
    if (mode_ == PhaseMode::write && !commit_ && !options_.tiers.in_place && rank_ == 0) remove_stale_index();
  };
  if (!defer) {
    collectively(comm_, open_step);
    ++stats_.collectives;
  } else {
    deferred_error_ = caught(open_step);
  }
  plan_steps_s_.emplace_back("open", MPI_Wtime());
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
  if (my_partition_ >= 0 && !engine_.tier_window_refused.empty()) stats_.tier = tier_name(Tier::dram);
  stats_.tier_fallbacks = placement_.fallbacks;
  stats_.strategy = strategy_.alternatives.empty() ? "" : strategy_.alternatives[strategy_.chosen].name;
  // The model's prediction in two parts: the plan (or its reuse), and the write with its close,
  // which a write predicts at this job's measured ratio for such a file (new or recycled:
  // engine/plan/write_calibration.hpp). The choice of strategy is the model's alone.
  double plan_part = 0, write_part = 0;
  if (!strategy_.alternatives.empty()) {
    const Alternative& a = strategy_.best();
    const PredictionParts parts = prediction_parts(a, machine.io, size_, stats_.plan_reused, repeated_,
                                                   program_for_ != nullptr && program_for_ == transfers_);
    plan_part = parts.plan_s;
    write_part = parts.write_s;
    if (owners_local_) {
      stats_.strategy += ", owners writing their node's files";
      if (!stats_.plan_reused) {  // nothing moves: the I/O alone
        plan_part = 0;
        write_part = a.io_s;
      }
    }
  }
  calibrated_ = mode_ == PhaseMode::write && !drain_ && write_part > 0;
  stats_.model_s = plan_part + write_part;
  stats_.model_write_s = write_part;
  stats_.calibration = calibrated_ ? engine_.calibration.ratio(strategy_.input.recycled, agreed_key_) : 1;
  stats_.predicted_s = plan_part + write_part * stats_.calibration;
  stats_.operations = window_ != nullptr && window_->shared() ? 0 : transfers_->operations();
  state_ = State::planned;
  if (log::enabled(log::Level::debug)) log_plan();
}

// Reuse: the cached plan as this phase's. The declared pieces (the same as the first phase's
// but for their memory) are the selection's, in the order normalise() gave them: the k-th
// non-empty piece declared is piece order[k]. After the plan only the pieces and the byte
// counts of the selection are used, so its extents are neither kept nor copied.
void PhaseImpl::reuse(const CachedPlan& c, int64_t shift, bool recycled) {
  std::vector<Piece> sorted;
  if (repeated_) sorted = std::move(sel_.pieces);  // in file order already
  sel_ = Selection{};
  sel_.bytes = c.sel.bytes;
  sel_.lo = c.sel.lo;
  sel_.hi = c.sel.hi;
  if (repeated_) {
    sel_.pieces = std::move(sorted);  // (or views_, carried by repeat_of())
  } else if (c.order.empty() && c.direct.empty() && view_selection()) {
    // Viewed as the first plan's pieces were (or could have been: their order is the file's).
  } else {
    materialize();
    const bool empties = std::any_of(pieces_.begin(), pieces_.end(), [](const Piece& p) { return p.length == 0; });
    if (empties) {
      pieces_.erase(std::remove_if(pieces_.begin(), pieces_.end(), [](const Piece& p) { return p.length == 0; }),
                    pieces_.end());
    }
    if (c.order.empty()) {
      sel_.pieces = std::move(pieces_);
    } else {
      sel_.pieces.resize(pieces_.size());
      for (size_t k = 0; k < pieces_.size(); ++k) sel_.pieces[c.order[k]] = pieces_[k];
    }
  }
  pieces_ = {};
  order_ = c.order;
  agg_ = c.agg;
  agg_all_ = extents_pending_ = false;
  direct_ = c.direct;
  plan_ = c.plan;
  my_partition_ = c.my_partition;
  round_io_ = c.round_io;
  transfers_ = c.transfers;
  strategy_ =
      recycled == c.strategy.input.recycled || c.strategy_other.alternatives.empty() ? c.strategy : c.strategy_other;
  placement_ = c.placement;
  tier_of_partition_ = c.tier_of_partition;
  files_ = FileSet(c.files, c.subfiled);
  declared_bytes_ = c.declared_bytes;
  commit_ = c.commit;
  defer_open_ = c.defer_open;
  copy_ = c.copy;
  owners_local_ = c.owners_local;
  node_local_tiled_ = c.node_local_tiled;
  sole_owner_ = c.sole_owner;
  stats_.plan_reused = true;
  if (shift != 0) shift_plan(shift);
  // A write's files are named from this phase's path (the plan may be another output's).
  if (mode_ != PhaseMode::read) files_ = choose_files({});
}

void PhaseImpl::shift_plan(int64_t shift) {
  const auto moved = [shift](uint64_t offset) { return offset + static_cast<uint64_t>(shift); };  // modulo 2^64
  if (sel_.bytes > 0) {
    sel_.lo = moved(sel_.lo);
    sel_.hi = moved(sel_.hi);
  }
  if (agg_.bytes > 0) {
    agg_.lo = moved(agg_.lo);
    agg_.hi = moved(agg_.hi);
  }
  for (StreamExtent& e : direct_) e.file_offset = moved(e.file_offset);
  plan_.lo = moved(plan_.lo);
  plan_.hi = moved(plan_.hi);
  for (uint64_t& s : plan_.start) s = moved(s);
  for (uint64_t& e : plan_.end) e = moved(e);
  if (round_io_) {
    auto rounds = std::make_shared<std::vector<RoundIo>>(*round_io_);
    for (RoundIo& r : *rounds) {
      for (RoundSpan& s : r.spans) s.file_offset = moved(s.file_offset);
      for (auto& h : r.holes) h.first = moved(h.first);
    }
    round_io_ = std::move(rounds);
  }
  for (PlacedPartition& p : placement_.partitions) {
    p.begin = moved(p.begin);
    p.end = moved(p.end);
  }
  stats_.plan_shift = shift;
}

// After a fresh plan that every rank completed: this rank's part of it kept under the agreed key.
void PhaseImpl::keep_plan(const std::vector<RankSummary>& all, bool defer_open) {
  auto c = std::make_shared<CachedPlan>();
  c->key = agreed_key_;
  c->relative_key = agreed_relative_;
  c->my_relative = relative_key_;
  c->my_base = pieces_base_;
  c->aligned_shifts = all[0].striped != 0 || options_.align.has_value();
  for (const RankSummary& s : all) c->runs += s.runs;
  c->sel.bytes = sel_.bytes;  // the pieces come from the next phase's declarations
  c->sel.lo = sel_.lo;
  c->sel.hi = sel_.hi;
  c->order = order_;
  c->agg.bytes = agg_.bytes;  // the extents were for planning only
  c->agg.lo = agg_.lo;
  c->agg.hi = agg_.hi;
  c->direct = direct_;
  c->plan = plan_;
  c->my_partition = my_partition_;
  c->round_io = round_io_;
  c->transfers = transfers_;
  c->strategy = strategy_;
  // Priced for the other file too (a write into the recycled file, or into a new one), here
  // rather than at each reuse: pricing every alternative again costs a reused small phase a
  // third of its plan (25 us of 2 ranks' 0.03 ms).
  if (mode_ == PhaseMode::write)
    c->strategy_other = repriced(strategy_, !strategy_.input.recycled, engine_.machine_once().io);
  c->placement = placement_;
  c->tier_of_partition = tier_of_partition_;
  for (const SubFile& f : files_.files()) c->files.push_back({f.path, f.begin, f.end, -1});
  c->subfiled = files_.subfiled();
  c->declared_bytes = declared_bytes_;
  c->commit = commit_;
  c->defer_open = defer_open;
  c->copy = copy_;
  c->owners_local = owners_local_;
  c->node_local_tiled = node_local_tiled_;
  c->sole_owner = sole_owner_;
  engine_.plans.keep(std::move(c));
}

// STRATA_LOG=debug: the plan's decisions, as rank 0 sees them (STRATA_LOG_ALL_RANKS=1: every rank).
void PhaseImpl::log_plan() const {
  const auto ms = log::milliseconds;
  log::debug("phase \"" + path_ + "\" (" + (mode_ == PhaseMode::write ? "write" : "read") +
             "): " + std::to_string(sel_.bytes) + " bytes here, " + std::to_string(size_) + " ranks on " +
             std::to_string(engine_.nodes.node_count) + " node(s), commit " + (commit_ ? "new files" : "in place") +
             ", machine figures " +
             (engine_.machine_once().io.measured
                  ? (engine_.machine_once().io.doubtful() ? "measured on a busy machine" : "measured")
                  : "stated defaults"));
  for (size_t i = 0; i < strategy_.alternatives.size(); ++i) {
    const Alternative& a = strategy_.alternatives[i];
    log::debug(std::string(i == strategy_.chosen ? "  chosen    " : "  candidate ") + a.name + ": predicted " +
               ms(a.predicted_s) + " (movement " + ms(a.move_s) + ", I/O " + ms(a.io_s) + ", synchronisation " +
               ms(a.sync_s) + ", " + std::to_string(a.rounds) + " rounds)");
  }
  log::debug("  plan: " + std::to_string(plan_.partitions()) + " partition(s), " + std::to_string(plan_.global_rounds) +
             " round(s) of " + std::to_string(plan_.buffer_bytes) + " bytes x " + std::to_string(plan_.buffers) +
             " buffer(s); " + std::to_string(sel_.bytes - agg_.bytes) + " bytes direct here; " +
             std::to_string(transfers_->operations()) + " one-sided operation(s) here" +
             (transfers_->staged() ? " (staged: placed by their aggregators)" : std::string()) +
             (owners_local_ ? " (owners write their node's partition files)" : ""));
  for (size_t p = 0; p < placement_.partitions.size(); ++p) {
    const PlacedPartition& part = placement_.partitions[p];
    log::debug("  partition " + std::to_string(p) + " [" + std::to_string(part.begin) + ", " +
               std::to_string(part.end) + "): aggregator rank " + std::to_string(part.aggregator) + " on node " +
               std::to_string(part.node) + ", tier " + part.tier +
               (part.fallback ? " (fallback: the cheapest tier lacked capacity)" : "") + ", cost " + ms(part.cost_s));
  }
  std::string steps;
  for (size_t i = 1; i < plan_steps_s_.size(); ++i) {
    steps += std::string(i > 1 ? ", " : " (") + plan_steps_s_[i].first + " " +
             ms(plan_steps_s_[i].second - plan_steps_s_[i - 1].second);
  }
  if (!steps.empty()) steps += ")";
  log::debug("  plan took " + ms(stats_.plan_s) + ", " + std::to_string(stats_.collectives) + " collective(s)" + steps);
}

// Step 1: options, the normalised selection and this rank's summary. Rank 0 also looks at the
// file system and prepares the commit. A failure is kept for the agreement.
RankSummary PhaseImpl::local_start(std::optional<Error>& failure) {
  RankSummary mine{};
  mine.lo = UINT64_MAX;
  mine.variables = vars_.size();
  mine.fs_block = 4096;
  mine.ok = 1;
  declared_bytes_ = 0;
  try {
    if (failure) throw *failure;
    options_ = PhaseOptions::from_hints(hints_);
    if (rank_ == 0) {
      const auto known = engine_.clean.find(path_);
      clean_ = known != engine_.clean.end() && !options_.tiers.dry_run && options_.subfile_group == 0 &&
               !options_.tiers.node_local;
      if (clean_) {
        fs_ = known->second;
      } else {
        const FsInfo fs = fs_info(path_);
        fs_.fs_block = std::max<uint64_t>(fs.block_size, 512);
        fs_.striped = fs.type == "lustre" || fs.type == "gpfs" || fs.type == "beegfs" || fs.type == "orangefs";
      }
      if (!options_.align) mine.fs_block = fs_.fs_block;
      mine.striped = fs_.striped ? 1 : 0;
      mine.in_place = prepare_commit() ? 0 : 1;
      mine.recycled = recycled_ ? 1 : 0;
    }
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {  // a filesystem_error, bad_alloc...: still reported everywhere
    failure = Error(ErrorKind::runtime, e.what());
  }
  // Tiers: a node-local target is a file per partition on its aggregator's node, so every byte
  // passes through the aggregator of its partition.
  drain_group_ = options_.subfile_group;  // a drain's target keeps the layout asked for
  if (options_.tiers.node_local) options_.subfile_group = 1;
  key_ = failure ? 0 : plan_key(mine);
  if (failure) relative_key_ = 0;
  mine.key = key_;
  mine.relative = relative_key_;
  return mine;
}

// This rank's plan key (engine/plan_cache.hpp): what its plan depends on, memory addresses
// excepted. Rank 0 adds what it saw of the file: whether the write commits, the block size,
// striping, and for a read the identity of the index that lists the files.
uint64_t PhaseImpl::plan_key(const RankSummary& mine) {
  KeyHasher h;
  if (mode_ == PhaseMode::read) h.add(path_.data(), path_.size());  // a write's files are named afresh
  h.add(static_cast<uint64_t>(mode_ == PhaseMode::write ? 1 : 2));
  h.add(options_.hash());
  for (const PhaseVariable& v : vars_) h.add(v.signature());
  h.add(static_cast<uint64_t>(vars_.size()));
  if (!repeated_) {
    pieces_base_ = declared_lo_;  // the lowest offset declared (kNoBase: none)
    KeyHasher pieces;
    // A block declared like another variable's runs is those runs moved by the variables' offsets
    // (both in the key): the block is hashed as which variable copies which, not piece by piece.
    const uint64_t base = pieces_base_ == CachedPlan::kNoBase ? 0 : pieces_base_;
    size_t at = 0;
    for (const LikeBlock& b : like_blocks_) {
      pieces.add_piece_fields(pieces_.data() + at, b.at - at, base);
      const uint64_t marker[3] = {UINT64_MAX, static_cast<uint64_t>(b.var), static_cast<uint64_t>(b.like)};
      pieces.add(marker, sizeof marker);
      at = b.at;
    }
    pieces.add_piece_fields(pieces_.data() + at, pieces_.size() - at, base);
    pieces.add(static_cast<uint64_t>(pieces_.size() + like_pieces_));
    pieces_digest_ = pieces.digest();
  }
  h.add(pieces_digest_);
  if (rank_ == 0) {
    h.add(mine.fs_block);
    h.add(mine.striped);
    h.add(mine.in_place);
    struct stat st {};
    if (mode_ == PhaseMode::read && ::stat(index_path(index_output()).c_str(), &st) == 0) {
      const uint64_t id[4] = {static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                              static_cast<uint64_t>(st.st_mtim.tv_sec), static_cast<uint64_t>(st.st_mtim.tv_nsec)};
      h.add(id, sizeof id);
    }
  }
  relative_key_ = h.digest();
  // A read's runs stay where they were declared: its relative key is its key.
  if (mode_ == PhaseMode::read) return relative_key_;
  return splitmix64(relative_key_ ^ splitmix64(pieces_base_ + 0x9E3779B97F4A7C15ULL));
}

// Step 1b: the normalised selection and this rank's summary (a fresh plan).
void PhaseImpl::local_summary(RankSummary& mine, std::optional<Error>& failure) {
  if (!failure) {
    try {
      if (view_selection()) {
        sel_ = Selection{};
        sel_.bytes = views_.bytes;
        if (views_.bytes > 0) {
          sel_.lo = views_.blocks.front().lo;
          sel_.hi = views_.blocks.back().hi;
        }
        order_.clear();  // declared in file order
      } else {
        materialize();
        sel_ = normalise(
            std::move(pieces_), [this](uint64_t at) { return name_at(at); }, &order_, false);
      }
      extents_pending_ = true;
    } catch (const Error& e) {
      failure = e;
    } catch (const std::exception& e) {
      failure = Error(ErrorKind::runtime, e.what());
    }
  }
  pieces_ = {};
  // The hybrid split, counted at its threshold (the strategy decides whether it is used).
  const Selection& s = sel_;
  if (s.bytes > 0) {
    mine.lo = s.lo;
    mine.hi = s.hi;
  }
  mine.bytes = s.bytes;
  mine.runs = 0;
  mine.pieces = viewed_ ? views_.count : s.pieces.size();
  mine.viewed = viewed_ ? like_pieces_ : 0;
  mine.h_lo = mine.d_lo = UINT64_MAX;
  const uint64_t unit = hybrid_unit(), threshold = hybrid_threshold();
  const auto summarise = [&](uint64_t file_offset, uint64_t length) {
    const StreamExtent e{file_offset, length, 0};
    ++mine.runs;
    const uint64_t term = boundary(e.file_offset) - boundary(e.file_offset + e.length);
    mine.tiling += term;
    // (A run shorter than the threshold has no aligned part that long: no division for it.)
    if (threshold == 0 || e.length < threshold) {
      if (e.length == 0) return;
      mine.h_tiling += term;
      mine.h_lo = std::min(mine.h_lo, e.file_offset);
      mine.h_hi = std::max(mine.h_hi, e.file_offset + e.length);
      mine.h_bytes += e.length;
      return;
    }
    const uint64_t a = (e.file_offset + unit - 1) / unit * unit;
    const uint64_t b = (e.file_offset + e.length) / unit * unit;
    const bool direct = b > a && b - a >= threshold;
    auto keep = [&](uint64_t off, uint64_t len) {
      if (len == 0) return;
      mine.h_tiling += boundary(off) - boundary(off + len);
      mine.h_lo = std::min(mine.h_lo, off);
      mine.h_hi = std::max(mine.h_hi, off + len);
      mine.h_bytes += len;
    };
    if (!direct) {
      keep(e.file_offset, e.length);
      return;
    }
    keep(e.file_offset, a - e.file_offset);
    keep(b, e.file_offset + e.length - b);
    mine.d_lo = std::min(mine.d_lo, a);
    mine.d_hi = std::max(mine.d_hi, b);
    mine.d_bytes += b - a;
    ++mine.d_runs;
  };
  if (viewed_) {
    for_each_extent(views_, summarise);
  } else {
    for_each_extent(s.pieces, summarise);
  }
  direct_candidates_ = mine.d_runs;
  if (mine.h_bytes == 0) mine.h_lo = 0;
  if (mine.d_bytes == 0) mine.d_lo = 0;
  mine.config = options_.hash();
  for (const auto& v : vars_) mine.signature = fnv1a(&mine.signature, sizeof mine.signature, v.signature());
  mine.ok = failure ? 0 : 1;
}

void PhaseImpl::materialize() {
  if (like_blocks_.empty()) return;
  std::vector<Piece> all;
  all.reserve(pieces_.size() + like_pieces_);
  size_t at = 0;
  for (const LikeBlock& b : like_blocks_) {
    all.insert(all.end(), pieces_.begin() + static_cast<std::ptrdiff_t>(at),
               pieces_.begin() + static_cast<std::ptrdiff_t>(b.at));
    const PieceBlock moved{0, 0, b.shift, b.memory, 0, 0};
    for (size_t i = b.begin; i < b.end; ++i) all.push_back(PieceViews::moved(pieces_[i], moved));
    at = b.at;
  }
  all.insert(all.end(), pieces_.begin() + static_cast<std::ptrdiff_t>(at), pieces_.end());
  pieces_ = std::move(all);
  like_blocks_.clear();
  like_sources_.clear();
  like_pieces_ = 0;
}

bool PhaseImpl::view_selection() {
  views_ = PieceViews{};
  viewed_ = false;
  if (like_blocks_.empty()) return false;  // nothing to spare: one array as declared
  std::vector<PieceBlock> blocks;
  blocks.reserve(2 * like_blocks_.size() + 1);
  uint64_t bytes = 0;
  size_t count = 0;
  // Each block in declaration order must begin where the one before it ended, or after.
  const auto add = [&](size_t begin, size_t end, uint64_t shift, std::ptrdiff_t memory) {
    if (begin == end) return true;
    const LikeSource& src = like_source(begin, end);
    if (!src.sorted) return false;
    const PieceBlock b{begin, end, shift, memory, src.lo + shift, src.hi + shift};
    if (!blocks.empty() && b.lo < blocks.back().hi) return false;
    blocks.push_back(b);
    bytes += src.bytes;
    count += end - begin;
    return true;
  };
  size_t at = 0;
  for (const LikeBlock& b : like_blocks_) {
    if (!add(at, b.at, 0, 0) || !add(b.begin, b.end, b.shift, b.memory)) return false;
    at = b.at;
  }
  if (!add(at, pieces_.size(), 0, 0)) return false;
  views_.base = std::move(pieces_);
  pieces_ = {};
  views_.blocks = std::move(blocks);
  views_.count = count;
  views_.bytes = bytes;
  viewed_ = true;
  return true;
}

void PhaseImpl::flatten_selection() {
  if (!viewed_) return;
  sel_.pieces = views_.flatten();
  views_ = PieceViews{};
  viewed_ = false;
}

// The partition unit direct runs are aligned to: the stripe size when given, else 1 MiB
// (aligned on any usual stripe).
uint64_t PhaseImpl::hybrid_unit() const { return options_.align.value_or(uint64_t{1} << 20); }

// Runs whose aligned part is at least this long may go direct beside the rounds (0: none):
// strata_direct_threshold, else S_buff (4 MiB without a hint), at least the unit. Subfiles and
// node-local targets hold the aggregators' partitions, so a write with them aggregates all.
uint64_t PhaseImpl::hybrid_threshold() const {
  if (mode_ == PhaseMode::write && (options_.subfile_group > 0 || options_.tiers.node_local)) return 0;
  if (options_.direct_threshold) return *options_.direct_threshold;
  return std::max<uint64_t>(options_.buffer_bytes.value_or(kDefaultBuffer), hybrid_unit());
}

// Step 2. Collective on every rank alike.
void PhaseImpl::agree(const std::vector<RankSummary>& all, const std::optional<Error>& failure) {
  for (int r = 0; r < size_; ++r) {
    if (all[static_cast<size_t>(r)].ok == 0) raise_from(comm_, r, failure ? &*failure : nullptr);
  }
  for (const RankSummary& s : all) {
    if (s.config != all[0].config) {
      throw Error(ErrorKind::usage,
                  "ranks pass different engine hints (cb_buffer_size, strata_buffers, aggregators, "
                  "striping, subfiling...): every rank must give the same");
    }
  }
  for (const RankSummary& s : all) {
    if (s.variables != all[0].variables || s.signature != all[0].signature) {
      check_variables();  // collective on every rank alike: names the variable that differs
      stats_.collectives += 4;
      break;
    }
  }
  for (const RankSummary& s : all) declared_bytes_ += s.bytes;
  commit_ = mode_ == PhaseMode::write && all[0].in_place == 0;
}

// Step 3: the alternatives the hints leave open, each predicted from the summaries and the
// machine's figures; the cheapest is taken. Every rank computes the same.
// How many intervals the ranks' runs make together, estimated by one reduction of a sketch
// (plan/run_sketch.hpp) — only where it can change the choice: many runs written run by run at
// the aggregators (in place, no whole spans) and both owners and aggregators open; when the ranks
// tile the domain (the summaries say so) it is one, without a sketch. The condition
// holds on every rank alike (it reads only the summaries and the agreed options).
std::optional<uint64_t> PhaseImpl::touching_intervals(const std::vector<RankSummary>& all, const StrategyInput& in) {
  uint64_t runs = 0;
  for (const RankSummary& s : all) runs += s.runs;
  if (in.dense) return uint64_t{1};  // the ranks tile the domain: one interval, known without a sketch
  const bool matters = mode_ == PhaseMode::write && !in.whole_spans && in.direct_allowed &&
                       options_.strategy == PhaseOptions::Strategy::automatic && !options_.tiers.forced.has_value() &&
                       runs >= kSketchRuns * static_cast<uint64_t>(size_);
  if (!matters) return std::nullopt;
  RunSketch sketch;
  for (const StreamExtent& e : extents()) sketch.add_run(e.file_offset, e.length);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, sketch.registers().data(), static_cast<int>(RunSketch::kRegisters),
                          MPI_UNSIGNED_CHAR, MPI_MAX, comm_),
            "MPI_Allreduce");
  ++stats_.collectives;
  const uint64_t intervals = sketch.intervals(runs);
  if (rank_ == 0) {
    log::debug("phase \"" + path_ + "\": " + std::to_string(runs) + " runs make about " + std::to_string(intervals) +
               " interval(s) together");
  }
  return intervals;
}

void PhaseImpl::choose_strategy_of(const std::vector<RankSummary>& all) {
  const Machine& machine = engine_.machine_once();
  machine.check_covers(engine_.nodes.node_count);  // a usage error on every rank alike, whatever the strategy
  StrategyInput in;
  for (const RankSummary& s : all)
    in.ranks.push_back({s.lo, s.hi, s.bytes, s.runs, s.d_bytes, s.d_runs, s.pieces, s.viewed});
  in.nodes = engine_.nodes.node_count;
  in.cores_per_node = engine_.cores_per_node();
  in.align = options_.align.value_or(all[0].fs_block);
  in.write = mode_ == PhaseMode::write;
  in.whole_spans = mode_ == PhaseMode::read || commit_;
  in.commit = commit_;
  in.recycled = all[0].recycled != 0;
  if (options_.spans == PhaseOptions::Choice::off) in.whole_spans = false;
  in.sieve_allowed = !options_.tiers.in_place;  // the caller's file: no byte no rank declared is read back or written
  const bool aggregate_only = mode_ == PhaseMode::write && (options_.subfile_group > 0 || options_.tiers.node_local);
  // Owners write unaligned runs themselves only where no stripe lock makes them contend.
  in.direct_allowed = !aggregate_only && !options_.tiers.node_local &&
                      (all[0].striped == 0 || options_.strategy == PhaseOptions::Strategy::direct);
  in.dense = dense_and_tiled(all, false);
  in.intervals = touching_intervals(all, in);
  in.hybrid_threshold = hybrid_threshold();
  in.aggregators = options_.aggregators;
  if (!in.aggregators && options_.stripe_count > 0) {
    in.aggregators = std::max(engine_.nodes.node_count, options_.stripe_count);  // at least one per stripe
  }
  if (options_.buffer_bytes) {
    in.buffer_bytes = options_.buffer_bytes;
  } else if (options_.align) {
    in.buffer_bytes = options_.align;  // the paper's 1:1 finding: S_buff = the stripe size
  }
  if (in.buffer_bytes) in.buffer_bytes = std::max(in.align, (*in.buffer_bytes + in.align - 1) / in.align * in.align);
  in.buffers = options_.buffers;
  in.force_direct = options_.strategy == PhaseOptions::Strategy::direct;
  // A forced tier (hint strata_aggr_tier, STRATA_AGGR_TIER) asks for aggregation on it.
  in.force_aggregate = options_.strategy == PhaseOptions::Strategy::aggregate || aggregate_only ||
                       (options_.tiers.forced.has_value() && options_.strategy != PhaseOptions::Strategy::direct);
  in.hybrid_forced_off = in.hybrid_threshold == 0;
  in.hybrid_forced_on = options_.direct_threshold.has_value() && *options_.direct_threshold > 0;
  in.pack = options_.pack != PhaseOptions::Choice::off;
  in.stage = in.write && options_.stage != PhaseOptions::Choice::off;
  in.stage_forced = in.write && options_.stage == PhaseOptions::Choice::on;
  in.shared_copy = engine_.shared_memory && options_.copy != PhaseOptions::Choice::off &&
                   (!options_.tiers.forced || *options_.tiers.forced == Tier::dram);
  in.one_file_lock = all[0].striped == 0 && !aggregate_only;
  if (engine_.window.get() != MPI_WIN_NULL && engine_.window.shared() && !engine_.window_bytes.empty()) {
    in.window_kept = *std::max_element(engine_.window_bytes.begin(), engine_.window_bytes.end());
  }
  in.compare_mpiio = options_.compare_mpiio;
  in.mpiio_romio = options_.mpiio_romio;
  in.mpiio_buffer = in.mpiio_romio          ? options_.buffer_bytes
                    : options_.buffer_bytes ? options_.buffer_bytes
                                            : options_.ompio_bytes_per_agg;
  in.mpiio_aggregators = options_.aggregators;
  strategy_ = choose_strategy(in, machine.io);
  if (strategy_.alternatives.empty()) throw_runtime("internal: no strategy for this phase");
}

// Splits sel_ into direct runs and the aggregated rest, as the strategy says: everything
// direct; or runs whose aligned part reaches the hybrid threshold direct (their unaligned heads
// and tails aggregated); or everything aggregated. The selection's extents are not used after
// this step (only its pieces and byte counts): where one side takes them all, they move.
void PhaseImpl::split_direct() {
  agg_ = Selection{};
  agg_all_ = false;
  direct_.clear();
  const Alternative& s = strategy_.best();
  if (s.direct) {
    extents();
    direct_ = std::move(sel_.extents);
    sel_.extents.clear();
    return;
  }
  const uint64_t unit = hybrid_unit();
  const uint64_t threshold = s.hybrid ? hybrid_threshold() : 0;
  if ((threshold == 0 || direct_candidates_ == 0) && sel_.bytes > 0) {  // all aggregated: no per-run work
    agg_all_ = true;  // its extents are the selection's, when a step needs them
    agg_.lo = sel_.lo;
    agg_.hi = sel_.hi;
    agg_.bytes = sel_.bytes;
    return;
  }
  auto keep = [&](uint64_t off, uint64_t len, uint64_t stream) {
    if (len == 0) return;
    if (agg_.bytes == 0) agg_.lo = off;
    agg_.hi = off + len;
    agg_.bytes += len;
    agg_.extents.push_back({off, len, stream});
  };
  for (const StreamExtent& e : extents()) {
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

const std::vector<StreamExtent>& PhaseImpl::extents() {
  if (extents_pending_) {
    flatten_selection();
    sel_.extents = extents_of(sel_.pieces);
    extents_pending_ = false;
  }
  return sel_.extents;
}

const Selection& PhaseImpl::aggregated() {
  if (agg_all_) {
    extents();
    agg_.extents = std::move(sel_.extents);
    sel_.extents.clear();
    agg_all_ = false;
  }
  return agg_;
}

// A node-local write (strata_target=node-local, strata_drain) aggregates every byte because
// each partition is a file on its aggregator's node. Where every partition holds the bytes of
// one node's ranks only, the owners can write that node's files themselves: nothing moves
// between ranks, no window, no rounds (a rank's own block, or a node's ranks' blocks in the
// node's partitions). Each such partition's aggregator (who creates its file) is then a rank of
// that node — the elected one when it is, else a free rank of the node. Not when the hints ask
// for aggregation or a tier, nor when the owners' many small writes would cost more than the
// aggregated rounds. Same answer on every rank: it reads only the summaries and the plan.
bool PhaseImpl::owners_write_node_files(const std::vector<RankSummary>& all) {
  if (mode_ != PhaseMode::write || !options_.tiers.node_local || options_.tiers.dry_run) return false;
  if (options_.strategy != PhaseOptions::Strategy::automatic || options_.tiers.forced.has_value()) return false;
  const Alternative& s = strategy_.best();
  const int parts = plan_.partitions();
  if (s.direct || s.hybrid || parts == 0) return false;
  const std::vector<int>& node_of = engine_.nodes.node_of_rank;
  std::vector<int> node_of_part(static_cast<size_t>(parts), -1), writers(static_cast<size_t>(parts), 0),
      writer(static_cast<size_t>(parts), -1);
  std::map<int, int> ranks_of_node;
  for (int n : node_of) ++ranks_of_node[n];
  // Their cost: each owner's writes (its runs, one request each), ranks beyond the node's cores
  // taking turns; aggregation's is the chosen alternative's (its moves, rounds and writes).
  const IoFigures& io = engine_.machine_once().io;
  const int cores = std::max(engine_.cores_per_node(), 1);
  double owners_s = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    const RankSummary& mine = all[r];
    if (mine.bytes == 0) continue;
    const int first = plan_.partition_of(mine.lo), last = plan_.partition_of(mine.hi - 1);
    if (first < 0 || last < first) return false;
    for (int p = first; p <= last; ++p) {
      int& n = node_of_part[static_cast<size_t>(p)];
      if (n >= 0 && n != node_of[r]) return false;  // two nodes' bytes in one partition
      n = node_of[r];
      ++writers[static_cast<size_t>(p)];
      writer[static_cast<size_t>(p)] = static_cast<int>(r);
    }
    const int turns = (ranks_of_node[node_of[r]] + cores - 1) / cores;
    owners_s = std::max(owners_s, io.writes_s(mine.runs, mine.bytes) * turns);
  }
  if (owners_s > s.predicted_s) return false;
  // Aggregators on the partitions' nodes: the elected ones where they are, free ranks elsewhere.
  std::vector<int> aggregator = plan_.aggregator;
  std::vector<char> taken(all.size(), 0);
  std::vector<int> moved;
  for (int p = 0; p < parts; ++p) {
    const int n = node_of_part[static_cast<size_t>(p)];
    const int a = aggregator[static_cast<size_t>(p)];
    if (n < 0 || node_of[static_cast<size_t>(a)] == n) {
      taken[static_cast<size_t>(a)] = 1;
    } else {
      moved.push_back(p);
    }
  }
  for (int p : moved) {
    const int n = node_of_part[static_cast<size_t>(p)];
    int free = -1;
    for (size_t r = 0; r < all.size() && free < 0; ++r) {
      if (node_of[r] == n && taken[r] == 0) free = static_cast<int>(r);
    }
    if (free < 0) return false;  // more partitions on the node than ranks
    taken[static_cast<size_t>(free)] = 1;
    aggregator[static_cast<size_t>(p)] = free;
  }
  plan_.aggregator = std::move(aggregator);
  my_partition_ = plan_.partition_of_rank(rank_);
  sole_owner_ = my_partition_ >= 0 && writers[static_cast<size_t>(my_partition_)] == 1 &&
                writer[static_cast<size_t>(my_partition_)] == rank_;
  for (size_t p = 0; p < placement_.partitions.size(); ++p) {
    placement_.partitions[p].aggregator = plan_.aggregator[p];
    placement_.partitions[p].node = node_of[static_cast<size_t>(plan_.aggregator[p])];
  }
  return true;
}

// The aggregated runs become this rank's own (into the partition files, by FileSet::split);
// the plan keeps its partitions (the files and the index) without rounds.
void PhaseImpl::hand_runs_to_owners() {
  aggregated();
  direct_ = std::move(agg_.extents);
  agg_ = Selection{};
  std::fill(plan_.rounds.begin(), plan_.rounds.end(), uint64_t{0});
  plan_.global_rounds = 0;
}

// Step 4: the plan of the aggregated bytes and the election of aggregators and tiers.
void PhaseImpl::partition(const std::vector<RankSummary>& all) {
  const Alternative& s = strategy_.best();
  PlanInput in;
  in.lo = UINT64_MAX;
  for (const RankSummary& r : all) {
    const uint64_t bytes = s.direct ? 0 : s.hybrid ? r.h_bytes : r.bytes;
    if (bytes == 0) continue;
    in.lo = std::min(in.lo, s.hybrid ? r.h_lo : r.lo);
    in.hi = std::max(in.hi, s.hybrid ? r.h_hi : r.hi);
    in.total_bytes += bytes;
  }
  if (in.total_bytes == 0) in.lo = in.hi = 0;
  in.node_of_rank = engine_.nodes.node_of_rank;
  in.align = options_.align.value_or(all[0].fs_block);
  uint64_t buffer = s.buffer_bytes != 0 ? s.buffer_bytes : kDefaultBuffer;
  buffer = std::max(in.align, (buffer + in.align - 1) / in.align * in.align);  // a whole number of units
  in.buffer_bytes = std::min(buffer, std::max(kMaxBuffer / in.align, uint64_t{1}) * in.align);
  in.buffers = s.buffers > 0 ? s.buffers : options_.buffers.value_or(2);  // a direct strategy: N_buff as asked
  in.aggregators = s.aggregators;
  plan_ = make_plan(in);
  tier_of_partition_.clear();
  placement_ = PlacementReport{};
  if (plan_.partitions() > 0) {
    place_on_tiers();  // the same on every rank: all or none place
    stats_.collectives += options_.tiers.cost_table ? 4 : 2;
  }
  my_partition_ = plan_.partition_of_rank(rank_);
  const Machine& machine = engine_.machine_once();
  if (placement_.machine.empty()) placement_.machine = machine.name + " (" + machine.source + ")";
  placement_.figures_measured = machine.io.measured;
  placement_.figures_doubtful = machine.io.doubtful();
  for (size_t i = 0; i < strategy_.alternatives.size(); ++i) {
    const Alternative& a = strategy_.alternatives[i];
    placement_.strategies.push_back({a.name, a.direct, a.hybrid, i == strategy_.chosen && !a.mpiio, a.aggregators,
                                     a.buffers, a.buffer_bytes, a.rounds, a.predicted_s, a.move_s, a.io_s, a.sync_s,
                                     a.plan_s});
  }
}

// Step 5. Reading: rank 0 reads the output's index (if any) and shares its list of files.
void PhaseImpl::choose_phase_files() {
  if (mode_ != PhaseMode::read) {
    files_ = choose_files({});  // deterministic from the plan: nothing to agree on
    return;
  }
  std::vector<SubFile> listed;
  std::optional<Error> index_error;
  if (rank_ == 0 && !options_.tiers.in_place) {  // strata_target=in-place: the caller's one file, no index
    try {
      if (auto index = read_output_index(index_output())) {
        for (const auto& f : index->files) listed.push_back({resolve_indexed_path(path_, f.path), f.begin, f.end, -1});
      } else if (options_.tiers.node_local) {  // tiers: never fall back silently to the shared file
        throw_usage("no node-local copy of \"" + path_ + "\": " + index_path(index_output()) +
                    " is missing (write with hint strata_target=node-local first)");
      }
    } catch (const Error& e) {
      index_error = e;
    }
  }
  listed = share_from_rank0(listed);
  stats_.collectives += 3;
  collectively(comm_, [&] {
    if (index_error) throw *index_error;
    files_ = choose_files(std::move(listed));
  });
}

// Step 6a. Direct runs never pass through an aggregator, so their overlaps are checked here,
// and an aggregator must not fill a hole that a direct run writes. Every rank gets every direct
// run only when some direct run could meet another rank's bytes or an aggregated span: the
// summaries' intervals tell (direct runs are large or few, and ranks rarely interleave).
std::vector<ReceivedRange> PhaseImpl::direct_runs_to_know(const std::vector<RankSummary>& all) {
  const Alternative& s = strategy_.best();
  if (s.direct == false && s.hybrid == false) return {};
  // Owners writing everything, and their bytes tile the domain: no two can overlap.
  if (s.direct && dense_and_tiled(all, false)) return {};
  std::vector<std::pair<uint64_t, uint64_t>> direct, aggregated;
  std::vector<uint64_t> counts;
  for (const RankSummary& r : all) {
    const uint64_t bytes = s.direct ? r.bytes : r.d_bytes;
    counts.push_back(bytes == 0 ? 0 : s.direct ? r.runs : r.d_runs);
    if (bytes > 0) direct.emplace_back(s.direct ? r.lo : r.d_lo, s.direct ? r.hi : r.d_hi);
    if (!s.direct && r.h_bytes > 0) aggregated.emplace_back(r.h_lo, r.h_hi);
  }
  std::sort(direct.begin(), direct.end());
  std::sort(aggregated.begin(), aggregated.end());
  bool needed = false;
  for (size_t i = 1; i < direct.size() && !needed; ++i) needed = direct[i].first < direct[i - 1].second;
  // Any direct interval meeting the hull of the aggregated intervals.
  if (!aggregated.empty()) {
    uint64_t hi = 0;
    for (const auto& a : aggregated) hi = std::max(hi, a.second);
    for (const auto& d : direct) needed = needed || (d.first < hi && d.second > aggregated.front().first);
  }
  if (!needed) return {};
  ++stats_.collectives;
  return gather_direct_runs(counts);
}

// Step 6b. When every rank's aggregated bytes are one dense interval and the intervals neither
// overlap nor leave gaps, every byte of the domain is declared exactly once: the summaries
// already say so, and each aggregator's ranges are its whole partition — no exchange.
ReceivedRanges PhaseImpl::ranges_to_receive(const std::vector<RankSummary>& all) {
  const Alternative& s = strategy_.best();
  if (s.direct) return {};
  ReceivedRanges received;
  // Staged: the aggregator places every rank's runs itself (staged_places), so it needs them.
  if (s.staged || !dense_and_tiled(all, s.hybrid)) {
    stats_.collectives += 2;
    return exchange_ranges(comm_, plan_, aggregated());
  }
  if (my_partition_ < 0) return received;
  // Every byte of the partition is someone's (the rank named is for messages only).
  const size_t p = static_cast<size_t>(my_partition_);
  received.push_back({plan_.start[p] < plan_.lo ? plan_.lo : plan_.start[p],
                      plan_.end[p] - std::max(plan_.start[p], plan_.lo), rank_});
  return received;
}

// Every aggregator's window: N_buff x S_buff on its elected tier.
std::vector<uint64_t> PhaseImpl::window_needs() const {
  std::vector<uint64_t> needed(static_cast<size_t>(size_), 0);
  for (int p = 0; p < plan_.partitions(); ++p) {
    needed[static_cast<size_t>(plan_.aggregator[static_cast<size_t>(p)])] =
        plan_.buffer_bytes * static_cast<uint64_t>(plan_.buffers);
  }
  return needed;
}

std::vector<int> PhaseImpl::window_tiers() const {
  std::vector<int> tier_of(static_cast<size_t>(size_), static_cast<int>(Tier::dram));
  for (int p = 0; p < plan_.partitions(); ++p) {
    tier_of[static_cast<size_t>(plan_.aggregator[static_cast<size_t>(p)])] =
        static_cast<int>(tier_of_partition_[static_cast<size_t>(p)]);
  }
  return tier_of;
}

// How the aggregator writes a round (engine/plan/spans.hpp).
SpanPolicy PhaseImpl::span_policy() const {
  if (options_.spans == PhaseOptions::Choice::off) return SpanPolicy::runs;
  if (mode_ == PhaseMode::read) return SpanPolicy::read;
  // The caller's file (strata_target=in-place): exactly the declared bytes, run by run.
  if (options_.tiers.in_place) return SpanPolicy::runs;
  return commit_ ? SpanPolicy::fill : SpanPolicy::sieve;
}

// Written in place, the old index is stale: it goes now, and comes back when the phase closes.
// Rank 0; local part of a collective step.
void PhaseImpl::remove_stale_index() const {
  for (const std::string& out : {index_output()}) {
    if (::unlink(index_path(out).c_str()) != 0 && errno != ENOENT) {
      throw_system("cannot remove the old index \"" + index_path(out) + "\"", errno);
    }
  }
}

// Every rank's direct runs, for every rank (MPI_Allgatherv; called only when some exist).
std::vector<ReceivedRange> PhaseImpl::gather_direct_runs(const std::vector<uint64_t>& runs_of_rank) {
  std::vector<uint64_t> mine;
  for (const StreamExtent& d : direct_) {
    mine.push_back(d.file_offset);
    mine.push_back(d.length);
  }
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    counts[static_cast<size_t>(r)] = static_cast<int>(2 * runs_of_rank[static_cast<size_t>(r)]);
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
void PhaseImpl::check_direct_overlaps(const std::vector<ReceivedRange>& direct, const ReceivedRanges& received) const {
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

// True when the ranks' aggregated bytes tile the domain: each rank one dense interval (its
// extents coalesce into one), the intervals disjoint and adjacent. Same answer on every rank.
bool PhaseImpl::dense_and_tiled(const std::vector<RankSummary>& all, bool hybrid) const {
  uint64_t lo = UINT64_MAX, hi = 0, bytes = 0, tiling = 0;
  for (const RankSummary& s : all) {
    const uint64_t b = hybrid ? s.h_bytes : s.bytes;
    if (b == 0) continue;
    lo = std::min(lo, hybrid ? s.h_lo : s.lo);
    hi = std::max(hi, hybrid ? s.h_hi : s.hi);
    bytes += b;
    tiling += hybrid ? s.h_tiling : s.tiling;
  }
  return bytes > 0 && bytes == hi - lo && tiling == boundary(lo) - boundary(hi);
}

// A hash of the plan, to check it is the same on every rank.
uint64_t PhaseImpl::plan_signature() const {
  uint64_t h = fnv1a(&plan_.global_rounds, sizeof plan_.global_rounds);
  for (size_t p = 0; p < plan_.start.size(); ++p) {
    h = fnv1a(&plan_.start[p], sizeof(uint64_t), h);
    h = fnv1a(&plan_.end[p], sizeof(uint64_t), h);
    h = fnv1a(&plan_.aggregator[p], sizeof(int), h);
  }
  h = fnv1a(&plan_.buffer_bytes, sizeof plan_.buffer_bytes, h);
  return fnv1a(&plan_.buffers, sizeof plan_.buffers, h);
}

// Every rank must define the same variables in the same order.
void PhaseImpl::check_variables() {
  const unsigned long long count = vars_.size();
  unsigned long long lo = 0, hi = 0;
  MPI_Allreduce(&count, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm_);
  MPI_Allreduce(&count, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_);
  collectively(comm_, [&] {
    if (lo != hi) {
      throw_usage("ranks define different numbers of variables (" + std::to_string(lo) + " to " + std::to_string(hi) +
                  "); every rank must define the same variables in the same order");
    }
  });
  std::vector<unsigned long long> sig(vars_.size()), smin(vars_.size()), smax(vars_.size());
  for (size_t i = 0; i < vars_.size(); ++i) sig[i] = vars_[i].signature();
  MPI_Allreduce(sig.data(), smin.data(), static_cast<int>(sig.size()), MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm_);
  MPI_Allreduce(sig.data(), smax.data(), static_cast<int>(sig.size()), MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_);
  collectively(comm_, [&] {
    for (size_t i = 0; i < vars_.size(); ++i) {
      if (smin[i] != smax[i]) {
        throw_usage("variable \"" + vars_[i].name +
                    "\" is defined differently on some ranks (name, element size, "
                    "global shape and file offset must agree; variables must come in the same order)");
      }
    }
  });
}

// Elects each partition's aggregator and tier (collective) and records the report.
void PhaseImpl::place_on_tiers() {
  const Machine& machine = engine_.machine_once();
  PlacementInput pin;
  pin.plan = &plan_;
  pin.node_of_rank = &engine_.nodes.node_of_rank;
  pin.machine = &machine;
  pin.local_tiers = &engine_.tiers;
  pin.my_bytes.assign(static_cast<size_t>(plan_.partitions()), 0);
  int p = -1;  // the partition last found, and where it ends: sorted runs mostly stay in it
  uint64_t p_lo = 1, p_hi = 0;
  auto count = [&](uint64_t file_offset, uint64_t length) {
    for (uint64_t off = file_offset, end = file_offset + length; off < end;) {
      if (off < p_lo || off >= p_hi) {
        p = plan_.partition_of(off);
        p_lo = plan_.start[static_cast<size_t>(p)];
        p_hi = plan_.end[static_cast<size_t>(p)];
      }
      const uint64_t stop = std::min(end, p_hi);
      pin.my_bytes[static_cast<size_t>(p)] += stop - off;
      if (stop <= off) break;
      off = stop;
    }
  };
  if (plan_.partitions() == 1) {  // one partition holds them all
    pin.my_bytes[0] = agg_.bytes;
  } else if (agg_all_ && viewed_) {  // every byte aggregated: counted from the pieces, no extents made for it
    for_each_extent(views_, count);
  } else if (agg_all_) {
    for_each_extent(sel_.pieces, count);
  } else {
    for (const StreamExtent& e : agg_.extents) count(e.file_offset, e.length);
  }
  pin.persistent = options_.tiers.persistent;
  pin.forced = options_.tiers.forced;
  pin.want_table = options_.tiers.cost_table;
  const double place_t0 = MPI_Wtime();
  Placement placed = place_aggregators(comm_, pin);
  stats_.place_s = MPI_Wtime() - place_t0;
  placement_ = PlacementReport{};
  placement_.machine = machine.name + " (" + machine.source + ")";
  placement_.forced_tier = options_.tiers.forced ? tier_name(*options_.tiers.forced) : "";
  placement_.fallbacks = placed.fallbacks;
  tier_of_partition_.clear();
  for (int p = 0; p < plan_.partitions(); ++p) {
    const Elected& e = placed.partitions[static_cast<size_t>(p)];
    plan_.aggregator[static_cast<size_t>(p)] = e.aggregator;
    tier_of_partition_.push_back(e.tier);
    placement_.partitions.push_back({plan_.start[static_cast<size_t>(p)], plan_.end[static_cast<size_t>(p)],
                                     e.aggregator, engine_.nodes.node_of_rank[static_cast<size_t>(e.aggregator)],
                                     tier_name(e.tier), e.cost, e.fallback});
  }
  for (const CandidateRow& c : placed.table) {
    placement_.candidates.push_back(
        {c.partition, c.rank, c.node, tier_name(c.tier), c.c1, c.c2, filter_name(c.filtered)});
  }
}

}  // namespace strata
