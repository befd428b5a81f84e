// The pipelined rounds (the aggregation paper's Algorithms 3 and 4, with fences as the round
// barrier). Write: in global round g every rank puts its round-g bytes into buffer g mod N_buff
// of their aggregators; after the fence the aggregators hand that buffer to their I/O thread
// and, before the fence that opens a round reusing a buffer, wait for its write to finish.
// Read mirrors it: the I/O thread prefetches round g into buffer g mod N_buff before the
// fence that opens round g, in which ranks get their bytes.
#pragma once

#include <mpi.h>

#include <vector>

#include "engine/move/io_worker.hpp"
#include "engine/move/packing.hpp"
#include "engine/move/window.hpp"
#include "engine/plan/exchange.hpp"
#include "engine/plan/partition.hpp"
#include "engine/plan/spans.hpp"
#include "strata/strata.hpp"

namespace strata::engine {

struct Move {
  MPI_Comm comm = MPI_COMM_NULL;
  const Plan* plan = nullptr;
  Window* window = nullptr;
  IoWorker* io = nullptr;                        // aggregators only
  const std::vector<RoundIo>* rounds = nullptr;  // aggregators: the file I/O of each round of their partition
  const PackedTransfers* transfers = nullptr;    // this rank's puts or gets, per global round
  std::byte* stream = nullptr;                   // this rank's bytes in file order
  MemoryCopies* copies = nullptr;                // a copied write: from the caller's memory, not packed
  // Staged (transfers->staged()): the aggregator's round buffers, N_buff x S_buff, into which it
  // places each round's runs from its window (which then holds what the ranks put as it lay).
  std::byte* placed = nullptr;
  PhaseStats* stats = nullptr;
};

// Both are collective; file errors of the I/O threads are agreed afterwards by the caller.
// move_write returns with the last rounds' writes possibly still running on the I/O thread.
void move_write(const Move& m);
void move_read(const Move& m);

}  // namespace strata::engine
