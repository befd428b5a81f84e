#include "run/run_outputs.hpp"

#include <cstdio>

namespace strata {

std::string checkpoint_path(const std::string& path, uint64_t step) {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".step%06llu", static_cast<unsigned long long>(step));
  return path + suffix;
}

std::vector<RunOutput> plan_outputs(MPI_Comm comm, const NodeMap& nodes, const Target& target, const Decomposition& d,
                                    const std::vector<uint64_t>& checkpoint_steps, const ValueStream& values,
                                    const BackendContext& ctx) {
  std::vector<RunOutput> outputs;
  auto add = [&](std::optional<uint64_t> checkpoint) {
    RunOutput o;
    o.checkpoint = checkpoint;
    o.target = target;
    o.values = values;
    if (checkpoint) {
      o.target.path = checkpoint_path(target.path, *checkpoint);
      o.values.step = values.step + *checkpoint;
    }
    o.ctx = ctx;
    o.ctx.file = file_group(comm, nodes, o.target, d);
    outputs.push_back(std::move(o));
  };
  if (checkpoint_steps.empty()) add(std::nullopt);
  for (uint64_t step : checkpoint_steps) add(step);
  return outputs;
}

namespace {

void accumulate(std::optional<PhaseTiming>& total, const PhaseTiming& p) {
  if (!total) {
    total = p;
    return;
  }
  total->bytes += p.bytes;
  total->open_s += p.open_s;
  total->xfer_s += p.xfer_s;
  total->close_s += p.close_s;
  total->time_s += p.time_s;
  total->requests += p.requests;
  for (size_t r = 0; r < total->rank_requests.size() && r < p.rank_requests.size(); ++r) {
    total->rank_requests[r] += p.rank_requests[r];
    total->rank_bytes[r] += p.rank_bytes[r];
    total->rank_xfer_s[r] += p.rank_xfer_s[r];
  }
  if (!p.engine.is_null()) total->engine = p.engine;  // the last output's breakdown
}

}  // namespace

void add_output_timing(Repetition& r, const RunOutput& out, const std::optional<PhaseTiming>& write,
                       const std::optional<PhaseTiming>& read) {
  if (write) accumulate(r.write, *write);
  if (read) accumulate(r.read, *read);
  if (out.checkpoint) r.checkpoints.push_back({*out.checkpoint, out.target.path, write, read});
}

}  // namespace strata
