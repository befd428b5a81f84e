// HACC-IO: the AoS and SoA layouts hold the same particle values at the byte positions each
// layout specifies, in a shared file and in a rank's own buffer (its file per process).
#include <gtest/gtest.h>

#include <cstring>

#include "common/error.hpp"
#include "decomp/selection.hpp"
#include "decomp/values.hpp"
#include "kernels/hacc/hacc_kernel.hpp"

using namespace strata;

namespace {

constexpr uint64_t kParticles = 50;
constexpr int kRanks = 3;
constexpr uint64_t kTotal = kParticles * kRanks;
const ValueStream kValues{9, 2};

OptionSet options(const std::string& layout, uint64_t particles = kParticles) {
  OptionSet o;
  o.add("seed", "S", "seed", "1");
  find_kernel("hacc").add_options(o);
  o.parse({"--particles", std::to_string(particles), "--layout", layout});
  return o;
}

Decomposition rank_part(const std::string& layout, int rank) {
  return find_kernel("hacc").build(options(layout), rank, kRanks).decomposition;
}

// The shared file every rank's part makes in the raw layout (what posix and MPI-IO write).
std::vector<std::byte> shared_file(const std::string& layout) {
  std::vector<std::byte> file;
  for (int r = 0; r < kRanks; ++r) {
    const Decomposition d = rank_part(layout, r);
    file.resize(d.global_bytes());
    std::vector<std::byte> buffer(d.local_bytes());
    fill(d, kValues, buffer.data());
    for (const Extent& e : flatten(d)) {
      const size_t es = elem_size(d.variables[static_cast<size_t>(e.var)].type);
      std::memcpy(file.data() + d.variable_offset(e.var) + e.elem_begin * es, buffer.data() + e.mem_offset,
                  e.elems * es);
    }
  }
  return file;
}

// The value of `field` of global particle `p`: a variable of the field's name at element p.
std::vector<std::byte> expected(const RecordField& field, uint64_t p) {
  std::vector<std::byte> v(elem_size(field.type));
  generate_value(Variable(field.name, field.type, {kTotal}), p, kValues, v.data());
  return v;
}

std::vector<std::byte> bytes_at(const std::vector<std::byte>& data, uint64_t offset, size_t n) {
  return {data.begin() + static_cast<std::ptrdiff_t>(offset), data.begin() + static_cast<std::ptrdiff_t>(offset + n)};
}

}  // namespace

TEST(HaccKernel, ParticlesAre38BytesOfNineFields) {
  const auto& f = hacc_particle_fields();
  ASSERT_EQ(f.size(), 9u);
  EXPECT_EQ(record_bytes(f), 38u);
  EXPECT_EQ(f[7].name, "pid");
  EXPECT_EQ(f[7].type, ElemType::i64);
  EXPECT_EQ(f[8].name, "mask");
  EXPECT_EQ(f[8].type, ElemType::u16);
  // The default: 25 000 particles, about 1 MB per rank (the paper's base value).
  OptionSet o;
  find_kernel("hacc").add_options(o);
  o.parse({});
  EXPECT_EQ(find_kernel("hacc").build(o, 0, 1).decomposition.local_bytes(), 950000u);
}

TEST(HaccKernel, SharedFileAosAndSoaPlaceEachFieldAsSpecified) {
  const auto aos = shared_file("aos");
  const auto soa = shared_file("soa");
  ASSERT_EQ(aos.size(), kTotal * 38);
  ASSERT_EQ(soa.size(), kTotal * 38);
  EXPECT_NE(aos, soa);
  const auto& fields = hacc_particle_fields();
  for (uint64_t p : {uint64_t{0}, kParticles - 1, kParticles, kTotal - 1}) {
    uint64_t in_record = 0, array_start = 0;
    for (const RecordField& f : fields) {
      const size_t es = elem_size(f.type);
      const auto want = expected(f, p);
      // AoS: particle p's 38 bytes together, its fields in order.
      EXPECT_EQ(bytes_at(aos, p * 38 + in_record, es), want) << f.name << " of particle " << p;
      // SoA: nine global arrays one after another.
      EXPECT_EQ(bytes_at(soa, array_start + p * es, es), want) << f.name << " of particle " << p;
      in_record += es;
      array_start += kTotal * es;
    }
  }
}

TEST(HaccKernel, FilePerProcessHoldsTheRanksParticlesInTheLayout) {
  const int rank = 1;
  const Decomposition aos = rank_part("aos", rank), soa = rank_part("soa", rank);
  std::vector<std::byte> a(aos.local_bytes()), s(soa.local_bytes());
  fill(aos, kValues, a.data());
  fill(soa, kValues, s.data());
  ASSERT_EQ(a.size(), kParticles * 38);
  ASSERT_EQ(s.size(), kParticles * 38);
  const uint64_t i = 7, p = rank * kParticles + i;  // the rank's 8th particle
  uint64_t in_record = 0, array_start = 0;
  for (const RecordField& f : hacc_particle_fields()) {
    const size_t es = elem_size(f.type);
    EXPECT_EQ(bytes_at(a, i * 38 + in_record, es), expected(f, p)) << f.name;
    EXPECT_EQ(bytes_at(s, array_start + i * es, es), expected(f, p)) << f.name;
    in_record += es;
    array_start += kParticles * es;
  }
}

TEST(HaccKernel, VerificationNamesTheFieldOfACorruptAosByte) {
  const Decomposition d = rank_part("aos", 0);
  std::vector<std::byte> buffer(d.local_bytes());
  fill(d, kValues, buffer.data());
  EXPECT_FALSE(verify(d, kValues, buffer.data()).has_value());
  buffer[3 * 38 + 30] ^= std::byte{1};  // particle 3, byte 30: pid (bytes 28..35)
  auto m = verify(d, kValues, buffer.data());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->variable, "particles.pid");
  EXPECT_EQ(m->index, (std::vector<uint64_t>{3, 30}));
}

TEST(HaccKernel, RejectsBadOptionsAndBadRecords) {
  EXPECT_THROW(find_kernel("hacc").build(options("aos", 0), 0, 2), Error);
  EXPECT_THROW(find_kernel("hacc").build(options("csv"), 0, 2), Error);
  Decomposition d;
  d.variables.emplace_back("particles", ElemType::u8, std::vector<uint64_t>{10, 37}, hacc_particle_fields());
  EXPECT_THROW(d.validate(), Error);  // the record is 38 bytes
  d.variables[0].shape = {10, 38};
  EXPECT_NO_THROW(d.validate());
  d.variables[0].type = ElemType::f32;
  EXPECT_THROW(d.validate(), Error);  // records are bytes
}
