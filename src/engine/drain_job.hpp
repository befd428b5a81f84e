// Burst-buffer writes (hint strata_drain=PATH, docs/drain.md): a write phase commits on
// node-local storage and returns; each partition's aggregator then copies its node file into
// the target on the shared file system on a thread of its own (no MPI call there), and the
// last one to finish commits the target. Two moments: the application may go on when close()
// returns; the data is durable on the target when the commit is done.
//
// Crash consistency. At close, rank 0 writes the drain record T.strata-drain.json: the
// target's files and which node-local file goes where. The copies go to the target's partial
// files (T.strata-partial, T.subfile.NNNNN.strata-partial), are fsynced, and each partition
// leaves a marker T.strata-drain.part.NNNNN with the checksums of what it copied. The thread
// that sees every marker (and wins T.strata-drain.lock) commits as any write does
// (engine/commit.hpp): the intent record, then — the commit point — the drain record goes,
// then the renames. So: a drain record means the target still holds the previous output
// (whole), an intent record means the new one (roll_forward() completes it), neither means the
// drain is done. finish_drain() (`strata drain T`) completes a drain from its node-local copy.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/move/drain.hpp"
#include "strata/strata.hpp"

namespace strata::engine {

std::string drain_record_path(const std::string& target);               // T.strata-drain.json
std::string drain_marker_path(const std::string& target, size_t part);  // T.strata-drain.part.NNNNN
std::string drain_lock_path(const std::string& target);                 // T.strata-drain.lock

// Where the bytes of one partition go: node-local file `from` (absolute), holding global bytes
// [begin, end) from its offset 0 (`length` bytes of it exist: the rest is holes), to target
// file `file` at `offset`.
struct DrainPart {
  std::string from;
  uint64_t begin = 0, end = 0, length = 0;
  size_t file = 0;
  uint64_t offset = 0;
};
struct DrainFile {
  std::string name;  // final name, relative to the target's folder
  uint64_t begin = 0, end = UINT64_MAX, size = 0;
};
struct DrainRecord {
  std::string target;  // absolute
  std::string source;  // the node-local copy's output name: its index is source.strata-index.json
  uint64_t checksum_chunk = 0;
  bool subfiled = false;
  bool recycled = false;  // the shared partial file is an old output's file: bytes never copied are cleared
  std::vector<DrainFile> files;
  std::vector<DrainPart> parts;
};

// Written atomically, not synced: a close() does not wait for the target's disk, where the
// copies run. A killed process leaves it in the page cache; a node that goes down loses its
// node-local copy too (not synced either), so the target keeps its previous output and the data
// must be written again, as the record, lost with it, says nothing more.
void write_drain_record(const DrainRecord& record);
// Nothing when there is none; a usage Error naming the file when it does not parse.
std::optional<DrainRecord> read_drain_record(const std::string& target);
// What an earlier drain of the target left (markers, lock, partial files): removed.
void clear_drain_leftovers(const std::string& target);

// One partition's copy: into its target file, hashed, fsynced, then its marker. Returns the
// bytes copied.
uint64_t drain_part(const DrainRecord& record, size_t part);
// The marker of a partition copied (and synced) already, from the ranges it copied. Returns the bytes.
uint64_t mark_part(const DrainRecord& record, size_t part, const std::vector<DrainedRange>& ranges);
// True when every partition's marker is there and this caller is the one to commit.
bool claim_drain_commit(const DrainRecord& record);
// The commit of a drained target (see above); removes the markers and the lock. The old shared
// file is kept under its second name (T.strata-retired), the next drain's partial file; returns
// that name ("" when none is kept).
std::string commit_drain(const DrainRecord& record);

// What `strata verify` says of a target's drain.
struct DrainState {
  bool pending = false;              // a drain record: the target holds the previous output
  size_t parts = 0, marked = 0;      // partitions, and those copied and synced already
  std::string source;                // the node-local copy
  std::vector<std::string> missing;  // node-local files that are missing or short: it cannot finish
};
DrainState drain_state(const std::string& target);
// `strata drain T`: completes an interrupted drain (an interrupted commit is rolled forward;
// otherwise partitions without a marker are copied again from the node-local copy, then
// committed). False when there was nothing to finish; a runtime Error when the node-local copy
// cannot finish it.
bool finish_drain(const std::string& target);

// A phase's drain as this rank sees it, kept by the engine until waited for.
struct DrainJob {
  using Clock = std::chrono::steady_clock;
  std::string source, target;  // the phase's path and the drain target
  DrainRecord record;          // every rank's copy
  int part = -1;               // this rank's partition (its aggregator), or -1
  Clock::time_point origin;    // the phase's plan() on this rank
  double return_s = 0;         // origin to close() returning
  bool fallback = false;       // node-local space was short: the target was written directly
  std::string note;
  // Set by the thread (read after join).
  std::thread thread;
  std::optional<std::string> error;
  double copy_s = 0, durable_s = 0;
  uint64_t bytes = 0;
  std::string kept_retired;          // the old target file this rank's commit kept (the engine removes it)
  std::optional<DrainStats> result;  // after the collective wait
  bool recycled = false;             // rank 0: the target's old file became its partial file at plan()

  // A copy that follows this rank's node-local write as it goes (a shared-file target, and a
  // partition this rank alone writes): started when the files open, its node file's progress
  // told by advance(); the thread takes it over at close, or abandon_follow() ends it.
  struct Follower {
    std::mutex m;
    std::condition_variable cv;
    uint64_t written = 0;
    bool abandoned = false;
    void advance(uint64_t end);
    void abandon();
    void ready(uint64_t want);  // blocks until `want` bytes are written; a runtime Error once abandoned
  };
  void follow(const std::string& from, const std::string& to, uint64_t offset, uint64_t length, uint64_t hash_chunk);
  void abandon_follow();
  std::shared_ptr<Follower> follower;
  std::thread early;
  std::string early_from, early_to;
  uint64_t early_offset = 0, early_length = 0;
  std::vector<DrainedRange> early_ranges;
  std::optional<std::string> early_error;
  double early_s = 0;

  // Launches this rank's copy on its thread (an aggregator); `commit_alone`: no partition at
  // all, this rank (rank 0) commits the empty target at once.
  void start(bool commit_alone);
  void join() {
    if (thread.joinable()) thread.join();
  }
  ~DrainJob() {
    join();  // first: a started thread takes the follower's copy over (and joins it)
    abandon_follow();
  }
};

}  // namespace strata::engine
