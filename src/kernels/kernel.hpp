// The kernel interface: a kernel is a Decomposition plus its options.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/options.hpp"
#include "decomp/decomposition.hpp"
#include "kernels/kernel_test.hpp"

namespace strata {

struct KernelSetup {
  Decomposition decomposition;  // this rank's part
  nlohmann::json params;        // the kernel's parameters as they were resolved
  // Empty: the run writes one output. Otherwise the kernel writes a new output at each of these
  // simulation steps (checkpoints, as S3D does): the driver suffixes the output path with the
  // step, generates the step's values, and writes, verifies and reports each checkpoint.
  std::vector<uint64_t> checkpoint_steps;
  // A read alone reads this decomposition as it is, not an even share of what the output's index
  // says was written (the trace kernel's read phases: the job's own read requests).
  bool own_read_layout = false;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual void add_options(OptionSet& options) const = 0;
  // Builds rank `rank`'s decomposition of `ranks`. Pure: depends only on the options and the
  // two numbers, so a serial reference writer can build every rank's part. Throws a usage
  // Error for bad parameters.
  virtual KernelSetup build(const OptionSet& options, int rank, int ranks) const = 0;
  // The MPI tests of the kernel (kernels/kernel_test.hpp): none unless it declares them.
  virtual std::vector<KernelTest> tests() const { return {}; }
};

const std::vector<const Kernel*>& kernel_list();
// Throws a usage Error naming the available kernels.
const Kernel& find_kernel(const std::string& name);

// Shared option readers for kernels: a positive size with units, a positive count, the seed.
uint64_t positive_size_option(const OptionSet& o, const std::string& name);
uint64_t positive_count_option(const OptionSet& o, const std::string& name);
// `count` positive counts in the shape form every kernel uses, separated by x ("64x32x32", as
// --shape and --grid; common/units.hpp's parse_shape, which also takes commas); throws a usage
// Error otherwise.
std::vector<uint64_t> count_list_option(const OptionSet& o, const std::string& name, size_t count);
// --memory-order file|shuffled, one spelling for every kernel with it: declared (`what` names
// the pieces, "tiles" or "blocks"), read and checked, and applied: "shuffled" shuffles the rank's
// blocks in memory with a generator seeded by the seed, the rank and the kernel's `salt`.
void add_memory_order_option(OptionSet& o, const std::string& what);
std::string memory_order_option(const OptionSet& o);
void apply_memory_order(const std::string& order, std::vector<Block>& blocks, uint64_t seed, int rank, uint64_t salt);

}  // namespace strata
