// Reference NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: every
// reduction, weights, ignore_index, spatial dims and the log_prob output.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "linalg_test_util.h"

namespace hone {
namespace {

using lr_test::expect_near;
using lr_test::f32;
using lr_test::fails_with;
using lr_test::ints;
using lr_test::run;
using lr_test::run1;

Tensor logp() {
  return f32({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f});
}

TEST(NllLoss, Reductions) {
  auto none = run1("NegativeLogLikelihoodLoss", {logp(), ints({2, 0})},
                   {{"reduction", std::string("none")}});
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_EQ(none->shape(), (std::vector<int64_t>{2}));
  expect_near(*none, {3, 0.5});
  auto sum = run1("NegativeLogLikelihoodLoss", {logp(), ints({2, 0})},
                  {{"reduction", std::string("sum")}});
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->rank(), 0u);
  expect_near(*sum, {3.5});
  auto mean = run1("NegativeLogLikelihoodLoss", {logp(), ints({2, 0})});
  ASSERT_TRUE(mean);
  expect_near(*mean, {1.75});
}

TEST(NllLoss, WeightsAndIgnoreIndex) {
  Tensor w = f32({3}, {0.2f, 0.3f, 0.5f});
  auto mean = run1("NegativeLogLikelihoodLoss", {logp(), ints({2, 0}), w});
  ASSERT_TRUE(mean) << mean.error().to_string();
  expect_near(*mean, {(3 * 0.5 + 0.5 * 0.2) / 0.7}, 1e-6);
  auto ign =
      run1("NegativeLogLikelihoodLoss", {logp(), ints({2, 0})}, {{"ignore_index", int64_t{0}}});
  ASSERT_TRUE(ign);
  expect_near(*ign, {3});
  // An ignore_index outside [0, C) may appear in the target.
  auto neg = run1("NegativeLogLikelihoodLoss", {logp(), ints({-1, 1})},
                  {{"ignore_index", int64_t{-1}}, {"reduction", std::string("none")}});
  ASSERT_TRUE(neg) << neg.error().to_string();
  expect_near(*neg, {0, 1.5});
}

TEST(NllLoss, SpatialDims) {
  // N=1, C=2, d=2: input[0, c, d]
  Tensor x = f32({1, 2, 2}, {-1, -2, -3, -4});
  auto y = run1("NegativeLogLikelihoodLoss", {x, lr_test::i64({1, 2}, {1, 0})},
                {{"reduction", std::string("none")}});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 2}));
  expect_near(*y, {3, 2});
}

TEST(NllLoss, Errors) {
  EXPECT_TRUE(
      fails_with(run1("NegativeLogLikelihoodLoss", {logp(), ints({3, 0})}), "outside [0, 3)"));
  EXPECT_TRUE(
      fails_with(run1("NegativeLogLikelihoodLoss", {logp(), ints({1, 0, 0})}), "must have shape"));
  EXPECT_TRUE(fails_with(run1("NegativeLogLikelihoodLoss", {logp(), ints({1, 0})},
                              {{"reduction", std::string("avg")}}),
                         "reduction 'avg'"));
  EXPECT_TRUE(fails_with(
      run1("NegativeLogLikelihoodLoss", {logp(), ints({1, 0}), f32({2}, {1, 1})}), "weight"));
}

TEST(SoftmaxCrossEntropyLoss, LossAndLogProb) {
  Tensor scores = f32({2, 3}, {1, 2, 3, 1, 1, 1});
  auto outs = run("SoftmaxCrossEntropyLoss", {scores, ints({2, 0})},
                  {{"reduction", std::string("none")}}, 2);
  ASSERT_TRUE(outs) << outs.error().to_string();
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  expect_near((*outs)[0], {lse - 3, std::log(3.0)}, 1e-6);
  EXPECT_EQ((*outs)[1].shape(), (std::vector<int64_t>{2, 3}));
  expect_near((*outs)[1],
              {1 - lse, 2 - lse, 3 - lse, -std::log(3.0), -std::log(3.0), -std::log(3.0)}, 1e-6);
  auto mean = run1("SoftmaxCrossEntropyLoss", {scores, ints({2, 0})});
  ASSERT_TRUE(mean);
  expect_near(*mean, {(lse - 3 + std::log(3.0)) / 2}, 1e-6);
  auto weighted = run1("SoftmaxCrossEntropyLoss", {scores, ints({2, 0}), f32({3}, {2, 1, 1})},
                       {{"reduction", std::string("sum")}});
  ASSERT_TRUE(weighted);
  expect_near(*weighted, {(lse - 3) + 2 * std::log(3.0)}, 1e-6);
  auto ign =
      run1("SoftmaxCrossEntropyLoss", {scores, ints({2, 0})}, {{"ignore_index", int64_t{2}}});
  ASSERT_TRUE(ign);
  expect_near(*ign, {std::log(3.0)}, 1e-6);
}

TEST(SoftmaxCrossEntropyLoss, ClassAxisIsOneWithSpatialDims) {
  // N=1, C=2, d=2: scores[0, :, 0] = (0, 0), scores[0, :, 1] = (0, ln 3)
  Tensor scores = f32({1, 2, 2}, {0, 0, 0, static_cast<float>(std::log(3.0))});
  auto y = run1("SoftmaxCrossEntropyLoss", {scores, lr_test::i64({1, 2}, {0, 1})},
                {{"reduction", std::string("none")}});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_near(*y, {std::log(2.0), std::log(4.0 / 3.0)}, 1e-6);
}

}  // namespace
}  // namespace hone
