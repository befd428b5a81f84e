#include "kernels/hacc/hacc_kernel.hpp"

#include "common/error.hpp"

namespace strata {

const std::vector<RecordField>& hacc_particle_fields() {
  static const std::vector<RecordField> fields = {
      {"XX", ElemType::f32},  {"YY", ElemType::f32},  {"ZZ", ElemType::f32},
      {"VX", ElemType::f32},  {"VY", ElemType::f32},  {"VZ", ElemType::f32},
      {"phi", ElemType::f32}, {"pid", ElemType::i64}, {"mask", ElemType::u16}};
  return fields;
}

void HaccKernel::add_options(OptionSet& o) const {
  o.section("hacc options (HACC-IO)");
  o.add("particles", "N", "particles per rank, 38 bytes each", "25000");
  o.add("layout", "aos|soa", "aos: each particle's nine fields together; soa: nine arrays one after another", "soa");
}

KernelSetup HaccKernel::build(const OptionSet& o, int rank, int ranks) const {
  const uint64_t n = positive_count_option(o, "particles");
  const std::string layout = o.get("layout");
  if (layout != "aos" && layout != "soa") throw_usage("--layout must be aos or soa (got \"" + layout + "\")");
  const auto& fields = hacc_particle_fields();
  const uint64_t total = n * static_cast<uint64_t>(ranks);
  const uint64_t first = n * static_cast<uint64_t>(rank);

  KernelSetup setup;
  Decomposition& d = setup.decomposition;
  if (layout == "soa") {
    for (const RecordField& f : fields) {
      d.blocks.push_back({static_cast<int>(d.variables.size()), {first}, {n}});
      d.variables.push_back({f.name, f.type, {total}, {}});
    }
  } else {
    const uint64_t record = record_bytes(fields);
    d.variables.push_back({"particles", ElemType::u8, {total, record}, fields});
    d.blocks.push_back({0, {first, 0}, {n, record}});
  }
  setup.params = {{"particles", n},
                  {"layout", layout},
                  {"bytes_per_particle", record_bytes(fields)},
                  {"bytes_per_rank", n * record_bytes(fields)}};
  return setup;
}

std::vector<KernelTest> HaccKernel::tests() const {
  // Every backend and layout that can express it, file per node on virtual nodes of two ranks.
  std::vector<KernelTest> t;
  for (const std::string layout : {"aos", "soa"}) {
    t.push_back({.name = "app.hacc-" + layout + ".{BACKEND}",
                 .args = {"--particles", "2000", "--layout", layout, "--seed", "5"},
                 .ranks = {1, 3, 4},
                 .backends = {.layouts = {"shared", "file-per-process", "file-per-node"}},
                 .env = {"STRATA_RANKS_PER_NODE=2"}});
  }
  t.push_back(identical_test(name(), 3, {"--particles", "500", "--layout", "aos", "--seed", "4"}));
  t.push_back(identical_test(name(), 4, {"--particles", "300", "--layout", "soa", "--seed", "6"}));
  return t;
}

}  // namespace strata
