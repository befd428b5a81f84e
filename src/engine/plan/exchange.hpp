// What moves where: each rank cuts its extents at partition and round boundaries into
// transfers (aggregator, round, window displacement, stream offset, length); aggregators
// learn, once per phase, exactly which byte ranges they will receive, per round, so holes are
// never written. Overlaps between ranks are found here, at the aggregator that owns the bytes.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "engine/plan/extents.hpp"
#include "engine/plan/partition.hpp"

namespace strata::engine {

struct Transfer {
  int target = 0;  // aggregator rank
  uint64_t displacement = 0;
  uint64_t stream_offset = 0;
  uint64_t length = 0;
};

struct Run {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  uint64_t buffer_offset = 0;  // within the round's buffer
};

// This rank's transfers, bucketed by global round. O(own extents · log partitions).
std::vector<std::vector<Transfer>> transfers_by_round(const Plan& plan, const Selection& mine);

// Byte ranges an aggregator received: (offset, length, source rank).
struct ReceivedRange {
  uint64_t offset = 0, length = 0;
  int from = 0;
};
using ReceivedRanges = std::vector<ReceivedRange>;

// Sends every rank's ranges to their aggregators (MPI_Alltoall + MPI_Alltoallv on `comm`);
// returns what this rank received (nothing unless it aggregates), sorted by offset. Collective;
// never throws between its collective calls.
ReceivedRanges exchange_ranges(MPI_Comm comm, const Plan& plan, const Selection& mine);

// The runs of `partition` per round (merged where contiguous), from ranges in any order (sorted
// ones are not copied). Local: throws a usage Error naming both ranks when two ranks' ranges
// overlap (agree on it collectively).
std::vector<std::vector<Run>> rounds_of_partition(const Plan& plan, int partition, const ReceivedRanges& ranges);

// The same check alone (ranges in any order): a usage Error naming both ranks of two overlapping ranges.
void check_received_overlaps(const ReceivedRanges& ranges);

// A staged run at its aggregator: where it goes in its round's buffer, where it landed in the
// round's window buffer, and its length (32 bits each: staged rounds hold at most 4 GiB).
struct PlacedRun {
  uint32_t at = 0, from = 0, length = 0;
};

// Staged (PackedTransfers' staged form): each rank puts its bytes of a round, in file order, into
// its aggregator's window buffer after the lower ranks' bytes of that round. From the ranges it
// received the aggregator knows where every run landed: its runs of each round of `partition`,
// in file order (so placing them writes the round's buffer front to back). `ranks`: the
// communicator's size.
std::vector<std::vector<PlacedRun>> staged_places(const Plan& plan, int partition, const ReceivedRanges& ranges,
                                                  int ranks);

}  // namespace strata::engine
