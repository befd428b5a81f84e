#include "engine/engine_impl.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <optional>

#include "common/error.hpp"
#include "common/log.hpp"
#include "engine/commit.hpp"
#include "engine/write_history.hpp"

namespace strata {

using engine::Window;

namespace {

// The engine works on its own duplicate of the communicator, so its collectives never mix
// with the application's.
MPI_Comm duplicate(MPI_Comm user) {
  MPI_Comm c = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(user, &c), "MPI_Comm_dup");
  return c;
}

}  // namespace

EngineImpl::EngineImpl(MPI_Comm user) : comm(duplicate(user)), nodes(node_map(comm)) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  window_bytes.assign(static_cast<size_t>(size), 0);
  window_tier.assign(static_cast<size_t>(size), static_cast<int>(Tier::dram));
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  shared_memory = node_size == size && nodes.node_count == 1;
  // The machine figures now, while the engine starts (collective, like the rest of this), not in
  // the first phase's plan: an application makes its engine once, and its first output phase
  // should cost what the others cost. A description that cannot be read is reported by the
  // first phase that needs it, on every rank alike (load_machine's outcome is the same
  // everywhere).
  machine_error = caught([&] { machine_once(); });
  // With measured figures, this job's own small collective too (a few microseconds where ranks
  // have cores of their own, far more where they share them): the model's fences and
  // agreements at this job's ranks (arch/io_figures.hpp). The same outcome on every rank.
  if (!machine_error && machine->io.measured) {
    machine->io.job_ranks = size;
    machine->io.job_collective_s = job_collective_seconds(comm);
  }
  if (!machine_error) seed_calibration();
}

// Rank 0 reads the earlier jobs' ratios (engine/write_history.hpp) and broadcasts the text and
// its clock: every rank seeds the same ones.
void EngineImpl::seed_calibration() {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  uint64_t head[2] = {0, 0};  // text size, rank 0's time
  if (rank == 0) {
    history_path = engine::write_history_path();
    text = engine::read_write_history(history_path);
    head[0] = text.size();
    head[1] = static_cast<uint64_t>(std::time(nullptr));
  }
  check_mpi(MPI_Bcast(head, 2, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  if (head[0] > 0) {
    text.resize(head[0]);
    check_mpi(MPI_Bcast(text.data(), static_cast<int>(head[0]), MPI_CHAR, 0, comm), "MPI_Bcast");
  }
  figures_identity = engine::figures_identity(machine->io);
  calibration.seed(engine::parse_write_history(text, figures_identity, static_cast<int64_t>(head[1])));
}

EngineImpl::~EngineImpl() {
  // Rank 0 (the only one with a path): this job's ratios for the next jobs.
  if (!history_path.empty()) {
    try {
      engine::store_write_history(history_path, figures_identity,
                                  calibration.learned(static_cast<int64_t>(std::time(nullptr))),
                                  static_cast<int64_t>(std::time(nullptr)));
    } catch (const std::exception& e) {
      log::warn(std::string("cannot keep this job's write ratios in ") + history_path + ": " + e.what());
    }
  }
  for (auto& d : drains) {  // not waited for: the copies and the commit finish before the engine goes
    d->join();
    if (!d->kept_retired.empty()) ::unlink(d->kept_retired.c_str());
    if (d->error) log::warn("drain of \"" + d->target + "\" failed (never waited for): " + *d->error);
  }
  drains.clear();
  if (remover.joinable()) remover.join();
  for (const std::string& p : retired) ::unlink(p.c_str());
  plans.clear();  // their datatypes, before the communicator goes
  window.free();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && stats != MPI_OP_NULL) MPI_Op_free(&stats);
  if (!finalized && key_votes != MPI_OP_NULL) MPI_Op_free(&key_votes);
  if (!finalized && key_vote != MPI_DATATYPE_NULL) MPI_Type_free(&key_vote);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

Window& EngineImpl::window_for(const std::vector<uint64_t>& needed, const std::vector<int>& tier_of, int rank,
                               bool shared) {
  shared = shared && shared_memory;
  bool fits = window.get() != MPI_WIN_NULL && window.shared() == shared;
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
    ++window_allocations;
    const uint64_t mine = window_bytes[static_cast<size_t>(rank)];
    if (!all_dram && tier_window_refused.empty()) {
      std::unique_ptr<TierMemory> memory;
      collectively(comm, [&] {
        if (mine > 0) memory = tier(static_cast<Tier>(tier_of[static_cast<size_t>(rank)])).allocate(mine);
      });
      // Agreed on every rank: either all have the window or all fall back below.
      std::optional<Error> refused = caught([&] { window = Window(comm, std::move(memory)); });
      if (refused) {
        tier_window_refused = refused->what();
        if (rank == 0) {
          log::warn(
              "the aggregation buffers are in main memory instead: this MPI cannot expose tier memory in a "
              "window (" +
              tier_window_refused + "; Open MPI's osc/pt2pt cannot under MPI_THREAD_MULTIPLE)");
        }
      }
    }
    // MPI's memory: shared memory within a node; shared by address when asked.
    if (window.get() == MPI_WIN_NULL) window = Window(comm, mine, shared && all_dram);
  }
  return window;
}

const Machine& EngineImpl::machine_once() {
  if (machine_error) throw *machine_error;
  if (!machine) {
    machine = load_machine(comm, nodes.node);
    for (Tier t : all_tiers()) {
      const TierFigures* f = machine->tier(t);
      tiers.push_back(make_memory_tier(t, f != nullptr ? *f : TierFigures{}, nodes.node));
    }
  }
  return *machine;
}

void EngineImpl::remove_later(std::vector<std::string> retired) {
  if (remover.joinable()) remover.join();
  if (retired.empty()) return;
  remover = std::thread([retired = std::move(retired)] { engine::remove_retired(retired); });
}

void EngineImpl::keep_retired(const std::string& path) {
  if (std::find(retired.begin(), retired.end(), path) == retired.end()) retired.push_back(path);
}

bool EngineImpl::take_retired(const std::string& path) {
  auto it = std::find(retired.begin(), retired.end(), path);
  if (it == retired.end()) return false;
  retired.erase(it);
  return true;
}

std::vector<std::string> EngineImpl::committed_files(const std::string& output) const {
  auto it = committed.find(output);
  return it == committed.end() ? std::vector<std::string>{} : it->second;
}

void EngineImpl::remember_committed(const std::string& output, std::vector<std::string> files) {
  committed[output] = std::move(files);
}

void EngineImpl::keep_stream(ByteBuffer s) {
  if (s.capacity() <= (uint64_t{256} << 20)) stream = std::move(s);
}

void EngineImpl::keep_placed(ByteBuffer b) {
  if (b.capacity() <= (uint64_t{256} << 20)) placed = std::move(b);
}

void EngineImpl::reduce_stats(const double* in, double* inout, int count) {
  for (int i = 0; i < count; ++i) inout[i] = i < kStatsMaxima ? std::max(in[i], inout[i]) : in[i] + inout[i];
}

namespace {

void max_then_sum(void* in, void* inout, int* count, MPI_Datatype*) {
  EngineImpl::reduce_stats(static_cast<const double*>(in), static_cast<double*>(inout), *count);
}

}  // namespace

MPI_Op EngineImpl::stats_op() {
  if (stats == MPI_OP_NULL) check_mpi(MPI_Op_create(&max_then_sum, 1, &stats), "MPI_Op_create");
  return stats;
}

MPI_Op EngineImpl::key_vote_op() {
  if (key_votes == MPI_OP_NULL) check_mpi(MPI_Op_create(&engine::reduce_key_votes, 1, &key_votes), "MPI_Op_create");
  return key_votes;
}

MPI_Datatype EngineImpl::key_vote_type() {  // whole votes, so that no reduction splits one
  if (key_vote == MPI_DATATYPE_NULL) {
    check_mpi(MPI_Type_contiguous(sizeof(engine::KeyVote) / sizeof(uint64_t), MPI_UINT64_T, &key_vote),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&key_vote), "MPI_Type_commit");
  }
  return key_vote;
}

int EngineImpl::cores_per_node() {
  if (cores == 0) cores = std::max(machine_once().io.cores_per_node(), 1);
  return cores;
}

DrainStats EngineImpl::wait_drain(engine::DrainJob& job) {
  if (job.result) return *job.result;
  job.join();
  if (!job.kept_retired.empty()) keep_retired(job.kept_retired);  // removed with the engine, or recycled
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double times[4] = {job.error ? static_cast<double>(size - rank) : 0.0, job.return_s, job.durable_s, job.copy_s};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, times, 4, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  unsigned long long bytes = job.bytes;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm), "MPI_Allreduce");
  DrainStats s;
  s.drained = !job.fallback;
  s.fallback = job.fallback;
  s.target = job.target;
  s.note = job.note;
  s.return_s = times[1];
  s.durable_s = job.fallback ? times[1] : std::max(times[2], times[1]);
  s.copy_s = times[3];
  s.bytes = bytes;
  job.result = s;
  drains.erase(std::remove_if(drains.begin(), drains.end(), [&](const auto& d) { return d.get() == &job; }),
               drains.end());
  if (times[0] > 0) {
    const Error local(ErrorKind::runtime, "drain of \"" + job.target + "\": " + job.error.value_or(""));
    raise_from(comm, size - static_cast<int>(times[0]), job.error ? &local : nullptr);
  }
  return s;
}

void EngineImpl::wait_drains_touching(const std::vector<std::string>& paths) {
  std::vector<std::shared_ptr<engine::DrainJob>> touching;
  for (const auto& d : drains) {
    for (const std::string& p : paths) {
      if (!p.empty() && (d->source == p || d->target == p)) {
        touching.push_back(d);
        break;
      }
    }
  }
  for (const auto& d : touching) wait_drain(*d);
}

Engine::Engine(MPI_Comm comm) : impl_(std::make_unique<EngineImpl>(comm)) {}
Engine::~Engine() = default;
MPI_Comm Engine::comm() const { return impl_->comm; }
uint64_t Engine::executions() const { return impl_->executions; }
DrainStats Engine::wait_drain(const std::string& path) {
  const std::string p = std::filesystem::absolute(path).lexically_normal().string();
  for (const auto& d : impl_->drains) {
    if (d->source == p || d->target == p) return impl_->wait_drain(*d);
  }
  return {};
}

}  // namespace strata
