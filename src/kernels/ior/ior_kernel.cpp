#include "kernels/ior/ior_kernel.hpp"

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "common/units.hpp"

namespace strata {

void IorKernel::add_options(OptionSet& o) const {
  o.section("ior options (IOR's -b -t -s)");
  o.add("block-size", "BYTES", "contiguous bytes per rank per segment (IOR -b)", "1M");
  o.add("transfer-size", "BYTES", "bytes per I/O request; must divide the block size (IOR -t)", "256K");
  o.add("segments", "N", "blocks per rank (IOR -s)", "1");
  o.add("layout", "strided|sequential", "strided: segment-major as IOR; sequential: each rank's segments together",
        "strided");
  o.add_flag("random-offsets",
             "each rank's transfers in a random order within its blocks, every byte once (IOR -z); the order "
             "comes from --seed and the rank");
  // IOR's own spellings: strata run ior -b 1M -t 256K -s 4 -F.
  o.alias('b', "block-size");
  o.alias('t', "transfer-size");
  o.alias('s', "segments");
  o.alias('z', "random-offsets");
}

KernelSetup IorKernel::build(const OptionSet& o, int rank, int ranks) const {
  const uint64_t b = positive_size_option(o, "block-size");
  const uint64_t t = positive_size_option(o, "transfer-size");
  const uint64_t s = positive_count_option(o, "segments");
  const std::string layout = o.get("layout");
  if (layout != "strided" && layout != "sequential") {
    throw_usage("--layout must be strided or sequential (got \"" + layout + "\")");
  }
  if (t > b)
    throw_usage("--transfer-size (" + format_size(t) + ") is larger than --block-size (" + format_size(b) + ")");
  if (b % t != 0) {
    throw_usage("--transfer-size (" + std::to_string(t) + ") must divide --block-size (" + std::to_string(b) + ")");
  }

  const bool random = o.declared("random-offsets") && o.flag("random-offsets");
  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  // IOR moves bytes: its PnetCDF path writes NC_BYTE (a CDF file is big-endian: wider elements
  // would be byte-swapped), its HDF5 path 8-byte native integers (no conversion either). This
  // kernel's elements are bytes, so that no backend converts or byte-swaps what IOR never does;
  // 8-byte elements made no measurable difference to HDF5 (docs/peers.md).
  const uint64_t n = static_cast<uint64_t>(ranks);
  d.variables.push_back({"ior", ElemType::u8, {n * s * b}});
  d.transfer_bytes = t;
  for (uint64_t seg = 0; seg < s; ++seg) {
    const uint64_t r = static_cast<uint64_t>(rank);
    const uint64_t index = layout == "strided" ? seg * n + r : r * s + seg;
    if (!random) {
      d.blocks.push_back({0, {index * b}, {b}});
      continue;
    }
    for (uint64_t at = 0; at < b; at += t) d.blocks.push_back({0, {index * b + at}, {t}});
  }
  if (random) {  // IOR -z: the same transfers, issued at offsets in a random order
    const uint64_t seed = o.declared("seed") && !o.get("seed").empty() ? parse_count(o.get("seed"), "--seed") : 1;
    SeededRandom pick(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(rank) + 1)));
    pick.shuffle(d.blocks);
  }
  setup.params = {{"block_size", b}, {"transfer_size", t}, {"segments", s}, {"layout", layout}};
  if (random) setup.params["random_offsets"] = true;
  return setup;
}

std::vector<KernelTest> IorKernel::tests() const {
  std::vector<KernelTest> t =
      matrix_tests(name(), {"--block-size", "64K", "--transfer-size", "16K", "--segments", "3", "--seed", "7"});
  t.push_back(identical_test(name(), 4, {"--block-size", "32K", "--transfer-size", "8K", "--segments", "4"}));
  t.push_back(identical_test(
      name(), 3, {"--block-size", "16K", "--transfer-size", "16K", "--segments", "2", "--layout", "sequential"}));
  return t;
}

}  // namespace strata
