#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "decomp/values.hpp"

using namespace strata;

namespace {
Decomposition one_var(ElemType t) {
  Decomposition d;
  d.variables.push_back({"temperature", t, {8, 8}});
  d.blocks.push_back({0, {2, 0}, {3, 8}});
  return d;
}
}  // namespace

TEST(Values, AreDeterministicAndDependOnSeedStepAndIndex) {
  Variable v{"x", ElemType::u64, {100}};
  uint64_t a, b, c, e;
  generate_value(v, 5, {1, 0}, reinterpret_cast<std::byte*>(&a));
  generate_value(v, 5, {1, 0}, reinterpret_cast<std::byte*>(&b));
  generate_value(v, 6, {1, 0}, reinterpret_cast<std::byte*>(&c));
  generate_value(v, 5, {1, 1}, reinterpret_cast<std::byte*>(&e));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, e);
}

TEST(Values, FloatsAreFiniteAndExact) {
  Variable v{"p", ElemType::f32, {1000}};
  for (uint64_t i = 0; i < 1000; ++i) {
    float f;
    generate_value(v, i, {3, 0}, reinterpret_cast<std::byte*>(&f));
    ASSERT_TRUE(std::isfinite(f));
    ASSERT_EQ(f * 1024.0f, std::round(f * 1024.0f));
  }
}

TEST(Values, VerifyPassesOnFilledDataAndNamesTheFirstMismatch) {
  for (ElemType t :
       {ElemType::u8, ElemType::i32, ElemType::i64, ElemType::u64, ElemType::f32, ElemType::f64, ElemType::u16}) {
    Decomposition d = one_var(t);
    std::vector<std::byte> buf(d.local_bytes());
    fill(d, {7, 2}, buf.data());
    EXPECT_FALSE(verify(d, {7, 2}, buf.data()).has_value()) << elem_name(t);
    EXPECT_TRUE(verify(d, {7, 3}, buf.data()).has_value()) << elem_name(t);
    // Corrupt element 9 of the block = global [3, 1].
    buf[9 * elem_size(t)] ^= std::byte{0x40};
    auto m = verify(d, {7, 2}, buf.data());
    ASSERT_TRUE(m.has_value()) << elem_name(t);
    EXPECT_EQ(m->count, 1u);
    EXPECT_EQ(m->variable, "temperature");
    EXPECT_EQ(m->index, (std::vector<uint64_t>{3, 1}));
    EXPECT_NE(m->expected, m->found);
    EXPECT_NE(m->describe().find("[3,1]"), std::string::npos);
  }
}
