// The outputs of one `strata run`. Most kernels write one output. A kernel that checkpoints
// (KernelSetup::checkpoint_steps, as S3D) writes a new output at each step: its own file or
// files, PATH.step<N>, holding that step's values. The driver writes, verifies and
// times each one; a repetition's write and read are the sums over its outputs, and each
// output's own timing is kept beside them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/node_map.hpp"
#include "backends/backend.hpp"
#include "decomp/values.hpp"
#include "run/run_record.hpp"

namespace strata {

struct RunOutput {
  std::optional<uint64_t> checkpoint;  // the checkpoint's step; none for a single output
  Target target;
  ValueStream values;  // the generator of this output's data
  BackendContext ctx;
  std::unique_ptr<Backend> backend;
};

// PATH.step<step, 6 digits> (out.nc -> out.nc.step000010), suffixed as files per process and
// per node are, so whatever finds PATH* finds every checkpoint.
std::string checkpoint_path(const std::string& path, uint64_t step);

// The run's outputs, each with its file group resolved; no backend yet. A single output keeps
// `target` and `values`; checkpoint k gets checkpoint_path(target.path, step_k) and the values
// of step values.step + step_k. Collective over `comm` (file_group is).
std::vector<RunOutput> plan_outputs(MPI_Comm comm, const NodeMap& nodes, const Target& target, const Decomposition& d,
                                    const std::vector<uint64_t>& checkpoint_steps, const ValueStream& values,
                                    const BackendContext& ctx);

// Adds one output's access to a repetition: into its per-checkpoint list (for checkpoints) and
// into the repetition's totals (bytes, times and requests summed).
void add_output_timing(Repetition& r, const RunOutput& out, const std::optional<PhaseTiming>& write,
                       const std::optional<PhaseTiming>& read);

}  // namespace strata
