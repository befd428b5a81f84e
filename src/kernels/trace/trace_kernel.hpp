// trace: replays a recorded job's writes. A trace file (JSON, written by `python -m strata.replay`
// from a Darshan log, or by hand; docs/replay.md) lists the job's rank count and variables, each
// the (rank, offset, length) of every write request in time order. Each variable becomes a 1-D
// uint8 variable as long as its furthest byte; each request a block of the rank that made it, in
// its order, kept apart (Decomposition::blocks_apart), so a backend issuing a request per extent
// issues the job's requests. Fewer ranks than the job's fold job rank r onto rank r mod ranks.
// Requests of one variable must not overlap (the converter moves rewrites into variables of their
// own); the kernel refuses a trace whose requests do, naming them.
#pragma once

#include "kernels/kernel.hpp"

namespace strata {

class TraceKernel final : public Kernel {
 public:
  std::string name() const override { return "trace"; }
  std::string summary() const override { return "a recorded job's write requests, from a trace file (strata replay)"; }
  void add_options(OptionSet& options) const override;
  KernelSetup build(const OptionSet& options, int rank, int ranks) const override;
};

}  // namespace strata
