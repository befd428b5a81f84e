// What an Engine keeps from phase to phase: its own duplicate of the communicator, the node
// map, the machine description and this node's memory tiers (loaded when it starts), and the
// aggregation window (reallocated only when a phase needs more, or another tier).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arch/machine.hpp"
#include "arch/memory_tier.hpp"
#include "arch/node_map.hpp"
#include "common/byte_buffer.hpp"
#include "common/error.hpp"
#include "engine/drain_job.hpp"
#include "engine/move/window.hpp"
#include "engine/plan/write_calibration.hpp"
#include "engine/plan_cache.hpp"
#include "strata/strata.hpp"

namespace strata {

class EngineImpl {
 public:
  explicit EngineImpl(MPI_Comm user);
  ~EngineImpl();
  EngineImpl(const EngineImpl&) = delete;
  EngineImpl& operator=(const EngineImpl&) = delete;

  // The window, large enough for `needed[r]` bytes on every rank r, on tier `tier_of[r]` of
  // each aggregator. Every rank decides the same way (all know `needed` and the tiers from the
  // plan and the current window), so reallocation is collective exactly when needed.
  // `shared`: a shared-memory window (only where shared_memory holds and every tier is dram).
  engine::Window& window_for(const std::vector<uint64_t>& needed, const std::vector<int>& tier_of, int rank,
                             bool shared);
  // The machine description and this node's tiers, loaded when the engine starts (collective
  // there); the error that loading met, if any, on every call.
  const Machine& machine_once();
  const MemoryTier& tier(Tier t) const { return *tiers[static_cast<size_t>(t)]; }
  // Removes a commit's retired files of `output` on a background thread (engine/commit.hpp's
  // remove_retired; the previous one is joined first, and so is the last one when the engine
  // goes). Rank 0.
  void remove_later(std::vector<std::string> retired);
  // Rank 0's retired files kept for the next write of the same output (PATH.strata-retired):
  // take_retired() hands one over once (false when it is not kept); the rest go with the engine.
  void keep_retired(const std::string& path);
  bool take_retired(const std::string& path);
  // Rank 0: the files (as the index names them) of this engine's last commit of `output`; empty
  // when it made none.
  std::vector<std::string> committed_files(const std::string& output) const;
  void remember_committed(const std::string& output, std::vector<std::string> files);
  // The staging stream (a rank's bytes in file order) kept from phase to phase: its capacity
  // is reused, up to 256 MiB (a larger one goes back to the system).
  void keep_stream(ByteBuffer stream);
  ByteBuffer take_stream() { return std::move(stream); }
  // A staged aggregator's round buffers (N_buff x S_buff), kept the same way: a phase's fresh
  // ones would be faulted in at each write (2 x 16 MiB: about 15 ms of first touches here).
  void keep_placed(ByteBuffer b);
  ByteBuffer take_placed() { return std::move(placed); }
  // MPI_Op for the close's reduction: the maximum of the first seven doubles (the failing rank's
  // code and the times), the sum of the rest (the counts).
  MPI_Op stats_op();
  // The reduction of plan keys (engine::KeyVote, one element of key_vote_type()).
  MPI_Op key_vote_op();
  MPI_Datatype key_vote_type();
  // What stats_op() does, for a rank that reduces them itself: the maximum of the first
  // kStatsMaxima doubles, the sum of the rest.
  static constexpr int kStatsMaxima = 10;
  static void reduce_stats(const double* in, double* inout, int count);
  // Cores of this node (the machine file's io.cores, else the OS's count): I/O threads and
  // copies that run at once.
  int cores_per_node();

  // Drains (hint strata_drain, engine/drain_job.hpp) started and not yet waited for, in order:
  // the same list on every rank. wait_drain() is collective: this rank's copy joined, the
  // moments reduced (slowest rank), a failure raised on every rank; the job keeps the result.
  DrainStats wait_drain(engine::DrainJob& job);
  // Collective: waits for every listed drain whose source or target is one of `paths` (absolute).
  void wait_drains_touching(const std::vector<std::string>& paths);

  MPI_Comm comm;
  NodeMap nodes;
  // Every rank of the communicator shares one node's memory (and no virtual nodes split it):
  // windows on main memory can be shared (MPI_Win_allocate_shared), ranks copying into them.
  bool shared_memory = false;
  engine::Window window;
  std::vector<uint64_t> window_bytes;  // every rank's window size
  std::vector<int> window_tier;        // every rank's window tier
  uint64_t executions = 0;             // phases executed (write() or read() that ran)
  uint64_t window_allocations = 0;     // windows allocated so far (collective each time)
  // Why a window over tier memory (hbm, nvr, tmpfs: MPI_Win_create) failed, once: every later
  // window is MPI's main memory (MPI_Win_allocate), and the phases report the dram tier.
  std::string tier_window_refused;
  std::optional<Machine> machine;
  std::optional<Error> machine_error;              // what loading the machine met when the engine started
  std::vector<std::unique_ptr<MemoryTier>> tiers;  // this node's, indexed by Tier
  int cores = 0;
  std::thread remover;
  std::vector<std::string> retired;
  std::map<std::string, std::vector<std::string>> committed;  // output -> its last commit's files
  // Rank 0: one-file outputs whose last write this engine committed, leaving nothing behind (no
  // intent record, no partial file), with their folder's file-system block size and whether it
  // is striped. The next phase of such an output skips the checks a stranger's leftovers need
  // (roll-forward, the folder scan, statfs). A write takes its output out until it commits.
  struct CleanOutput {
    uint64_t fs_block = 4096;
    bool striped = false;
  };
  std::map<std::string, CleanOutput> clean;
  ByteBuffer stream;
  ByteBuffer placed;
  std::vector<std::shared_ptr<engine::DrainJob>> drains;
  engine::PlanCache plans;  // plans kept for reuse (engine/plan_cache.hpp): the same on every rank
  // This job's writes against the model (engine/plan/write_calibration.hpp): the same on every rank.
  engine::WriteCalibration calibration;
  // Rank 0: the file of earlier jobs' ratios (engine/write_history.hpp; empty: none kept), and
  // every rank: the digest of the figures they belong to.
  std::string history_path;
  uint64_t figures_identity = 0;
  void seed_calibration();
  MPI_Op stats = MPI_OP_NULL;
  MPI_Op key_votes = MPI_OP_NULL;
  MPI_Datatype key_vote = MPI_DATATYPE_NULL;
};

}  // namespace strata
