// A burst-buffer write's drain, as the Phase runs it (hint strata_drain=PATH;
// engine/drain_job.hpp holds the drain itself). plan(): waits for this engine's drains that
// the phase reads or replaces, turns a read into a read of the target, checks node-local space.
// close(): the drain record, then the aggregators' threads. wait_drain(): both moments.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "arch/node_local.hpp"
#include "common/log.hpp"
#include "common/units.hpp"
#include "engine/phase_impl.hpp"

namespace strata {

namespace {

std::string absolute_path(const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); }

// The hints without the drain and the target: the phase then reads or writes the target itself.
std::vector<Phase::Hint> without_drain(std::vector<Phase::Hint> hints) {
  std::erase_if(hints, [](const Phase::Hint& h) { return h.first == "strata_drain" || h.first == "strata_target"; });
  return hints;
}

// Free bytes of node-local storage here (STRATA_LOCAL_CAPACITY=SIZE stands for it, for tests);
// UINT64_MAX when it cannot be told (the open that follows reports a bad folder).
uint64_t node_local_free(int node) {
  if (const char* c = std::getenv("STRATA_LOCAL_CAPACITY"); c != nullptr && *c != '\0') {
    return parse_size(c, "STRATA_LOCAL_CAPACITY");
  }
  try {
    struct statvfs vfs {};
    if (::statvfs(node_local_dir(node).c_str(), &vfs) != 0) return UINT64_MAX;
    return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  } catch (const Error&) {
    return UINT64_MAX;
  }
}

}  // namespace

void PhaseImpl::resolve_drain() {
  drain_.reset();
  // The common case costs one look: no drain asked for, none pending (the same on every rank).
  const bool asked =
      std::any_of(hints_.begin(), hints_.end(), [](const Phase::Hint& h) { return h.first == "strata_drain"; });
  if (!asked && engine_.drains.empty()) return;
  const auto origin = engine::DrainJob::Clock::now();
  TierHints tiers;
  try {
    tiers = parse_tier_hints(hints_);
  } catch (const Error&) {  // local_start() reports it, agreed
    return;
  }
  const std::string target = tiers.drain ? absolute_path(tiers.drain_target.empty() ? path_ : tiers.drain_target) : "";
  // The same on every rank: the engine's list and the phase's paths.
  const double w0 = MPI_Wtime();
  engine_.wait_drains_touching({absolute_path(path_), target});
  if (!tiers.drain) return;
  if (log::enabled(log::Level::debug)) {
    log::debug("phase \"" + path_ + "\": drain to \"" + target + "\", waited " + log::milliseconds(MPI_Wtime() - w0) +
               " for earlier drains");
  }
  if (mode_ == PhaseMode::read) {
    const bool local = std::any_of(hints_.begin(), hints_.end(), [](const Phase::Hint& h) {
      return h.first == "strata_target" && h.second == "node-local";
    });
    if (local) {  // strata_target=node-local said too: the node-local copy (an analysis where it was written)
      std::erase_if(hints_, [](const Phase::Hint& h) { return h.first == "strata_drain"; });
    } else {  // the durable copy: the target
      path_ = target;
      hints_ = without_drain(hints_);
    }
    return;
  }
  drain_ = std::make_shared<engine::DrainJob>();
  drain_->origin = origin;
  drain_->source = absolute_path(path_);
  drain_->target = target;
  // Room on node-local storage: each node's share of the declared bytes (all of them when the
  // nodes are virtual: they share this machine's storage), with 1/8 to spare.
  uint64_t bytes = 0;
  for (const Piece& p : pieces_) bytes += p.length;
  for (const LikeBlock& b : like_blocks_) bytes += b.bytes;
  // Below 2^63 (the UINT64_MAX of a rank that cannot tell included): MPICH 4.0.2's MPI_MIN orders
  // 64-bit unsigned types as signed, where UINT64_MAX would win over every real figure.
  uint64_t room = std::min<uint64_t>(node_local_free(engine_.nodes.node), INT64_MAX);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_UINT64_T, MPI_MIN, comm_), "MPI_Allreduce");
  stats_.collectives += 2;
  const uint64_t nodes = engine_.nodes.is_virtual ? 1 : static_cast<uint64_t>(std::max(engine_.nodes.node_count, 1));
  const uint64_t share = (bytes + nodes - 1) / nodes;
  const uint64_t need = share + share / 8;
  if (log::enabled(log::Level::debug)) {
    log::debug("phase \"" + path_ + "\": node-local space " + format_size(room) + ", needs " + format_size(need) +
               " (checked in " + log::milliseconds(MPI_Wtime() - w0) + ")");
  }
  if (room >= need) {
    if (rank_ == 0) prepare_drain_target();  // before the plan's collectives: copies may start at open
    return;
  }
  drain_->fallback = true;
  drain_->note = "node-local space is short (" + format_size(room) + " free on the fullest node, " + format_size(need) +
                 " needed): wrote \"" + target + "\" directly";
  if (rank_ == 0) log::warn("phase \"" + path_ + "\": " + drain_->note);
  path_ = target;
  hints_ = without_drain(hints_);
}

std::optional<Error> PhaseImpl::record_drain() {
  std::optional<Error> failure;
  uint64_t mine = 0;
  if (my_partition_ >= 0) {
    struct stat st {};
    if (::stat(files_.files()[static_cast<size_t>(my_partition_)].path.c_str(), &st) == 0) mine = st.st_size;
  }
  std::vector<uint64_t> size_of_rank(static_cast<size_t>(size_));
  check_mpi(MPI_Gather(&mine, 1, MPI_UINT64_T, size_of_rank.data(), 1, MPI_UINT64_T, 0, comm_), "MPI_Gather");
  ++stats_.collectives;
  if (rank_ != 0) return failure;
  try {
    engine::DrainRecord r;
    r.target = drain_->target;
    r.source = absolute_path(index_output());
    r.checksum_chunk = options_.checksum_chunk;
    const uint64_t end = std::max(plan_.hi, declared_end());
    const size_t parts = static_cast<size_t>(plan_.partitions());
    const std::string name = std::filesystem::path(r.target).filename().string();
    r.subfiled = drain_group_ > 0 && parts > 0;
    if (!r.subfiled) {
      r.files.push_back({name, 0, UINT64_MAX, end});
    } else {
      for (size_t p = 0, f = 0; p < parts; p += drain_group_, ++f) {
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, ".subfile.%05zu", f);
        const size_t next = p + drain_group_;
        engine::DrainFile file{name + suffix, plan_.start[p], next < parts ? plan_.start[next] : UINT64_MAX, 0};
        const uint64_t hi = std::min(file.end, end);
        file.size = hi > file.begin ? hi - file.begin : 0;
        r.files.push_back(file);
      }
    }
    for (size_t p = 0; p < parts; ++p) {
      const SubFile& f = files_.files()[p];
      engine::DrainPart part;
      part.from = f.path;
      part.begin = f.begin;
      part.end = std::min(f.end, plan_.hi);
      const uint64_t extent = part.end > part.begin ? part.end - part.begin : 0;
      part.length = std::min(extent, size_of_rank[static_cast<size_t>(plan_.aggregator[p])]);
      part.file = r.subfiled ? p / drain_group_ : 0;
      part.offset = part.begin - r.files[part.file].begin;
      r.parts.push_back(part);
    }
    r.recycled = !r.subfiled && drain_->recycled;
    engine::write_drain_record(r);
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = Error(ErrorKind::runtime, e.what());
  }
  return failure;
}

// Rank 0, at plan(), once the drains of this engine that touch the target are done: the target
// is replaced by this drain's commit (what this engine knew of it is stale), an earlier drain's
// leftovers go, and the old shared file (kept by this engine's last commit or drain of the
// target) becomes the partial file — overwriting its pages costs less than allocating new ones.
// Before any copy can start (a copy may follow the node-local write from the files' opening on).
void PhaseImpl::prepare_drain_target() {
  const std::string& target = drain_->target;
  engine_.clean.erase(target);
  engine_.committed.erase(target);
  engine_.remove_later({});
  engine::clear_drain_leftovers(target);
  const std::string retired = target + engine::kRetiredSuffix;
  engine_.take_retired(retired);
  size_t group = 0;  // the target's subfile group (drain_group_ is set later, by local_start())
  try {
    group = PhaseOptions::from_hints(hints_).subfile_group;
  } catch (const Error&) {  // local_start() reports it, agreed
  }
  if (group > 0) {
    ::unlink(retired.c_str());
  } else {
    drain_->recycled = std::rename(retired.c_str(), engine::partial_path(target).c_str()) == 0;
  }
}

// Where this rank's node file goes when a copy may follow its write: a shared-file target, and
// a partition this rank alone writes (sole_owner_). The same place record_drain() names.
void PhaseImpl::follow_with_drain(const SubFile& mine) {
  if (!drain_ || drain_->fallback || !sole_owner_ || drain_group_ > 0 || my_partition_ < 0) return;
  const uint64_t end = std::min(mine.end, plan_.hi);
  if (end <= mine.begin) return;
  drain_->follow(mine.path, engine::partial_path(drain_->target), mine.begin, end - mine.begin,
                 options_.checksum_chunk);
}

void PhaseImpl::start_drain() {
  drain_->return_s = std::chrono::duration<double>(engine::DrainJob::Clock::now() - drain_->origin).count();
  engine_.drains.push_back(drain_);
  if (drain_->fallback) return;
  drain_->part = my_partition_;
  // Every rank knows the record's name; the threads read it (rank 0 wrote it before the agreement).
  if (my_partition_ >= 0 || (plan_.partitions() == 0 && rank_ == 0)) {
    try {
      if (auto r = engine::read_drain_record(drain_->target)) drain_->record = *r;
    } catch (const Error& e) {
      drain_->error = e.what();
      return;
    }
  }
  drain_->start(plan_.partitions() == 0 && rank_ == 0);
}

DrainStats PhaseImpl::wait_drain() {
  if (state_ != State::closed) throw_usage("Phase::wait_drain after close() (the drain starts when the phase closes)");
  if (!drain_) return {};
  return engine_.wait_drain(*drain_);
}

}  // namespace strata
