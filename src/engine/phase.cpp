// The Phase: declarations, one pipelined execution (write or read), close, and the public API.
// The plan is in phase_plan.cpp, the output's files in phase_files.cpp, the commit in commit.cpp.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/watchdog.hpp"
#include "engine/move/mover.hpp"
#include "engine/phase_impl.hpp"

namespace strata {

void PhaseImpl::repeat_of(PhaseImpl& prior) {
  if (&prior.engine_ != &engine_) throw_usage("Phase::repeat of a phase of another engine");
  if (!prior.closed_ok_) {
    throw_usage("Phase::repeat needs a phase that wrote or read and closed without error");
  }
  vars_ = prior.vars_;
  var_names_ = prior.var_names_;
  sel_.pieces = std::move(prior.sel_.pieces);
  views_ = std::move(prior.views_);  // (viewed: the pieces stay views)
  viewed_ = prior.viewed_;
  order_ = std::move(prior.order_);
  pieces_digest_ = prior.pieces_digest_;
  pieces_base_ = prior.pieces_base_;
  pieces_contiguous_ = prior.pieces_contiguous_;
  program_for_ = std::move(prior.program_for_);
  program_ = std::move(prior.program_);
  repeated_ = true;
  repeats_ = true;
  prior.closed_ok_ = false;  // its pieces are gone
}

int PhaseImpl::define_variable(const std::string& name, size_t element_size, std::vector<uint64_t> dims,
                               uint64_t offset) {
  require_state(State::declaring, "define_variable");
  if (repeated_) throw_usage("a repeated phase (Phase::repeat) declares nothing more");
  if (name.empty()) throw_usage("a variable needs a name");
  if (element_size == 0) throw_usage("variable \"" + name + "\" has element size 0");
  if (element_size > UINT32_MAX) throw_usage("variable \"" + name + "\" has elements of 4 GiB or more");
  if (dims.empty()) throw_usage("variable \"" + name + "\" has no dimensions");
  for (auto d : dims) {
    if (d == 0) throw_usage("variable \"" + name + "\" has a zero dimension");
  }
  if (!var_names_.insert(name).second) throw_usage("variable \"" + name + "\" is defined twice");
  vars_.push_back({name, element_size, std::move(dims), offset});
  return static_cast<int>(vars_.size()) - 1;
}

void PhaseImpl::add_extent(int var, uint64_t file_offset, uint64_t length, void* memory) {
  const PhaseVariable& v = variable(var, "add_extent");
  if (file_offset < v.file_offset || file_offset + length > v.file_offset + v.bytes()) {
    throw_usage("variable \"" + v.name + "\": extent at file offset " + std::to_string(file_offset) + " of " +
                std::to_string(length) + " bytes lies outside the variable's bytes [" + std::to_string(v.file_offset) +
                ", " + std::to_string(v.file_offset + v.bytes()) + ")");
  }
  if (length > 0 && memory == nullptr) throw_usage("variable \"" + v.name + "\": extent without memory");
  if (length > 0) declared_lo_ = std::min(declared_lo_, file_offset);
  pieces_.push_back({file_offset, length, static_cast<std::byte*>(memory), 1, 1});
  declared(var, pieces_.size() - 1);
}

void PhaseImpl::declared(int var, size_t begin) {
  if (var_pieces_.size() <= static_cast<size_t>(var)) var_pieces_.resize(vars_.size(), {kMixed, 0});
  auto& [b, e] = var_pieces_[static_cast<size_t>(var)];
  if (b == kMixed && e == 0) {  // its first
    b = begin;
  } else if (b == kMixed || b == kLike || e != begin) {
    b = kMixed;  // another variable's pieces came between
    e = 1;
    return;
  }
  e = pieces_.size();
}

const PhaseImpl::LikeSource& PhaseImpl::like_source(size_t begin, size_t end) {
  for (const LikeSource& s : like_sources_) {
    if (s.begin == begin && s.end == end) return s;
  }
  LikeSource s;
  s.begin = begin;
  s.end = end;
  const Piece* q = nullptr;
  for (size_t i = begin; i < end; ++i) {
    const Piece& p = pieces_[i];
    if (p.length == 0) {
      s.sorted = false;  // (normalise() drops it: the block's pieces are not its views)
      continue;
    }
    if (q != nullptr && p.file_offset < q->file_offset + q->length) s.sorted = false;
    s.lo = std::min(s.lo, p.file_offset);
    s.hi = std::max(s.hi, p.file_offset + p.length);
    s.bytes += p.length;
    q = &p;
  }
  like_sources_.push_back(s);
  return like_sources_.back();
}

void PhaseImpl::add_extents_like(int var, int like, std::ptrdiff_t memory_shift) {
  const PhaseVariable& v = variable(var, "add_extents_like");
  const PhaseVariable& l = variable(like, "add_extents_like");
  auto range = static_cast<size_t>(like) < var_pieces_.size() ? var_pieces_[static_cast<size_t>(like)]
                                                              : std::pair<size_t, size_t>{kMixed, 0};
  uint64_t shift = v.file_offset - l.file_offset;  // modulo 2^64: either way
  if (range.first == kLike) {                      // like a variable itself declared like another: like that one
    const LikeBlock& b = like_blocks_[range.second];
    range = {b.begin, b.end};
    shift += b.shift;
    memory_shift += b.memory;
  }
  if (range.first == kMixed) {
    throw_usage("variable \"" + v.name + "\" is declared like \"" + l.name +
                "\", whose runs were not declared by one call (add_extents or add_extents_at)");
  }
  const LikeSource& src = like_source(range.first, range.second);
  LikeBlock b{pieces_.size(), range.first, range.second, shift, memory_shift, var, like, 0, 0, src.bytes};
  if (src.bytes > 0) {
    b.lo = src.lo + shift;
    b.hi = src.hi + shift;
    if (b.lo < v.file_offset || b.hi > v.file_offset + v.bytes() || b.hi < b.lo) {
      throw_usage("variable \"" + v.name + "\" declared like \"" + l.name +
                  "\": its runs fall outside the variable's bytes [" + std::to_string(v.file_offset) + ", " +
                  std::to_string(v.file_offset + v.bytes()) + ")");
    }
    declared_lo_ = std::min(declared_lo_, b.lo);
  }
  if (var_pieces_.size() <= static_cast<size_t>(var)) var_pieces_.resize(vars_.size(), {kMixed, 0});
  auto& mine = var_pieces_[static_cast<size_t>(var)];
  mine = mine.first == kMixed && mine.second == 0 ? std::pair<size_t, size_t>{kLike, like_blocks_.size()}
                                                  : std::pair<size_t, size_t>{kMixed, 1};
  like_blocks_.push_back(b);
  like_pieces_ += range.second - range.first;
}

// n runs of `var` checked against its bytes and appended at once; run i's memory is memory_of(i).
template <typename MemoryOf>
void PhaseImpl::append_extents(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths,
                               MemoryOf&& memory_of) {
  const PhaseVariable& v = variable(var, "add_extents");
  const uint64_t lo = v.file_offset, hi = v.file_offset + v.bytes();
  reserve_pieces(n);
  const size_t begin = pieces_.size();
  uint64_t first = declared_lo_;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t offset = offsets[i], length = lengths[i];
    std::byte* memory = memory_of(i);
    if (offset < lo || offset + length > hi || (length > 0 && memory == nullptr)) {
      add_extent(var, offset, length, memory);  // throws, naming the extent
    }
    if (length > 0) first = std::min(first, offset);
    pieces_.push_back({offset, length, memory, 1, 1});
  }
  declared_lo_ = first;
  declared(var, begin);
}

void PhaseImpl::add_extents(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, std::byte* memory) {
  std::byte* next = memory;  // one after another
  append_extents(var, n, offsets, lengths, [&](size_t i) {
    std::byte* at = next;
    if (next != nullptr) next += lengths[i];
    return at;
  });
}

void PhaseImpl::add_extents_at(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths,
                               void* const* memory) {
  append_extents(var, n, offsets, lengths, [&](size_t i) { return static_cast<std::byte*>(memory[i]); });
}

void PhaseImpl::add_subarray(int var, const std::vector<uint64_t>& start, const std::vector<uint64_t>& count,
                             void* memory, size_t stride) {
  const PhaseVariable& v = variable(var, "add_subarray");
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
  if (stride > UINT32_MAX) throw_usage("variable \"" + v.name + "\": a memory stride of 4 GiB or more");
  // Runs along the innermost dimension (merged over trailing dimensions the block covers whole).
  size_t run_dims = 1;
  uint64_t run = count[nd - 1];
  while (run_dims < nd && count[nd - run_dims] == v.dims[nd - run_dims]) {
    run *= count[nd - run_dims - 1];
    ++run_dims;
  }
  const size_t outer = nd - run_dims;
  if (stride != es) strided_ = true;
  const size_t begin = pieces_.size();
  std::vector<uint64_t> idx(start);
  auto* mem = static_cast<std::byte*>(memory);
  for (uint64_t done = 0; done < elements; done += run) {
    uint64_t linear = 0;
    for (size_t d = 0; d < nd; ++d) linear = linear * v.dims[d] + idx[d];
    declared_lo_ = std::min(declared_lo_, v.file_offset + linear * es);
    pieces_.push_back(
        {v.file_offset + linear * es, run * es, mem, static_cast<uint32_t>(es), static_cast<uint32_t>(stride)});
    mem += run * stride;
    for (size_t k = outer; k-- > 0;) {
      if (++idx[k] < start[k] + count[k]) break;
      idx[k] = start[k];
    }
  }
  declared(var, begin);
}

void PhaseImpl::execute(PhaseMode mode) {
  if (state_ == State::declaring) plan();
  require_state(State::planned, mode == PhaseMode::write ? "write" : "read");
  if (options_.tiers.dry_run) throw_usage("this phase is a dry run (hint strata_dry_run): it plans and places only");
  if (mode != mode_) {
    throw_usage(std::string("this phase was opened for ") + (mode_ == PhaseMode::write ? "writing" : "reading"));
  }
  const double started = MPI_Wtime();
  ++engine_.executions;
  if (!deferred_error_) deferred_error_ = caught([&] { start_node_file(); });  // agreed at close, as the writes' errors
  if (deferred_error_) {  // nothing local can go on; close() agrees on the failure
    stats_.execute_s = MPI_Wtime() - started;
    state_ = State::done;
    return;
  }
  // Direct runs move straight between the file and the caller's memory when one contiguous
  // piece holds them; the packed stream is built only when something needs it (aggregated
  // bytes, or a direct run over strided or several pieces). A read either uses the caller's
  // memory for every direct run or the stream for all, so unpacking never overwrites them.
  // A direct run over several pieces of contiguous memory moves by one vectored call from them.
  std::vector<std::byte*> direct_memory(direct_.size(), nullptr);
  std::vector<std::vector<std::pair<std::byte*, uint64_t>>> direct_gather(direct_.size());
  const bool streamed = need_stream();
  for (size_t i = 0; i < direct_.size(); ++i) {
    direct_memory[i] = contiguous_memory(direct_[i].file_offset, direct_[i].length);
    if (direct_memory[i] == nullptr) direct_gather[i] = gathered_memory(direct_[i].file_offset, direct_[i].length);
  }
  if (mode == PhaseMode::read && streamed) {
    std::fill(direct_memory.begin(), direct_memory.end(), nullptr);
    for (auto& g : direct_gather) g.clear();
  }
  ByteBuffer& stream = stream_;
  // A copied write of contiguous pieces copies each run from the caller's memory into its
  // aggregator's shared buffer: nothing is packed (direct runs then have their memory too).
  // Its runs' memory is found round by round as they are copied, and kept (a copy program) only
  // by a phase that repeats an earlier one (Phase::repeat: the caller writes the same pieces
  // again), whose next repeats then copy by it; a phase written once allocates no program.
  const bool from_memory = copies_from_memory();
  // Viewed pieces (plan/piece_views.hpp) are walked where they lie by a copy found from the plan
  // or not at all (a kept program); anything else takes them as one array.
  if (viewed_ && !(from_memory && (program_for_ == transfers_ || transfers_->by_plan()))) flatten_selection();
  std::optional<MemoryCopies> copies;
  bool keeping = false;
  if (from_memory && program_for_ == transfers_) {
    copies.emplace(program_);
  } else if (from_memory) {
    // (Viewed pieces keep none: copied as found, they are a few thousand pieces walked in the
    // cache, where a program is 16 bytes a run read from memory — measured on the F maps, 16
    // ranks on 2 cores: a repeated write 23-25 ms copied as found, 33 ms by its program, and 68
    // ms for the write that builds it.)
    keeping = repeats_ && !viewed_;
    program_for_ = nullptr;
    if (transfers_->by_plan()) {
      copies.emplace(plan_, sel_.pieces, keeping ? &program_ : nullptr, viewed_ ? &views_ : nullptr);
    } else {
      copies.emplace(*transfers_, sel_.pieces, keeping ? &program_ : nullptr);
    }
  } else if (!from_memory && streamed && mode == PhaseMode::write) {
    if (transfers_ && transfers_->by_plan()) throw_runtime("internal: runs found by the plan without a shared window");
    pack(sel_, stream.data());
  }
  // Direct runs start first and proceed on the I/O thread while aggregation goes on.
  if (!direct_.empty() && direct_io_) {
    std::vector<IoSpan> spans;
    for (size_t i = 0; i < direct_.size(); ++i) {
      const StreamExtent& d = direct_[i];
      const bool gathered = direct_memory[i] == nullptr && !direct_gather[i].empty();
      spans.push_back({d.file_offset,
                       d.length,
                       direct_memory[i] != nullptr ? direct_memory[i]
                       : gathered                  ? nullptr
                                                   : stream.data() + d.stream_offset,
                       {},
                       std::move(direct_gather[i])});
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
  m.rounds = &round_io();
  m.transfers = transfers_.get();
  m.stream = stream.data();
  m.copies = copies ? &*copies : nullptr;
  m.placed = placed_.data();
  m.stats = &stats_;
  if (plan_.partitions() == 0 || owners_local_) {
    // Nothing aggregated (the direct strategy, owners writing their node's files, or an empty
    // phase): no window, no fences.
  } else if (mode == PhaseMode::write) {
    move_write(m);
    if (keeping) program_for_ = transfers_;  // every round's runs found: the program is whole
  } else {
    move_read(m);
  }
  // A read agrees now, so no rank uses data another rank failed to read. A write's file
  // errors are agreed by close(), which waits for the I/O threads anyway: one collective less
  // per phase (as with MPI_File_iwrite_all, the data is safe only once close succeeds).
  if (mode == PhaseMode::read) {
    ++stats_.collectives;
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
  if (mode == PhaseMode::write && drain_ && drain_->follower && !(direct_io_ && direct_io_->error())) {
    drain_->follower->advance(UINT64_MAX);  // the node file is whole (its holes included)
  }
  if (mode == PhaseMode::read && streamed) unpack(sel_, stream.data());
  if (mode == PhaseMode::read) stream_ = {};  // a write's direct runs may still read it: freed by close()
  stats_.execute_s = MPI_Wtime() - started;
  state_ = State::done;
}

void PhaseImpl::stats_array(const std::optional<Error>& failure, double* d) const {
  const double values[kStats] = {failure ? static_cast<double>(size_ - rank_) : 0.0,
                                 stats_.plan_s,
                                 stats_.aggregation_s,
                                 stats_.io_s,
                                 stats_.wait_s,
                                 stats_.close_s,
                                 stats_.execute_s,
                                 stats_.commit_s,
                                 stats_.plan_s - stats_.arrival_s + stats_.execute_s + stats_.close_s,
                                 stats_.execute_s + stats_.close_s,
                                 static_cast<double>(stats_.bytes),
                                 static_cast<double>(stats_.fs_requests),
                                 static_cast<double>(stats_.direct_bytes),
                                 static_cast<double>(stats_.operations)};
  std::copy(values, values + kStats, d);
}

PhaseStats PhaseImpl::close(PhaseStats* max) {
  try {
    return close_steps(max);
  } catch (...) {
    discard_partials();
    throw;
  }
}

PhaseStats PhaseImpl::close_steps(PhaseStats* max) {
  const double t0 = MPI_Wtime();
  // Local first: the I/O threads' outcome, the files closed. A committed write agrees on it
  // with the commit's own gather; anything else agrees here.
  std::optional<Error> failure = deferred_error_;
  try {
    if (failure) throw *failure;
    for (auto* w : {&io_, &direct_io_}) {
      if (*w) {
        (*w)->wait_all();
        stats_.io_s += (*w)->io_seconds();
        stats_.fs_requests += (*w)->requests();
        for (const WrittenHash& h : (*w)->hashes()) written_hashes_.push_back(h);
      }
    }
    raise_io_errors();
    io_.reset();
    direct_io_.reset();
    // With fsync, the files are closed first and synced once per node below: every rank's
    // data is then in its node's cache, and one fsync per node and file makes it durable
    // (sixteen ranks fsyncing one file each cost sixteen times the journal work).
    const bool sync = options_.fsync && mode_ == PhaseMode::write && state_ == State::done;
    files_.close_all(false);
    if (!sync && !commit_ && state_ == State::done && !indexes_in_place()) finish_output();
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = Error(ErrorKind::runtime, e.what());
  }
  io_.reset();
  direct_io_.reset();
  if (indexes_in_place()) {
    // Every rank, whatever failed: the ranges written in place and their hashes, to rank 0's index.
    try {
      gather_written_hashes();
      const bool will_sync = options_.fsync && state_ == State::done;
      if (!failure && !will_sync && state_ == State::done) finish_output();
    } catch (const Error& e) {
      if (!failure) failure = e;
    }
  }
  engine_.keep_stream(std::move(stream_));  // the next phase's stream, if it fits
  if (!placed_.empty()) engine_.keep_placed(std::move(placed_));
  const bool committing = commit_ && state_ == State::done;
  if (committing) {
    // committed below: its gather to rank 0 and broadcast are the close's agreement
  } else if (options_.fsync && mode_ == PhaseMode::write && state_ == State::done) {
    // Every rank's data must be in its node's cache before one rank per node syncs it.
    stats_.collectives += 1;
    collectively(comm_, [&] {
      if (failure) throw *failure;
    });
    try {
      if (engine_.nodes.local_rank == 0) sync_files_of_node();
      finish_output();
    } catch (const Error& e) {
      failure = e;
    }
  }
  if (drain_ && !drain_->fallback && state_ == State::done && mode_ == PhaseMode::write) {
    if (auto e = record_drain(); e && !failure) failure = e;  // drains: the record, before the agreement
  }
  if (state_ != State::done) discard_partials();  // planned, never written
  // One agreement on the outcome that also reduces the statistics: the lowest failing rank
  // (as size - rank, maximised), the maxima of the times, the sums of the counts (exact as
  // doubles up to 2^53). A committed write gathers them with the checksums to rank 0, which
  // broadcasts the result after its commit; anything else reduces them among all ranks.
  ++stats_.collectives;
  double r[kStats];
  if (committing) {
    commit_written(failure, t0, r);
  } else {
    stats_.close_s = MPI_Wtime() - t0;
    double d[kStats];
    stats_array(failure, d);
    MPI_Allreduce(d, r, kStats, MPI_DOUBLE, engine_.stats_op(), comm_);
  }
  const bool written = state_ == State::done && mode_ == PhaseMode::write;
  state_ = State::closed;
  if (drain_ && (!written || r[0] > 0)) drain_->abandon_follow();  // no drain: a copy behind the write stops
  if (drain_ && written) {
    if (r[0] > 0) {
      if (rank_ == 0 && !drain_->fallback) ::unlink(engine::drain_record_path(drain_->target).c_str());
    } else {
      start_drain();
    }
  }
  if (log::enabled(log::Level::debug)) {
    log::debug("phase \"" + path_ + "\" closed (slowest rank): plan " + log::milliseconds(r[1]) + ", execute " +
               log::milliseconds(r[6]) + ", close " + log::milliseconds(r[5]) + " (rank 0's commit " +
               log::milliseconds(r[7]) + "), phase " + log::milliseconds(r[8]) + ", " +
               std::to_string(static_cast<uint64_t>(r[11])) + " file requests" +
               (r[0] > 0 ? ", failed on rank " + std::to_string(size_ - static_cast<int>(r[0])) : std::string()));
  }
  if (r[0] > 0) raise_from(comm_, size_ - static_cast<int>(r[0]), failure ? &*failure : nullptr);
  // The write and its close, priced and measured (the slowest rank's: r, the same on every rank),
  // predict the next writes into such a file (engine/plan/write_calibration.hpp).
  if (written && calibrated_)
    engine_.calibration.observe(strategy_.input.recycled, agreed_key_, stats_.model_write_s, r[9]);
  closed_ok_ = written || mode_ == PhaseMode::read;
  if (max != nullptr) {
    *max = stats_;
    max->plan_s = r[1];
    max->aggregation_s = r[2];
    max->io_s = r[3];
    max->wait_s = r[4];
    max->close_s = r[5];
    max->execute_s = r[6];
    max->commit_s = r[7];
    max->phase_s = r[8];
    max->write_close_s = r[9];
    max->bytes = static_cast<uint64_t>(r[10]);
    max->fs_requests = static_cast<uint64_t>(r[11]);
    max->direct_bytes = static_cast<uint64_t>(r[12]);
    max->operations = static_cast<uint64_t>(r[13]);
    max->collectives = stats_.collectives;
    max->tier.clear();  // tiers: every tier the phase aggregated on
    for (const PlacedPartition& part : placement_.partitions) {
      const std::string tier = engine_.tier_window_refused.empty() ? part.tier : tier_name(Tier::dram);
      if (max->tier.find(tier) == std::string::npos) max->tier += (max->tier.empty() ? "" : ",") + tier;
    }
  }
  return stats_;
}

void PhaseImpl::require_state(State s, const char* what) const {
  if (state_ == State::failed) throw_usage(std::string("Phase::") + what + " on a phase whose plan failed");
  if (state_ != s)
    throw_usage(std::string("Phase::") + what + " called out of order (declare, plan, write or read, close)");
}

const PhaseVariable& PhaseImpl::variable(int var, const char* what) const {
  require_state(State::declaring, what);
  if (repeated_) throw_usage(std::string(what) + ": a repeated phase (Phase::repeat) declares nothing more");
  if (var < 0 || static_cast<size_t>(var) >= vars_.size()) {
    throw_usage(std::string(what) + ": variable " + std::to_string(var) + " is not defined");
  }
  return vars_[static_cast<size_t>(var)];
}

std::string PhaseImpl::name_at(uint64_t offset) const {
  for (const auto& v : vars_) {
    if (offset >= v.file_offset && offset - v.file_offset < v.bytes()) return v.name;
  }
  return "?";
}

bool PhaseImpl::direct_runs_have_memory() const {
  for (const StreamExtent& d : direct_) {
    if (contiguous_memory(d.file_offset, d.length) == nullptr && gathered_memory(d.file_offset, d.length).empty())
      return false;
  }
  return true;
}

bool PhaseImpl::copies_from_memory() const {
  if (mode_ != PhaseMode::write || !copy_ || window_ == nullptr || !window_->shared()) return false;
  // (A copy program's displacements are 32 bits.)
  if (plan_.buffer_bytes * static_cast<uint64_t>(plan_.buffers) > UINT32_MAX) return false;
  return pieces_contiguous() && direct_runs_have_memory();
}

bool PhaseImpl::pieces_contiguous() const {
  if (!pieces_contiguous_ && !repeats_) {
    pieces_contiguous_ = !strided_;  // known from the declarations
  } else if (!pieces_contiguous_) {  // a walk over every piece: once for them (viewed: those they view)
    const auto& pieces = viewed_ ? views_.base : sel_.pieces;
    pieces_contiguous_ =
        std::all_of(pieces.begin(), pieces.end(), [](const Piece& p) { return p.stride == p.element_size; });
  }
  return *pieces_contiguous_;
}

bool PhaseImpl::need_stream() const {
  if (copies_from_memory()) return false;
  return agg_.bytes > 0 || !direct_runs_have_memory();
}

// The memory of file bytes [offset, offset + length) when declared pieces of contiguous memory
// (no stride) hold every byte of it: their parts in file order, neighbours in memory merged;
// empty otherwise.
std::vector<std::pair<std::byte*, uint64_t>> PhaseImpl::gathered_memory(uint64_t offset, uint64_t length) const {
  std::vector<std::pair<std::byte*, uint64_t>> out;
  const auto& pieces = sel_.pieces;
  auto it = std::upper_bound(pieces.begin(), pieces.end(), offset,
                             [](uint64_t o, const Piece& p) { return o < p.file_offset; });
  if (it == pieces.begin()) return out;
  --it;
  const uint64_t end = offset + length;
  for (uint64_t at = offset; at < end; ++it) {
    if (it == pieces.end() || it->stride != it->element_size || at < it->file_offset ||
        at >= it->file_offset + it->length) {
      return {};
    }
    const uint64_t n = std::min(end, it->file_offset + it->length) - at;
    std::byte* memory = it->memory + (at - it->file_offset);
    if (!out.empty() && out.back().first + out.back().second == memory) {
      out.back().second += n;
    } else {
      out.emplace_back(memory, n);
    }
    at += n;
  }
  return out;
}

// The I/O threads' first failure, if any, as an Error. Local part of a collective step.
void PhaseImpl::raise_io_errors() const {
  for (const IoWorker* w : {io_.get(), direct_io_.get()}) {
    if (w != nullptr) {
      if (auto e = w->error()) throw_runtime(*e);
    }
  }
}

// The caller's memory for file bytes [offset, offset + length) when one contiguous piece
// holds them all, else null.
std::byte* PhaseImpl::contiguous_memory(uint64_t offset, uint64_t length) const {
  const auto& pieces = sel_.pieces;
  auto it = std::upper_bound(pieces.begin(), pieces.end(), offset,
                             [](uint64_t o, const Piece& p) { return o < p.file_offset; });
  if (it == pieces.begin()) return nullptr;
  const Piece& p = *std::prev(it);
  if (p.stride != p.element_size || offset + length > p.file_offset + p.length) return nullptr;
  return p.memory + (offset - p.file_offset);
}

const PlacementReport& PhaseImpl::placement() const {
  if (state_ == State::declaring || state_ == State::failed) throw_usage("Phase::placement before a successful plan()");
  return placement_;
}

Phase::Phase(Engine& engine, std::string path, PhaseMode mode, std::vector<Hint> hints)
    : impl_(std::make_unique<PhaseImpl>(engine, std::move(path), mode, std::move(hints))) {}

// Declarations are local: a bad one is remembered and raised, on every rank, by plan(), so a
// rank with a bad declaration never leaves the others waiting in a collective.
Phase Phase::repeat(Phase&& done) {
  if (!done.impl_) throw_usage("Phase::repeat of a moved-from phase");
  PhaseImpl& prior = *done.impl_;
  Phase next(prior.engine(), prior.path(), prior.mode(), prior.hints());
  next.impl_->repeat_of(prior);
  done.impl_.reset();
  return next;
}

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
void Phase::reserve(size_t runs) {
  try {
    impl_->reserve_pieces(runs, true);
  } catch (const std::exception&) {  // a hint: too much room asked is no error (the runs declared may be)
  }
}
void Phase::add_extents_at(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, void* const* memory) {
  impl_->deferring([&] { impl_->add_extents_at(var, n, offsets, lengths, memory); });
}

void Phase::add_extents_like(int var, int like, std::ptrdiff_t memory_shift) {
  impl_->deferring([&] { impl_->add_extents_like(var, like, memory_shift); });
}

void Phase::add_extents(int var, size_t n, const uint64_t* offsets, const uint64_t* lengths, void* memory) {
  impl_->deferring([&] { impl_->add_extents(var, n, offsets, lengths, static_cast<std::byte*>(memory)); });
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
void Phase::fail(const std::string& message) {
  impl_->deferring([&] { throw_usage(message); });
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
  auto r = impl_->close(max);
  return r;
}
DrainStats Phase::wait_drain() {
  watchdog::Scope scope("engine drain");
  return impl_->wait_drain();
}

}  // namespace strata
