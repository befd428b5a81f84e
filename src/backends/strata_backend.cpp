// strata: the aggregation engine as a backend. transfer() declares the decomposition as one
// Phase (every variable's blocks as subarrays in the raw layout; a rank's whole buffer as one
// extent in per-process and per-node files), plans it and moves it in one pipelined execution;
// close() syncs (with --fsync) and closes. The raw file is byte-identical to posix's.
#include <memory>
#include <optional>

#include "backends/backend_factories.hpp"
#include "common/error.hpp"
#include "strata/strata.hpp"

namespace strata {

namespace {

class StrataBackend final : public Backend {
 public:
  StrataBackend(const BackendContext& ctx, const Decomposition& d) : ctx_(ctx), d_(d) {}

  std::string name() const override { return "strata"; }

  void open(Access access) override {
    access_ = access;
    stats_.reset();
  }

  void transfer(Access access, std::byte* buffer) override {
    auto hints = ctx_.hints;
    if (ctx_.fsync && access == Access::write) hints.emplace_back("strata_fsync", "true");
    if (!engine_) engine_ = std::make_unique<Engine>(ctx_.file.comm);  // kept across repetitions
    phase_ = std::make_unique<Phase>(*engine_, ctx_.file.path,
                                     access == Access::write ? PhaseMode::write : PhaseMode::read, hints);
    if (ctx_.file.raw_layout) {
      std::vector<int> ids;
      for (int v = 0; v < static_cast<int>(d_.variables.size()); ++v) {
        const Variable& var = d_.variables[static_cast<size_t>(v)];
        ids.push_back(phase_->define_variable(var.name, elem_size(var.type), var.shape, d_.variable_offset(v)));
      }
      uint64_t mem = 0;
      for (const Block& b : d_.blocks) {
        phase_->add_subarray(ids[static_cast<size_t>(b.var)], b.start, b.count, buffer + mem);
        mem += b.elements() * elem_size(d_.variables[static_cast<size_t>(b.var)].type);
      }
    } else {
      // The file holds its ranks' buffers one after another.
      unsigned long long local = d_.local_bytes(), total = 0;
      MPI_Allreduce(&local, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, ctx_.file.comm);
      const int id = phase_->define_variable("rank-buffers", 1, {std::max<unsigned long long>(total, 1)}, 0);
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
    if (!phase_) return;
    PhaseStats max;
    auto phase = std::move(phase_);
    phase->close(&max);
    stats_ = max;
  }

  uint64_t requests() const override { return stats_ ? stats_->fs_requests : 0; }

  nlohmann::json details() const override {
    if (!stats_) return nullptr;
    const PhaseStats& s = *stats_;
    return {{"plan_s", s.plan_s},          {"aggregation_s", s.aggregation_s}, {"io_s", s.io_s},
            {"wait_s", s.wait_s},          {"close_s", s.close_s},             {"rounds", s.rounds},
            {"aggregators", s.aggregators}, {"buffer_bytes", s.buffer_bytes},  {"buffers", s.buffers},
            {"fs_requests", s.fs_requests}, {"bytes", s.bytes},        {"direct_bytes", s.direct_bytes},
            {"tier", s.tier}, {"tier_fallbacks", s.tier_fallbacks}};
  }

 private:
  BackendContext ctx_;
  const Decomposition& d_;
  Access access_ = Access::write;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Phase> phase_;
  std::optional<PhaseStats> stats_;
};

}  // namespace

std::unique_ptr<Backend> make_strata_backend(const BackendContext& ctx, const Decomposition& d, const Target&) {
  return std::make_unique<StrataBackend>(ctx, d);
}

}  // namespace strata
