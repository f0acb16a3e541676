// Reference Softmax, LogSoftmax, Hardmax (both opset conventions), TopK and
// CumSum against hand-computed values.
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
using lr_test::values;

std::vector<double> softmax_of(std::vector<double> v) {
  double s = 0;
  for (double x : v) s += std::exp(x);
  for (double& x : v) x = std::exp(x) / s;
  return v;
}

TEST(Softmax, LastAxisAtOpset13AndLargeValues) {
  auto y = run1("Softmax", {f32({2, 3}, {1, 2, 3, 1000, 1000, 1000})});
  ASSERT_TRUE(y) << y.error().to_string();
  std::vector<double> want = softmax_of({1, 2, 3});
  want.insert(want.end(), {1.0 / 3, 1.0 / 3, 1.0 / 3});
  expect_near(*y, want, 1e-6);
  auto ls = run1("LogSoftmax", {f32({3}, {1, 2, 3})});
  ASSERT_TRUE(ls);
  const std::vector<double> s = softmax_of({1, 2, 3});
  expect_near(*ls, {std::log(s[0]), std::log(s[1]), std::log(s[2])}, 1e-6);
}

TEST(Softmax, AxisZeroAtOpset13IsOneAxis) {
  auto y = run1("Softmax", {f32({2, 2}, {0, 1, 0, 3})}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(y) << y.error().to_string();
  const double a = 1 / (1 + std::exp(2.0));
  expect_near(*y, {0.5, a, 0.5, 1 - a}, 1e-6);
}

TEST(Softmax, BeforeOpset13CoercesTo2D) {
  // Shape [2, 2, 2], default axis 1: each batch row of 4 values is one softmax.
  Tensor x = f32({2, 2, 2}, {0, 1, 2, 3, 0, 0, 0, 0});
  auto y = run1("Softmax", {x}, {}, 11);
  ASSERT_TRUE(y) << y.error().to_string();
  std::vector<double> want = softmax_of({0, 1, 2, 3});
  want.insert(want.end(), {0.25, 0.25, 0.25, 0.25});
  expect_near(*y, want, 1e-6);
  // Same input at opset 13 (axis -1): pairs.
  auto y13 = run1("Softmax", {x});
  ASSERT_TRUE(y13);
  const std::vector<double> p = softmax_of({0, 1});
  expect_near(*y13, {p[0], p[1], p[0], p[1], 0.5, 0.5, 0.5, 0.5}, 1e-6);
  auto h = run1("Hardmax", {f32({2, 3}, {1, 5, 5, 2, 0, 1})}, {}, 11);
  ASSERT_TRUE(h);
  expect_near(*h, {0, 1, 0, 1, 0, 0});
  EXPECT_TRUE(fails_with(run1("Softmax", {x}, {{"axis", int64_t{3}}}), "out of range"));
}

TEST(Hardmax, FirstMaximumAlongAxis) {
  auto h = run1("Hardmax", {f32({2, 2}, {3, 3, 1, 2})}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(h) << h.error().to_string();
  expect_near(*h, {1, 1, 0, 0});
}

TEST(TopK, LargestSmallestTiesAndAxis) {
  Tensor x = f32({2, 4}, {1, 4, 4, 2, 9, 7, 8, 7});
  auto top = run("TopK", {x, ints({2})}, {}, 2);
  ASSERT_TRUE(top) << top.error().to_string();
  expect_near((*top)[0], {4, 4, 9, 8});
  EXPECT_EQ(values<int64_t>((*top)[1]), (std::vector<int64_t>{1, 2, 0, 2}));
  auto low = run("TopK", {x, ints({3})}, {{"largest", int64_t{0}}}, 2);
  ASSERT_TRUE(low);
  expect_near((*low)[0], {1, 2, 4, 7, 7, 8});
  EXPECT_EQ(values<int64_t>((*low)[1]), (std::vector<int64_t>{0, 3, 1, 1, 3, 2}));
  auto col = run("TopK", {x, ints({1})}, {{"axis", int64_t{0}}}, 2);
  ASSERT_TRUE(col);
  EXPECT_EQ((*col)[0].shape(), (std::vector<int64_t>{1, 4}));
  expect_near((*col)[0], {9, 7, 8, 7});
  EXPECT_EQ(values<int64_t>((*col)[1]), (std::vector<int64_t>{1, 1, 1, 1}));
  // Opset 1 takes k as an attribute.
  auto v1 = run("TopK", {x}, {{"k", int64_t{1}}}, 2, 1);
  ASSERT_TRUE(v1) << v1.error().to_string();
  expect_near((*v1)[0], {4, 9});
  EXPECT_TRUE(fails_with(run1("TopK", {x, ints({5})}), "out of range"));
}

TEST(TopK, IntegersAndZeroK) {
  auto top = run("TopK", {ints({3, -1, 7, 3}), ints({3})}, {}, 2);
  ASSERT_TRUE(top) << top.error().to_string();
  EXPECT_EQ(values<int64_t>((*top)[0]), (std::vector<int64_t>{7, 3, 3}));
  EXPECT_EQ(values<int64_t>((*top)[1]), (std::vector<int64_t>{2, 0, 3}));
  auto none = run("TopK", {ints({3, 1}), ints({0})}, {}, 2);
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)[0].shape(), (std::vector<int64_t>{0}));
}

TEST(CumSum, ExclusiveReverseAndAxis) {
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  auto a = run1("CumSum", {x, Tensor::scalar<int64_t>(0)});
  ASSERT_TRUE(a) << a.error().to_string();
  expect_near(*a, {1, 3, 6, 10, 15});
  auto ex = run1("CumSum", {x, Tensor::scalar<int32_t>(0)}, {{"exclusive", int64_t{1}}});
  ASSERT_TRUE(ex);
  expect_near(*ex, {0, 1, 3, 6, 10});
  auto rev = run1("CumSum", {x, Tensor::scalar<int64_t>(0)}, {{"reverse", int64_t{1}}});
  ASSERT_TRUE(rev);
  expect_near(*rev, {15, 14, 12, 9, 5});
  auto both = run1("CumSum", {x, Tensor::scalar<int64_t>(0)},
                   {{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}});
  ASSERT_TRUE(both);
  expect_near(*both, {14, 12, 9, 5, 0});
  auto ax1 = run1("CumSum", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), ints({-1})});
  ASSERT_TRUE(ax1);
  expect_near(*ax1, {1, 3, 6, 4, 9, 15});
  auto ax0 = run1("CumSum", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), ints({0})});
  ASSERT_TRUE(ax0);
  expect_near(*ax0, {1, 2, 3, 5, 7, 9});
  const int64_t big = (int64_t{1} << 53) + 1;
  auto exact = run1("CumSum", {ints({big, 1}), ints({0})});
  ASSERT_TRUE(exact);
  EXPECT_EQ(values<int64_t>(*exact), (std::vector<int64_t>{big, big + 1}));
  EXPECT_TRUE(fails_with(run1("CumSum", {x, ints({1})}), "out of range"));
  EXPECT_TRUE(fails_with(run1("CumSum", {x, ints({0, 0})}), "1-element"));
}

}  // namespace
}  // namespace hone
