#include "kernel.hpp"

#include "array1d/array1d_kernel.hpp"
#include "blocks/blocks_kernel.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "e3sm/e3sm_kernel.hpp"
#include "ior/ior_kernel.hpp"
#include "noncontig3d/noncontig3d_kernel.hpp"
#include "hacc/hacc_kernel.hpp"
#include "s3d/s3d_kernel.hpp"

namespace strata {

const std::vector<const Kernel*>& kernel_list() {
  static const IorKernel ior;
  static const Array1dKernel array1d;
  static const BlocksKernel blocks;
  static const E3smKernel e3sm;
  static const Noncontig3dKernel noncontig3d;
  static const HaccKernel hacc;
  static const S3dKernel s3d;
  static const std::vector<const Kernel*> list = {&ior, &array1d, &blocks, &e3sm, &noncontig3d, &hacc, &s3d};
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

std::vector<uint64_t> count_list_option(const OptionSet& o, const std::string& name, size_t count) {
  const std::string text = o.get(name);
  std::vector<uint64_t> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('x', begin);
    if (end == std::string::npos) end = text.size();
    const uint64_t v = parse_count(text.substr(begin, end - begin), "--" + name);
    if (v == 0) throw_usage("--" + name + " values must be greater than zero (got \"" + text + "\")");
    out.push_back(v);
    begin = end + 1;
  }
  if (out.size() != count) {
    throw_usage("--" + name + " needs " + std::to_string(count) + " values like 8x8x8 (got \"" + text + "\")");
  }
  return out;
}

}  // namespace strata
