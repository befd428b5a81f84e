#include "engine/move/packing.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "common/error.hpp"
#include "common/run_copy.hpp"

namespace strata::engine {

uint64_t pack_threshold(const IoFigures& f) {
  if (f.put_run_s >= f.put_latency_s) return 0;  // a datatype entry costs a put: never pack
  return static_cast<uint64_t>(std::floor(f.put_latency_s / (f.put_latency_s - f.put_run_s))) + 1;
}

namespace {

MPI_Datatype hindexed(const std::vector<int>& lengths, const std::vector<MPI_Aint>& displacements) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  check_mpi(
      MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_BYTE, &t),
      "MPI_Type_create_hindexed");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return t;
}

// The group of transfers from xs[i] on that go to the same target (one operation when packed or
// staged): its fields, its bytes, and whether its runs follow each other in the stream.
PutGroup group_at(const std::vector<Transfer>& xs, size_t i, bool& contiguous_origin) {
  size_t j = i + 1;
  while (j < xs.size() && xs[j].target == xs[i].target) ++j;
  PutGroup group;
  group.target = xs[i].target;
  group.displacement = xs[i].displacement;
  group.stream_offset = xs[i].stream_offset;
  group.first = i;
  group.count = j - i;
  contiguous_origin = true;
  for (size_t k = i; k < j; ++k) {
    group.bytes += xs[k].length;
    if (k > i && xs[k].stream_offset != xs[k - 1].stream_offset + xs[k - 1].length) contiguous_origin = false;
  }
  return group;
}

}  // namespace

PackedTransfers::PackedTransfers(std::vector<std::vector<Transfer>> by_round, uint64_t pack_from)
    : transfers_(std::move(by_round)), groups_(transfers_.size()) {
  for (size_t g = 0; g < transfers_.size(); ++g) {
    const auto& xs = transfers_[g];
    for (size_t i = 0; i < xs.size();) {
      bool contiguous_origin = true;
      PutGroup group = group_at(xs, i, contiguous_origin);
      const size_t j = i + group.count;
      if (pack_from > 0 && group.count >= pack_from && group.count > 1) {
        std::vector<int> lengths;
        std::vector<MPI_Aint> target_at, origin_at;
        lengths.reserve(j - i);
        target_at.reserve(j - i);
        origin_at.reserve(j - i);
        for (size_t k = i; k < j; ++k) {
          lengths.push_back(static_cast<int>(xs[k].length));
          target_at.push_back(static_cast<MPI_Aint>(xs[k].displacement - group.displacement));
          origin_at.push_back(static_cast<MPI_Aint>(xs[k].stream_offset - group.stream_offset));
        }
        group.target_type = hindexed(lengths, target_at);
        if (!contiguous_origin) group.origin_type = hindexed(lengths, origin_at);
        ++operations_;
      } else {
        operations_ += group.count;
      }
      groups_[g].push_back(group);
      i = j;
    }
  }
}

PackedTransfers PackedTransfers::copied(std::vector<std::vector<Transfer>> by_round) {
  PackedTransfers t({}, 0);
  t.groups_.resize(by_round.size());
  t.transfers_ = std::move(by_round);
  t.copies_ = true;
  return t;
}

PackedTransfers PackedTransfers::copied_by_plan(uint64_t rounds) {
  PackedTransfers t = copied(std::vector<std::vector<Transfer>>(rounds));
  t.by_plan_ = true;
  return t;
}

PackedTransfers::PackedTransfers(MPI_Comm comm, const Plan& plan, std::vector<std::vector<Transfer>> by_round)
    : transfers_(std::move(by_round)), groups_(transfers_.size()), staged_(true) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const size_t parts = static_cast<size_t>(plan.partitions());
  std::vector<int> partition_of(static_cast<size_t>(size), -1);
  for (size_t p = 0; p < parts; ++p) partition_of[static_cast<size_t>(plan.aggregator[p])] = static_cast<int>(p);
  // This rank's groups, and its bytes for each (round, partition).
  std::vector<uint64_t> mine(plan.global_rounds * parts, 0);
  auto cell = [&](uint64_t g, int target) {
    return g * parts + static_cast<size_t>(partition_of[static_cast<size_t>(target)]);
  };
  for (size_t g = 0; g < transfers_.size(); ++g) {
    const auto& xs = transfers_[g];
    for (size_t i = 0; i < xs.size();) {
      bool contiguous_origin = true;
      PutGroup group = group_at(xs, i, contiguous_origin);
      const size_t j = i + group.count;
      if (!contiguous_origin) {  // direct runs cut the stream: the origin side is a datatype
        std::vector<int> lengths;
        std::vector<MPI_Aint> origin_at;
        for (size_t k = i; k < j; ++k) {
          lengths.push_back(static_cast<int>(xs[k].length));
          origin_at.push_back(static_cast<MPI_Aint>(xs[k].stream_offset - group.stream_offset));
        }
        group.origin_type = hindexed(lengths, origin_at);
      }
      mine[cell(g, group.target)] += group.bytes;
      ++operations_;
      groups_[g].push_back(group);
      i = j;
    }
  }
  // Where each rank's bytes land: after the lower ranks' (a scan; staged_places mirrors it).
  std::vector<uint64_t> before(mine.size(), 0);
  if (!mine.empty()) {
    check_mpi(MPI_Exscan(mine.data(), before.data(), static_cast<int>(mine.size()), MPI_UINT64_T, MPI_SUM, comm),
              "MPI_Exscan");
    if (rank == 0) std::fill(before.begin(), before.end(), 0);
  }
  const uint64_t nbuf = static_cast<uint64_t>(plan.buffers);
  for (size_t g = 0; g < groups_.size(); ++g) {
    const uint64_t slot = (g % nbuf) * plan.buffer_bytes;
    for (PutGroup& group : groups_[g]) {
      group.displacement = slot + before[cell(g, group.target)];
      // Each transfer where it lands (a shared window's copies go there run by run, in order).
      uint64_t at = group.displacement;
      for (size_t k = group.first; k < group.first + group.count; ++k) {
        transfers_[g][k].displacement = at;
        at += transfers_[g][k].length;
      }
    }
  }
}

PackedTransfers::~PackedTransfers() { release(); }

PackedTransfers::PackedTransfers(PackedTransfers&& o) noexcept
    : transfers_(std::move(o.transfers_)),
      groups_(std::move(o.groups_)),
      operations_(o.operations_),
      staged_(o.staged_),
      copies_(o.copies_),
      by_plan_(o.by_plan_) {
  o.groups_.clear();
}

PackedTransfers& PackedTransfers::operator=(PackedTransfers&& o) noexcept {
  if (this != &o) {
    release();
    transfers_ = std::move(o.transfers_);
    groups_ = std::move(o.groups_);
    operations_ = o.operations_;
    staged_ = o.staged_;
    copies_ = o.copies_;
    by_plan_ = o.by_plan_;
    o.groups_.clear();
  }
  return *this;
}

void PackedTransfers::release() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (auto& round : groups_) {
    for (PutGroup& g : round) {
      for (MPI_Datatype* t : {&g.target_type, &g.origin_type}) {
        if (*t != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(t);
        *t = MPI_DATATYPE_NULL;
      }
    }
  }
  groups_.clear();
}

namespace {

template <class Op>
void each_operation(const PackedTransfers& t, uint64_t round, std::byte* stream, Op&& op) {
  const auto& xs = t.transfers()[round];
  for (const PutGroup& g : t.groups(round)) {
    if (g.target_type == MPI_DATATYPE_NULL) {
      for (size_t k = g.first; k < g.first + g.count; ++k) {
        const Transfer& x = xs[k];
        op(stream + x.stream_offset, static_cast<int>(x.length), MPI_BYTE, x.target, x.displacement,
           static_cast<int>(x.length), MPI_BYTE);
      }
    } else if (g.origin_type == MPI_DATATYPE_NULL) {
      op(stream + g.stream_offset, static_cast<int>(g.bytes), MPI_BYTE, g.target, g.displacement, 1, g.target_type);
    } else {
      op(stream + g.stream_offset, 1, g.origin_type, g.target, g.displacement, 1, g.target_type);
    }
  }
}

}  // namespace

MemoryCopies::MemoryCopies(const PackedTransfers& t, const std::vector<Piece>& pieces, CopyProgram* keep)
    : transfers_(&t), pieces_(&pieces), keep_(keep) {
  every_.reserve(pieces.size() / kEvery + 1);
  uint64_t bytes = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i % kEvery == 0) every_.push_back(bytes);
    bytes += pieces[i].length;
  }
  if (every_.empty()) every_.push_back(0);
  if (keep_ != nullptr) keep_->assign(t.transfers().size(), {});
}

MemoryCopies::MemoryCopies(const Plan& plan, const std::vector<Piece>& pieces, CopyProgram* keep,
                           const PieceViews* views)
    : pieces_(&pieces), keep_(keep), plan_(&plan), views_(views) {
  cursor_.emplace(pieces, views);
  if (keep_ != nullptr) keep_->assign(plan.global_rounds, {});
}

const RoundProgram* MemoryCopies::round(uint64_t g) {
  const bool first = g != round_;
  round_ = g;
  if (kept_ != nullptr) return first && g < kept_->size() ? &(*kept_)[g] : nullptr;
  if (plan_ != nullptr) return round_by_plan(g, first);
  if (first) next_ = 0;
  if (g >= transfers_->transfers().size()) return nullptr;
  const std::vector<Transfer>& xs = transfers_->transfers()[g];
  if (next_ >= xs.size()) return nullptr;
  RoundProgram& out = keep_ != nullptr ? (*keep_)[g] : scratch_;
  out.runs.clear();
  out.targets.clear();
  const size_t end = keep_ != nullptr ? xs.size() : std::min(xs.size(), next_ + kChunk);
  out.runs.reserve(end - next_);
  for (; next_ < end; ++next_)
    add_runs(xs[next_].stream_offset, xs[next_].length, xs[next_].target, xs[next_].displacement, out);
  return &out;
}

// Moves to the piece that holds stream byte `offset`: forward from where the last run ended when
// that is near (transfers mostly follow each other), else from the checkpoint before it.
void MemoryCopies::seek(uint64_t offset) {
  const std::vector<Piece>& pieces = *pieces_;
  const size_t next = piece_ / kEvery + 1;  // the checkpoint after the cursor
  if (offset < at_ || (next < every_.size() && offset >= every_[next])) {
    const size_t k = static_cast<size_t>(std::upper_bound(every_.begin(), every_.end(), offset) - every_.begin()) - 1;
    piece_ = k * kEvery;
    at_ = every_[k];
  }
  while (piece_ < pieces.size() && at_ + pieces[piece_].length <= offset) at_ += pieces[piece_++].length;
  if (piece_ >= pieces.size()) throw_runtime("internal: a copied run past the rank's declared bytes");
}

// Appends the runs of stream bytes [offset, offset + n), bound for `target` at `displacement`.
void MemoryCopies::add_runs(uint64_t offset, uint64_t n, int target, uint64_t displacement, RoundProgram& out) {
  seek(offset);
  const std::vector<Piece>& pieces = *pieces_;
  if (displacement + n > UINT32_MAX) throw_runtime("internal: a copied run beyond 4 GiB of its window segment");
  if (out.targets.empty() || out.targets.back().first != target) out.targets.emplace_back(target, out.runs.size());
  // This target's runs so far start where the one before it ended (a run may grow across transfers).
  const size_t first = out.targets.size() >= 2 ? out.targets[out.targets.size() - 2].second : 0;
  while (n > 0) {
    const Piece& p = pieces[piece_];
    const uint64_t within = offset - at_;
    const uint64_t take = std::min({n, p.length - within, uint64_t{1} << 30});
    const std::byte* from = p.memory + within;
    MemoryRun* last = out.runs.size() > first ? &out.runs.back() : nullptr;
    if (last != nullptr && last->from + last->length == from && last->displacement + last->length == displacement &&
        last->length + take <= (uint64_t{1} << 30)) {
      last->length += static_cast<uint32_t>(take);  // one copy where memory and window both follow on
    } else {
      out.runs.push_back({from, static_cast<uint32_t>(displacement), static_cast<uint32_t>(take)});
    }
    displacement += take;
    offset += take;
    n -= take;
    if (offset == at_ + p.length && piece_ + 1 < pieces.size()) at_ += pieces[piece_++].length;
  }
  out.targets.back().second = out.runs.size();
}

// Round g of partition p holds its file bytes [start + g·S, min(start + (g + 1)·S, end)); the
// pieces (sorted, disjoint) that fall there are a slice of them, found by one search.
const RoundProgram* MemoryCopies::round_by_plan(uint64_t g, bool first) {
  const Plan& plan = *plan_;
  PieceCursor& cursor = *cursor_;
  if (first) {
    partition_ = 0;
    found_ = false;
  }
  const size_t parts = static_cast<size_t>(plan.partitions());
  if (partition_ >= parts) return nullptr;  // the round is done (a kept round stays as it is)
  RoundProgram& out = keep_ != nullptr ? (*keep_)[g] : scratch_;
  out.runs.clear();
  out.targets.clear();
  const size_t limit = keep_ != nullptr ? SIZE_MAX : kChunk;
  while (partition_ < parts && out.runs.size() < limit) {
    const size_t p = partition_;
    if (g >= plan.rounds[p]) {
      ++partition_;
      found_ = false;
      continue;
    }
    const uint64_t a = plan.start[p] + g * plan.buffer_bytes;
    const uint64_t b = std::min(a + plan.buffer_bytes, plan.end[p]);
    if (!found_) {
      cursor.seek(a);
      found_ = true;
    }
    const int target = plan.aggregator[p];
    const uint64_t window = (g % static_cast<uint64_t>(plan.buffers)) * plan.buffer_bytes;
    bool done = false;  // this partition's round has no more pieces
    while (out.runs.size() < limit) {
      if (cursor.done()) {
        done = true;
        break;
      }
      const Piece q = cursor.piece();
      if (q.file_offset >= b) {
        done = true;
        break;
      }
      const uint64_t from = std::max(q.file_offset, a), to = std::min(q.file_offset + q.length, b);
      const std::byte* memory = q.memory + (from - q.file_offset);
      const auto displacement = static_cast<uint32_t>(window + (from - a));
      const auto length = static_cast<uint32_t>(to - from);
      if (out.targets.empty() || out.targets.back().first != target) out.targets.emplace_back(target, out.runs.size());
      // This target's runs start where the one before it ended.
      const size_t first_of_target = out.targets.size() >= 2 ? out.targets[out.targets.size() - 2].second : 0;
      MemoryRun* last = out.runs.size() > first_of_target ? &out.runs.back() : nullptr;
      if (last != nullptr && last->from + last->length == memory && last->displacement + last->length == displacement) {
        last->length += length;  // one copy where memory and window both follow on
      } else {
        out.runs.push_back({memory, displacement, length});
      }
      if (q.file_offset + q.length > b) {  // the piece goes on into the next round or partition
        done = true;
        break;
      }
      cursor.next();
    }
    if (!out.targets.empty()) out.targets.back().second = out.runs.size();
    if (done) {
      ++partition_;
      found_ = false;
    }
  }
  return out.runs.empty() ? nullptr : &out;
}

// As round_by_plan(), every partition's round g whole, each piece's part copied where it goes.
void MemoryCopies::copy_round(uint64_t g, const Window& w) {
  const Plan& plan = *plan_;
  const uint64_t window = (g % static_cast<uint64_t>(plan.buffers)) * plan.buffer_bytes;
  for (size_t p = 0; p < static_cast<size_t>(plan.partitions()); ++p) {
    if (g >= plan.rounds[p]) continue;
    const uint64_t a = plan.start[p] + g * plan.buffer_bytes;
    const uint64_t b = std::min(a + plan.buffer_bytes, plan.end[p]);
    std::byte* const to = w.peer(plan.aggregator[p]) + window;  // file byte x goes to to + (x - a)
    // The piece's part in [a, b); false once the pieces are past b.
    const auto copy = [&](const Piece& q, uint64_t shift, std::ptrdiff_t memory) {
      const uint64_t at = q.file_offset + shift;
      if (at >= b) return false;
      const uint64_t from = std::max(at, a), end = std::min(at + q.length, b);
      copy_run(to + (from - a), q.memory + memory + (from - at), end - from);
      return true;
    };
    if (views_ != nullptr) {
      views_->walk_from(a, copy);
    } else {
      const std::vector<Piece>& pieces = *pieces_;
      auto q = std::partition_point(pieces.begin(), pieces.end(),
                                    [a](const Piece& x) { return x.file_offset + x.length <= a; });
      for (; q != pieces.end() && copy(*q, 0, 0); ++q) {}
    }
  }
}

void put_round(const PackedTransfers& t, uint64_t round, std::byte* stream, const Window& w, MemoryCopies* copies) {
  const MPI_Win window = w.get();
  if (w.shared() && copies != nullptr && copies->copies_as_found()) {
    copies->copy_round(round, w);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
  if (w.shared() && copies != nullptr) {  // (staged: where the runs land, one after another)
    while (const RoundProgram* program = copies->round(round)) {
      const RoundProgram& p = *program;
      size_t i = 0;
      for (const auto& [target, end] : p.targets) {
        std::byte* const to = w.peer(target);
        for (; i < end; ++i) copy_run(to + p.runs[i].displacement, p.runs[i].from, p.runs[i].length);
      }
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
  if (w.shared() && !t.staged()) {
    for (const Transfer& x : t.transfers()[round])
      copy_run(w.peer(x.target) + x.displacement, stream + x.stream_offset, x.length);
    // The stores complete before the fence that ends the round tells the aggregator.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
  if (t.copies()) throw_runtime("internal: copied transfers without a shared window");
  if (t.staged()) {
    for (const PutGroup& g : t.groups(round)) {
      if (g.origin_type == MPI_DATATYPE_NULL) {
        check_mpi(MPI_Put(stream + g.stream_offset, static_cast<int>(g.bytes), MPI_BYTE, g.target,
                          static_cast<MPI_Aint>(g.displacement), static_cast<int>(g.bytes), MPI_BYTE, window),
                  "MPI_Put");
      } else {
        check_mpi(MPI_Put(stream + g.stream_offset, 1, g.origin_type, g.target, static_cast<MPI_Aint>(g.displacement),
                          static_cast<int>(g.bytes), MPI_BYTE, window),
                  "MPI_Put");
      }
    }
    return;
  }
  each_operation(t, round, stream,
                 [&](std::byte* origin, int ocount, MPI_Datatype otype, int target, uint64_t disp, int tcount,
                     MPI_Datatype ttype) {
                   check_mpi(MPI_Put(origin, ocount, otype, target, static_cast<MPI_Aint>(disp), tcount, ttype, window),
                             "MPI_Put");
                 });
}

void place_round(const std::vector<PlacedRun>& places, const std::byte* landed, uint64_t landed_bytes,
                 std::byte* buffer) {
  // Runs of up to 16 bytes (most, where placing costs) are copied as 16 without a branch on their
  // length: in file order, what the copy writes past a run is the next runs' (placed after it) or
  // a hole's (cleared after placing) — never past the round's buffer (the next one may be on its
  // way to the file), nor read past its window buffer.
  for (const PlacedRun& r : places) {
    if (r.length <= 16 && r.from + 16 <= landed_bytes && r.at + 16 <= landed_bytes) {
      std::memcpy(buffer + r.at, landed + r.from, 16);
    } else {
      copy_run(buffer + r.at, landed + r.from, r.length);
    }
  }
}

void get_round(const PackedTransfers& t, uint64_t round, std::byte* stream, const Window& w) {
  const MPI_Win window = w.get();
  if (w.shared()) {
    // After the fence that opened the round: the aggregator's reads are in place.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (const Transfer& x : t.transfers()[round])
      copy_run(stream + x.stream_offset, w.peer(x.target) + x.displacement, x.length);
    return;
  }
  if (t.copies()) throw_runtime("internal: copied transfers without a shared window");
  each_operation(t, round, stream,
                 [&](std::byte* origin, int ocount, MPI_Datatype otype, int target, uint64_t disp, int tcount,
                     MPI_Datatype ttype) {
                   check_mpi(MPI_Get(origin, ocount, otype, target, static_cast<MPI_Aint>(disp), tcount, ttype, window),
                             "MPI_Get");
                 });
}

}  // namespace strata::engine
