// strata: the aggregation engine as a backend. transfer() declares the decomposition as one
// Phase (every variable's blocks as subarrays in the raw layout; a rank's whole buffer as one
// extent in per-process and per-node files), plans it and moves it in one pipelined execution;
// close() syncs (with --fsync) and closes. The raw file is byte-identical to posix's.
// The shared-file case goes through the datasets layer (src/datasets): every variable a
// dataset, blocks sorted and coalesced, all in one phase; --container hdf5 makes the file an
// HDF5 container (HDF5 metadata, the engine's raw data).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "common/error.hpp"
#include "datasets/datasets.hpp"
#include "strata/strata.hpp"

namespace strata {

namespace {

class StrataBackend final : public Backend {
 public:
  // The engine starts with the backend (collective: every rank makes its backend), before any
  // timed step, as an application makes its engine once at start-up; it is kept across
  // repetitions.
  StrataBackend(const BackendContext& ctx, const Decomposition& d)
      : ctx_(ctx), d_(d), engine_(std::make_unique<Engine>(ctx_.file.comm)) {}

  std::string name() const override { return "strata"; }

  bool commits_output() const override {
    if (ctx_.file.raw_layout && container_from_name(ctx_.io.container) != Container::raw) return false;
    return std::none_of(ctx_.hints.begin(), ctx_.hints.end(),
                        [](const auto& h) { return h.first == "strata_commit" && h.second == "in-place"; });
  }

  // Every step agrees on its own outcome: open() cannot fail (it only resets the statistics);
  // transfer() declares (locally: a bad declaration is kept and raised on every rank by the
  // plan) and plans (one agreement), then a read agrees on its execution and a write defers
  // its file errors to close(), the engine's close: one agreement on the outcome (and the
  // commit) over every rank. A driver's agreement after any of them would carry nothing new.
  bool agrees_on(BackendStep) const override { return true; }

  void open(Access access) override {
    access_ = access;
    stats_.reset();
  }

  void transfer(Access access, std::byte* buffer) override {
    auto hints = ctx_.hints;
    if (ctx_.io.fsync && access == Access::write) hints.emplace_back("strata_fsync", "true");
    // --drain: written on node-local storage, drained to the output (read: from the output).
    if (!ctx_.io.drain.empty()) hints.emplace_back("strata_drain", "true");
    drain_.reset();
    const PhaseMode mode = access == Access::write ? PhaseMode::write : PhaseMode::read;
    executions_before_ = engine_->executions();
    if (ctx_.file.raw_layout) {
      // The datasets are declared once per mode, file and hints, and moved again at every
      // repetition: an application's output routine declares its decomposition once, too.
      KeptSet& kept = kept_[access == Access::write ? 0 : 1];
      if (!kept.set || kept.set->moving() || kept.path != ctx_.file.path || kept.hints != hints) {
        kept.set.reset();
        kept.set =
            std::make_unique<DatasetSet>(*engine_, ctx_.file.path, mode, container_from_name(ctx_.io.container), hints);
        kept.path = ctx_.file.path;
        kept.hints = hints;
        for (const Variable& var : d_.variables) kept.set->define({var.name, var.type, var.shape, {}});
        declare_blocks(*kept.set);
      }
      set_ = &kept;
      if (access == Access::write) {
        kept.set->write(buffer);
      } else {
        kept.set->read(buffer);
      }
      return;
    }
    phase_ = std::make_unique<Phase>(*engine_, ctx_.file.path, mode, hints);
    // The file holds its ranks' buffers one after another.
    unsigned long long local = d_.local_bytes(), total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, ctx_.file.comm);
    // No ranks' bytes at all (a per-process file of a rank without data): no variable, so the
    // engine writes an empty file, as long as its variables (none).
    if (total > 0) {
      const int id = phase_->define_variable("rank-buffers", 1, {total}, 0);
      if (local > 0) phase_->add_extent(id, ctx_.file.base, local, buffer);
    }
    phase_->plan();
    if (access == Access::write) {
      phase_->write();
    } else {
      phase_->read();
    }
  }

  void close() override {
    PhaseStats max;
    if (set_) {
      close_set(max);
    } else if (phase_) {
      auto phase = std::move(phase_);
      own_requests_ = phase->close(&max).fs_requests;
    } else {
      return;
    }
    stats_ = max;
  }

  // One engine phase; its rounds; Equation 1 from the engine's own clocks: I/O by the
  // aggregators' threads, communication = one-sided aggregation, collective overhead = planning
  // plus waiting for buffers, library = the HDF5 container's metadata.
  CollectiveStats collective_calls(double transfer_s) override {
    if (!stats_) return {};
    // --drain: the timed write ended when the application could go on (close returned); the run
    // waits here, untimed, until the data is durable on the output, so that what follows (the
    // write's check, a read) finds it there. Both moments go to the engine record's "drain".
    // (So does a write with hint strata_drain: its drain is waited for by the output's path.)
    if (access_ == Access::write) {
      const DrainStats d = engine_->wait_drain(ctx_.file.path);
      if (d.drained || d.fallback) drain_ = d;
    }
    CollectiveStats c;
    c.valid = true;
    c.calls = engine_ ? engine_->executions() - executions_before_ : 0;  // as the engine counted them
    c.rounds = stats_->rounds;
    c.rounds_kind = "engine";
    c.aggregators = stats_->aggregators;
    c.round_bytes = stats_->buffer_bytes;
    const double parts[4] = {stats_->io_s, stats_->aggregation_s, stats_->plan_s + stats_->wait_s, container_s_};
    set_split(c, ctx_.file.comm, parts, transfer_s);
    return c;
  }

  // This rank's own file requests (the run sums them over the ranks; the phase's total is in the
  // engine record's fs_requests).
  uint64_t requests() const override { return stats_ ? own_requests_ : 0; }

  nlohmann::json details() const override {
    if (!stats_) return nullptr;
    const PhaseStats& s = *stats_;
    nlohmann::json j = {{"plan_s", s.plan_s},
                        {"aggregation_s", s.aggregation_s},
                        {"io_s", s.io_s},
                        {"wait_s", s.wait_s},
                        {"close_s", s.close_s},
                        {"commit_s", s.commit_s},
                        {"rounds", s.rounds},
                        {"aggregators", s.aggregators},
                        {"buffer_bytes", s.buffer_bytes},
                        {"buffers", s.buffers},
                        {"fs_requests", s.fs_requests},
                        {"bytes", s.bytes},
                        {"direct_bytes", s.direct_bytes},
                        {"tier", s.tier},
                        {"tier_fallbacks", s.tier_fallbacks},
                        {"strategy", s.strategy},
                        {"predicted_s", s.predicted_s},
                        {"model_s", s.model_s},
                        {"model_write_s", s.model_write_s},
                        {"calibration", s.calibration},
                        {"write_close_s", s.write_close_s},
                        {"execute_s", s.execute_s},
                        {"operations", s.operations},
                        {"collectives", s.collectives},
                        {"place_s", s.place_s},
                        {"exchange_s", s.exchange_s},
                        {"plan_reused", s.plan_reused},
                        {"plan_shift", s.plan_shift},
                        // beside predicted_s: the slowest rank's plan + write + close, less its wait for the
                        // last rank to reach the plan (the application's skew)
                        {"measured_s", s.phase_s},
                        {"container", ctx_.io.container},
                        {"container_s", container_s_},
                        {"extents", extents_}};
    if (drain_) {
      j["drain"] = {{"target", drain_->target}, {"drained", drain_->drained},   {"fallback", drain_->fallback},
                    {"note", drain_->note},     {"return_s", drain_->return_s}, {"durable_s", drain_->durable_s},
                    {"copy_s", drain_->copy_s}, {"bytes", drain_->bytes}};
    }
    return j;
  }

 private:
  struct KeptSet {
    std::unique_ptr<DatasetSet> set;
    std::string path;
    std::vector<Phase::Hint> hints;
  };

  // Every block of the decomposition; a variable whose blocks are another's (Decomposition::
  // blocks_like, validated) is declared like it, its blocks skipped unread.
  void declare_blocks(DatasetSet& set) const {
    const std::vector<int>& like = d_.blocks_like;
    std::vector<size_t> count(d_.variables.size(), 0);  // blocks declared so far, per variable
    for (size_t i = 0; i < d_.blocks.size();) {
      const Block& b = d_.blocks[i];
      const size_t v = static_cast<size_t>(b.var);
      if (v < like.size() && like[v] >= 0 && count[static_cast<size_t>(like[v])] > 0) {
        set.add_blocks_like(b.var, like[v]);
        i += count[static_cast<size_t>(like[v])];
        continue;
      }
      set.add_block(b.var, b.start, b.count);
      ++count[v];
      ++i;
    }
  }

  // Closes this transfer's phase of the kept set; a set whose close failed is not kept.
  void close_set(PhaseStats& max) {
    KeptSet* kept = set_;
    set_ = nullptr;
    try {
      own_requests_ = kept->set->close(&max).fs_requests;
      container_s_ = kept->set->container_s();
      extents_ = kept->set->extents();
    } catch (...) {
      kept->set.reset();
      throw;
    }
  }

  BackendContext ctx_;
  const Decomposition& d_;
  Access access_ = Access::write;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Phase> phase_;
  KeptSet kept_[2];         // by access: write, read
  KeptSet* set_ = nullptr;  // the one of this transfer
  std::optional<PhaseStats> stats_;
  double container_s_ = 0;
  uint64_t extents_ = 0;
  uint64_t executions_before_ = 0;
  uint64_t own_requests_ = 0;        // this rank's, of the last phase
  std::optional<DrainStats> drain_;  // --drain: the last write's two moments
};

}  // namespace

BackendRow strata_backend_row() {
  BackendRow row;
  row.name = "strata";
  row.summary = "Strata's engine: one planned phase, one-sided puts into pipelined aggregator buffers";
  row.make = [](const BackendContext& ctx, const Decomposition& d, const Target& t) -> std::unique_ptr<Backend> {
    if (container_from_name(ctx.io.container) == Container::hdf5 && t.layout != Layout::shared) {
      throw_usage("--container hdf5 is one shared file; it cannot express --" + layout_name(t.layout));
    }
    return std::make_unique<StrataBackend>(ctx, d);
  };
  row.can.layouts = {Layout::shared, Layout::file_per_process, Layout::file_per_node};
  row.can.sizes_own_buffers = true;
  row.can.options = {"container", "drain"};
  row.can.refuses = {{"deadline",
                      "the engine moves a phase as one planned collective operation (every rank's data "
                      "exchanged with its aggregators, then written), which cannot stop part-way and report "
                      "what moved (IOR -D: use posix, mpiio-ind, mpiio-coll, hdf5 or pnetcdf)"}};
  row.can.collective = true;
  row.test_variants = {{.name = "strata"}, {.name = "strata-fpp", .layout = Layout::file_per_process}};
#ifdef STRATA_HAVE_HDF5
  row.test_variants.push_back({.name = "strata-hdf5", .options = {"--container", "hdf5"}});
#endif
  row.can.hints = HintFamily::engine;
  return row;
}

}  // namespace strata
