// BatchNormalization, InstanceNormalization, LayerNormalization,
// GroupNormalization, LRN and MeanVarianceNormalization on hand-computed cases.
#include <gtest/gtest.h>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

const std::map<std::string, Attribute> kNoEps{{"epsilon", 0.0f}};

TEST(NnBatchNorm, InferenceFormula) {
  Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  auto y =
      run1("BatchNormalization",
           {x, f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {1, 3}), f32({2}, {4, 1})}, kNoEps);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 2, 1, 2}, {0, 0.5f, 1, 3});
  // Default epsilon 1e-5 is added to the variance.
  auto d = run1("BatchNormalization",
                {f32({1, 1}, {2}), f32({1}, {1}), f32({1}, {0}), f32({1}, {0}), f32({1}, {1})});
  ASSERT_TRUE(d);
  EXPECT_NEAR(d->data<float>()[0], 2.0 / std::sqrt(1.0 + 1e-5), 1e-7);
}

TEST(NnBatchNorm, TrainingModeAndBadParamsAreErrors) {
  Tensor x = f32({1, 2, 1, 1}, {1, 2});
  Tensor p = f32({2}, {1, 1});
  auto t = run1("BatchNormalization", {x, p, p, p, p}, {{"training_mode", int64_t{1}}});
  EXPECT_TRUE(fails_with(t, ErrorCode::kUnsupported, "training_mode"));
  auto bad = run1("BatchNormalization", {x, f32({3}, {1, 1, 1}), p, p, p});
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidArgument, "scale"));
}

TEST(NnInstanceNorm, PerSampleChannelStatistics) {
  Tensor x = f32({2, 1, 2}, {1, 3, 10, 30});
  auto y = run1("InstanceNormalization", {x, f32({1}, {2}), f32({1}, {0.5f})}, kNoEps);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {2, 1, 2}, {-1.5f, 2.5f, -1.5f, 2.5f});
}

TEST(NnLayerNorm, LastAxisWithStatisticsOutputs) {
  Tensor x = f32({2, 2}, {1, 3, 2, 6});
  auto r = run("LayerNormalization", {x, f32({2}, {1, 2}), f32({2}, {0, 1})}, kNoEps, 3);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_values((*r)[0], {2, 2}, {-1, 3, -1, 3});
  expect_values((*r)[1], {2, 1}, {2, 4});
  expect_values((*r)[2], {2, 1}, {1, 0.5f});
}

TEST(NnLayerNorm, AxisZeroBroadcastScaleAndNoBias) {
  Tensor x = f32({2, 2}, {1, 3, 2, 6});
  std::map<std::string, Attribute> attrs = kNoEps;
  attrs["axis"] = int64_t{0};
  auto y = run1("LayerNormalization", {x, f32({1}, {2})}, attrs);
  ASSERT_TRUE(y) << y.error().to_string();
  const double inv = 1.0 / std::sqrt(3.5);
  expect_values(
      *y, {2, 2},
      {static_cast<float>(-4 * inv), 0, static_cast<float>(-2 * inv), static_cast<float>(6 * inv)});
  auto bad = run1("LayerNormalization", {x, f32({3}, {1, 1, 1})});
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidArgument, "does not broadcast"));
  auto axis = run1("LayerNormalization", {x, f32({2}, {1, 1})}, {{"axis", int64_t{2}}});
  EXPECT_TRUE(fails_with(axis, ErrorCode::kInvalidArgument, "axis 2"));
}

TEST(NnGroupNorm, PerGroupAndPerChannelScale) {
  Tensor x = f32({1, 4, 1}, {1, 3, 5, 9});
  std::map<std::string, Attribute> attrs{{"epsilon", 0.0f}, {"num_groups", int64_t{2}}};
  auto g = run1("GroupNormalization", {x, f32({2}, {1, 2}), f32({2}, {0, 1})}, attrs, 18);
  ASSERT_TRUE(g) << g.error().to_string();
  expect_values(*g, {1, 4, 1}, {-1, 1, -1, 3});
  auto c =
      run1("GroupNormalization", {x, f32({4}, {1, 1, 2, 2}), f32({4}, {0, 0, 1, 1})}, attrs, 18);
  ASSERT_TRUE(c) << c.error().to_string();
  expect_values(*c, {1, 4, 1}, {-1, 1, -1, 3});
  attrs["num_groups"] = int64_t{3};
  EXPECT_TRUE(fails_with(
      run1("GroupNormalization", {x, f32({3}, {1, 1, 1}), f32({3}, {0, 0, 0})}, attrs, 18),
      ErrorCode::kInvalidArgument, "num_groups 3"));
}

TEST(NnLrn, CrossChannelWindow) {
  Tensor x = f32({1, 3, 1, 1}, {1, 2, 3});
  auto y =
      run1("LRN", {x}, {{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 3, 1, 1}, {1.0f / 6, 2.0f / 15, 3.0f / 14});
  EXPECT_TRUE(fails_with(run1("LRN", {x}), ErrorCode::kInvalidArgument, "size"));
}

TEST(NnMeanVarianceNorm, DefaultAxesArePerChannel) {
  Tensor x = f32({1, 2, 1, 2}, {1, 3, 10, 20});
  auto y = run1("MeanVarianceNormalization", {x});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 2, 1, 2}, {-1, 1, -1, 1});
  auto all = run1("MeanVarianceNormalization", {f32({2}, {1, 3})}, {{"axes", Ints{0}}});
  ASSERT_TRUE(all) << all.error().to_string();
  expect_values(*all, {2}, {-1, 1});
}

}  // namespace
}  // namespace hone::nn_test
