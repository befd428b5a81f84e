#include "kernel.hpp"

#include "array1d/array1d_kernel.hpp"
#include "blocks/blocks_kernel.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "ior/ior_kernel.hpp"

namespace strata {

const std::vector<const Kernel*>& kernel_list() {
  static const IorKernel ior;
  static const Array1dKernel array1d;
  static const BlocksKernel blocks;
  static const std::vector<const Kernel*> list = {&ior, &array1d, &blocks};
  return list;
}

const Kernel& find_kernel(const std::string& name) {
  std::string known;
  for (const Kernel* k : kernel_list()) {
    if (k->name() == name) return *k;
    known += (known.empty() ? "" : ", ") + k->name();
  }
  throw_usage("unknown kernel \"" + name + "\" (available: " + known + ")");
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

}  // namespace strata
