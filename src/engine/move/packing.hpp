// One-sided transfers grouped by (round, aggregator): a rank sends each aggregator its bytes
// of a round in ONE operation. A group of several runs becomes one MPI_Put (MPI_Get) whose
// target side is an hindexed datatype of the runs' window displacements (and whose origin is
// the contiguous slice of the rank's stream, or an hindexed type of it when direct runs cut
// the slice). Whether a group is packed follows the machine's measured figures: packing wins
// once n runs cost more as n puts than as one put plus n datatype entries. Datatypes are built
// once at plan time and freed with the phase.
//
// Staged (a write's alternative, strata_stage; the model chooses): no datatype at all. A
// group's bytes are a slice of the rank's stream (file order), put as they lie into its
// aggregator's window beside the other ranks' (in rank order: where they land is agreed at plan
// time by one scan); after the fence the aggregator places the runs into its round buffer with
// one copy each, in file order, from where it knows they landed (staged_places: the ranges it
// received tell it every rank's runs of the round). In a shared window (staged copied) the
// ranks copy their runs from their memory to where they land instead of putting them: both
// copies then run front to back, where a copied write's runs scatter over the buffer.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "arch/io_figures.hpp"
#include "engine/move/window.hpp"
#include "engine/plan/exchange.hpp"
#include "engine/plan/extents.hpp"
#include "engine/plan/partition.hpp"
#include "engine/plan/piece_views.hpp"

namespace strata::engine {

struct PutGroup {
  int target = 0;
  uint64_t displacement = 0;   // of the first run in the target's window
  uint64_t stream_offset = 0;  // of the first run in the rank's stream
  uint64_t bytes = 0;
  size_t first = 0, count = 0;                   // the group's transfers (unpacked: one operation each)
  MPI_Datatype target_type = MPI_DATATYPE_NULL;  // packed: runs relative to `displacement`
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;  // packed with a cut stream: runs relative to `stream_offset`
};

class PackedTransfers {
 public:
  PackedTransfers() = default;
  ~PackedTransfers();
  PackedTransfers(const PackedTransfers&) = delete;
  PackedTransfers& operator=(const PackedTransfers&) = delete;
  PackedTransfers(PackedTransfers&& o) noexcept;
  PackedTransfers& operator=(PackedTransfers&& o) noexcept;

  // `pack_from`: groups of at least this many runs are packed (0: never).
  PackedTransfers(std::vector<std::vector<Transfer>> by_round, uint64_t pack_from);
  // Staged: collective over `comm` (a scan); `by_round` as transfers_by_round() made it for `plan`.
  PackedTransfers(MPI_Comm comm, const Plan& plan, std::vector<std::vector<Transfer>> by_round);
  // Copied (a window of shared memory, every run copied by address): the transfers alone, no
  // groups of puts to make.
  static PackedTransfers copied(std::vector<std::vector<Transfer>> by_round);
  // Copied without a list: a write whose runs are all aggregated and whose pieces are all
  // contiguous memory finds each round's runs from the plan and its pieces as it copies them
  // (MemoryCopies), so nothing is listed per run at plan time — a real map's 260 000 runs a rank
  // were 6 MB of transfers, 2 ms of a rank and 900 page faults on first use. `rounds` empty
  // rounds (no transfer listed).
  static PackedTransfers copied_by_plan(uint64_t rounds);
  bool copies() const { return copies_; }
  bool by_plan() const { return by_plan_; }

  bool staged() const { return staged_; }

  const std::vector<std::vector<Transfer>>& transfers() const { return transfers_; }
  const std::vector<PutGroup>& groups(uint64_t round) const { return groups_[round]; }
  uint64_t rounds() const { return groups_.size(); }
  // Operations issued per phase (puts or gets), for the statistics.
  uint64_t operations() const { return operations_; }

 private:
  void release();
  std::vector<std::vector<Transfer>> transfers_;
  std::vector<std::vector<PutGroup>> groups_;
  uint64_t operations_ = 0;
  bool staged_ = false;
  bool copies_ = false;   // copied(): transfers only, no groups
  bool by_plan_ = false;  // copied_by_plan(): no transfers either
};

// The smallest group worth packing, from the figures: n·latency > latency + n·per_run.
uint64_t pack_threshold(const IoFigures& f);

// A copied write's runs with their memory found: where each comes from in the caller's memory
// and where it goes in its aggregator's segment (16 bytes a run; a transfer over several pieces
// is a run per piece), a round's runs grouped by their target (`targets`: each target with the
// end of its runs). Displacements are 32 bits: copies_from_memory() takes a window segment of at
// most 4 GiB.
struct MemoryRun {
  const std::byte* from = nullptr;
  uint32_t displacement = 0;
  uint32_t length = 0;
};
struct RoundProgram {
  std::vector<MemoryRun> runs;
  std::vector<std::pair<int32_t, size_t>> targets;  // (target, end of its runs in `runs`)
};
using CopyProgram = std::vector<RoundProgram>;  // by round (a copy program)

// Where a copied write's runs come from, round by round: a program kept from an earlier
// execution of the same pieces and transfers, or the pieces themselves, each round's runs found
// as it is copied — into a program kept for the next execution when asked (a repeated phase: the
// same pieces at the same memory then copy without looking anything up), else into a scratch of
// at most kChunk transfers' runs, found and copied part after part, so a phase written once
// allocates no program (a round of the F maps holds up to 260 000 runs a rank: 4 MB of new
// memory, 1 500 page faults, where the scratch stays in the cache).
class MemoryCopies {
 public:
  explicit MemoryCopies(const CopyProgram& kept) : kept_(&kept) {}
  MemoryCopies(const PackedTransfers& t, const std::vector<Piece>& pieces, CopyProgram* keep);
  // From the plan (PackedTransfers::copied_by_plan): round g's runs are the pieces' bytes that
  // fall in each partition's round g, found by a search for the first and a walk in file order.
  // `views`: the pieces are viewed (plan/piece_views.hpp), `pieces` unused.
  MemoryCopies(const Plan& plan, const std::vector<Piece>& pieces, CopyProgram* keep,
               const PieceViews* views = nullptr);
  // Round g's runs, a part at a time: the next part (null: the round is done). The whole round
  // at once from a kept program or into one being kept. Rounds are asked for in order.
  const RoundProgram* round(uint64_t g);
  // Found from the plan and kept by no program: each round is copied as its runs are found,
  // straight from the pieces into the window's segments (copy_round), no run listed.
  bool copies_as_found() const { return plan_ != nullptr && keep_ == nullptr; }
  void copy_round(uint64_t g, const Window& w);

 private:
  const CopyProgram* kept_ = nullptr;
  const PackedTransfers* transfers_ = nullptr;
  const std::vector<Piece>* pieces_ = nullptr;
  std::vector<uint64_t> every_;  // the stream offset of pieces 0, kEvery, 2·kEvery...
  size_t piece_ = 0;             // where the last run ended: a piece and its stream offset
  uint64_t at_ = 0;
  CopyProgram* keep_ = nullptr;
  RoundProgram scratch_;
  uint64_t round_ = UINT64_MAX;  // the round being served, and its next transfer
  size_t next_ = 0;
  static constexpr size_t kEvery = 64;
  static constexpr size_t kChunk = 2048;
  const Plan* plan_ = nullptr;  // by the plan: the partition being walked (cursor_ at its next piece)
  std::optional<PieceCursor> cursor_;
  const PieceViews* views_ = nullptr;  // by the plan, viewed pieces
  size_t partition_ = 0;
  bool found_ = false;  // cursor_ is at the partition's next piece (else it is searched for)
  void seek(uint64_t offset);
  void add_runs(uint64_t offset, uint64_t n, int target, uint64_t displacement, RoundProgram& out);
  const RoundProgram* round_by_plan(uint64_t g, bool first);
};

// Issues round g's operations into `window` (a put for a write, a get for a read). In a shared
// window (Window::shared) an unstaged round is copied by address instead, run by run — by
// `program` (from the caller's memory) when given, else from the stream.
void put_round(const PackedTransfers& t, uint64_t round, std::byte* stream, const Window& window,
               MemoryCopies* copies = nullptr);
// Staged, at an aggregator after the fence that closed a round's puts: places the round's runs
// (RoundIo::places) from its window buffer `landed` into the round buffer `buffer` (both of
// `landed_bytes`, S_buff).
void place_round(const std::vector<PlacedRun>& places, const std::byte* landed, uint64_t landed_bytes,
                 std::byte* buffer);
void get_round(const PackedTransfers& t, uint64_t round, std::byte* stream, const Window& window);

}  // namespace strata::engine
