// An application kernel (kernels/app_kernel.hpp) owns its output phase: it opens, writes and
// closes its files itself in the chosen mode; the run repeats the phase, reads it back
// (untimed to verify, timed with --read) and keeps what the kernel measured.
#include <optional>

#include "common/error.hpp"
#include "common/mpi_env.hpp"
#include "fs/fs_info.hpp"
#include "fs/hints_in_effect.hpp"
#include "kernels/app_kernel.hpp"
#include "run/workload.hpp"

namespace strata {

namespace {

PhaseTiming timing_of(const AppPhase& a) {
  PhaseTiming p;
  p.bytes = a.bytes;
  p.time_s = a.time_s;
  p.open_s = a.open_s;
  p.xfer_s = a.xfer_s;
  p.close_s = a.close_s;
  p.requests = a.requests;
  p.rank_time_s = a.rank_time_s;
  if (a.details.contains("engine")) p.engine = a.details["engine"];
  p.kernel = a.details;
  return p;
}

class ApplicationWorkload final : public Workload {
 public:
  ApplicationWorkload(const RunOptions& o, MPI_Comm comm) : o_(o), kernel_(*find_app_kernel(o.kernel)) {
    AppContext ctx;
    ctx.comm = comm;
    MPI_Comm_rank(comm, &ctx.rank);
    MPI_Comm_size(comm, &ctx.size);
    ctx.output = o.output.empty() ? kernel_.default_output() : o.output;
    ctx.io = o.io;
    ctx.values.seed = o.seed;
    ctx.values.step = o.step;
    ctx.hints = o.hints;
    ctx.io_component = io_component();
    io_component_ = ctx.io_component;
    output_ = ctx.output;
    collectively(comm, [&] { fs_ = fs_info(ctx.output); });
    run_ = kernel_.prepare(o.parsed, ctx, o.writes());
  }

  std::string output_path() const override { return output_; }

  Repetition repeat(bool first, std::optional<std::string>& failure) override {
    Repetition r;
    if (o_.writes()) {
      run_->remove_output();
      AppPhase w = run_->write();
      r.write = timing_of(w);
      text_ += w.text;
      if (first) in_effect_ = run_->hints_in_effect();
      if (o_.verify && !o_.read) run_->read(true, failure);  // untimed read-back
    }
    if (o_.read && !failure) {
      AppPhase rd = run_->read(o_.verify, failure);
      r.read = timing_of(rd);
      text_ += rd.text;
      if (first && !o_.writes()) in_effect_ = run_->hints_in_effect();
    }
    return r;
  }

  Hints hints_in_effect() const override {
    return io_component_ == "ompio" && !in_effect_.empty() ? merge_hints(in_effect_, ompio_settings()) : in_effect_;
  }

  nlohmann::json header() const override {
    return {
        {"params", run_->params()},
        {"mode", o_.mode},
        {"mode_option", kernel_.mode_option()},
        {"fs_type", fs_.type},
        {"fs_block_size", fs_.block_size},
        {"output", output_},
        {"layout", run_->layout()},
        {"file_per_process", false},
        {"files", run_->files()},
        {"node_local", false},
        {"bytes_per_rank", {{"local", run_->local_bytes()}}},
        {"global_bytes", run_->global_bytes()},
    };
  }

  std::string text() const override { return text_; }

 private:
  const RunOptions& o_;
  const AppKernel& kernel_;
  std::string io_component_, output_;
  FsInfo fs_;
  std::unique_ptr<AppRun> run_;
  std::string text_;
  Hints in_effect_;
};

}  // namespace

std::unique_ptr<Workload> application_workload(const RunOptions& options, MPI_Comm comm, const NodeMap&) {
  return std::make_unique<ApplicationWorkload>(options, comm);
}

}  // namespace strata
