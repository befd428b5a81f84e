#include "kernels/kernel.hpp"

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "common/suggest.hpp"
#include "common/units.hpp"
#include "kernels/array1d/array1d_kernel.hpp"
#include "kernels/blocks/blocks_kernel.hpp"
#include "kernels/e3sm/e3sm_kernel.hpp"
#include "kernels/hacc/hacc_kernel.hpp"
#include "kernels/ior/ior_kernel.hpp"
#include "kernels/noncontig3d/noncontig3d_kernel.hpp"
#include "kernels/s3d/s3d_kernel.hpp"
#include "kernels/trace/trace_kernel.hpp"

namespace strata {

const std::vector<const Kernel*>& kernel_list() {
  static const IorKernel ior;
  static const Array1dKernel array1d;
  static const BlocksKernel blocks;
  static const E3smKernel e3sm;
  static const Noncontig3dKernel noncontig3d;
  static const HaccKernel hacc;
  static const S3dKernel s3d;
  static const TraceKernel trace;
  static const std::vector<const Kernel*> list = {&ior, &array1d, &blocks, &e3sm, &noncontig3d, &hacc, &s3d, &trace};
  return list;
}

const Kernel& find_kernel(const std::string& name) {
  std::string known;
  std::vector<std::string> names;
  for (const Kernel* k : kernel_list()) {
    if (k->name() == name) return *k;
    known += (known.empty() ? "" : ", ") + k->name();
    names.push_back(k->name());
  }
  throw_usage("unknown kernel \"" + name + "\"" + did_you_mean(name, names) + " (available: " + known + ")");
}

uint64_t positive_size_option(const OptionSet& o, const std::string& name) {
  uint64_t v = parse_size(o.get(name), "--" + name);
  if (v == 0) throw_usage("--" + name + " must be greater than zero");
  return v;
}

uint64_t positive_count_option(const OptionSet& o, const std::string& name) {
  uint64_t v = parse_count(o.get(name), "--" + name);
  if (v == 0) throw_usage("--" + name + " must be greater than zero");
  return v;
}

std::vector<uint64_t> count_list_option(const OptionSet& o, const std::string& name, size_t count) {
  return parse_shape(o.get(name), "--" + name, count, count);
}

void add_memory_order_option(OptionSet& o, const std::string& what) {
  o.add("memory-order", "file|shuffled", "order of a rank's " + what + " in memory", "shuffled");
}

std::string memory_order_option(const OptionSet& o) {
  const std::string order = o.get("memory-order");
  if (order != "file" && order != "shuffled")
    throw_usage("--memory-order must be file or shuffled (got \"" + order + "\")");
  return order;
}

void apply_memory_order(const std::string& order, std::vector<Block>& blocks, uint64_t seed, int rank, uint64_t salt) {
  if (order != "shuffled") return;
  SeededRandom mine(seed ^ (salt * static_cast<uint64_t>(rank + 1)));
  mine.shuffle(blocks);
}

}  // namespace strata
