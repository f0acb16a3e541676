// The random ops draw deterministically (seeded), within their ranges and
// with the asked shapes and types; exact draws are not part of the contract.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

TEST(RandomOps, SeededDrawsRepeatAndDiffer) {
  const std::map<std::string, Attribute> a{{"shape", Ints{3, 4}}, {"seed", 5.0f}};
  auto x = run1("RandomNormal", {}, a, 22);
  auto y = run1("RandomNormal", {}, a, 22);
  auto z = run1("RandomNormal", {}, {{"shape", Ints{3, 4}}, {"seed", 6.0f}}, 22);
  ASSERT_TRUE(x && y && z) << (x ? "" : x.error().to_string());
  EXPECT_EQ(x->shape(), (Ints{3, 4}));
  EXPECT_EQ(values(*x), values(*y));
  EXPECT_NE(values(*x), values(*z));
}

TEST(RandomOps, UniformRangeAndLikeTypes) {
  auto u = run1("RandomUniform", {}, {{"shape", Ints{1000}}, {"low", -2.0f}, {"high", 3.0f}}, 22);
  ASSERT_TRUE(u) << u.error().to_string();
  double sum = 0.0;
  for (float v : values(*u)) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LE(v, 3.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000.0, 0.5, 0.2);
  auto like = run1("RandomNormalLike", {iota({2, 5})}, {{"mean", 10.0f}, {"scale", 0.01f}}, 22);
  ASSERT_TRUE(like) << like.error().to_string();
  EXPECT_EQ(like->shape(), (Ints{2, 5}));
  for (float v : values(*like)) EXPECT_NEAR(v, 10.0f, 0.1f);
  auto d = run1("RandomUniformLike", {iota({3})}, {{"dtype", int64_t{11}}}, 22);
  ASSERT_TRUE(d) << d.error().to_string();
  EXPECT_EQ(d->dtype(), DType::kF64);
  auto bad = run1("RandomUniform", {}, {}, 22);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidArgument, "shape"));
}

TEST(RandomOps, BernoulliAndMultinomialExtremes) {
  auto b = run1("Bernoulli", {f32({4}, {0, 1, 0, 1})}, {{"seed", 1.0f}}, 22);
  ASSERT_TRUE(b) << b.error().to_string();
  expect_values(*b, {4}, {0, 1, 0, 1});
  const float ninf = -std::numeric_limits<float>::infinity();
  auto m = run1("Multinomial", {f32({2, 3}, {ninf, 0, ninf, 0, ninf, ninf})},
                {{"sample_size", int64_t{5}}, {"dtype", int64_t{7}}}, 22);
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_EQ(m->dtype(), DType::kI64);
  ASSERT_EQ(m->shape(), (Ints{2, 5}));
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(m->data<int64_t>()[i], i < 5 ? 1 : 0);
}

}  // namespace
}  // namespace hone::nn_test
