// MaxPool (values and Indices), AveragePool, LpPool, the global pools and
// MaxUnpool on hand-computed cases.
#include <gtest/gtest.h>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

std::vector<int64_t> ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

TEST(NnMaxPool, ValuesAndIndicesInBothStorageOrders) {
  Tensor x = iota({1, 2, 4, 4});
  auto r = run("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, 2);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_values((*r)[0], {1, 2, 2, 2}, {5, 7, 13, 15, 21, 23, 29, 31});
  EXPECT_EQ(ints((*r)[1]), (Ints{5, 7, 13, 15, 21, 23, 29, 31}));
  auto c = run(
      "MaxPool", {x},
      {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t{1}}}, 2);
  ASSERT_TRUE(c) << c.error().to_string();
  // Column-major within the plane: h + w * H, plus the plane offset.
  EXPECT_EQ(ints((*c)[1]), (Ints{5, 13, 7, 15, 21, 29, 23, 31}));
}

TEST(NnMaxPool, CeilModeDilationsAndPadding) {
  Tensor x = iota({1, 1, 4, 4});
  auto floor = run1("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  ASSERT_TRUE(floor);
  expect_values(*floor, {1, 1, 1, 1}, {10});
  auto ceil =
      run1("MaxPool", {x},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
  ASSERT_TRUE(ceil) << ceil.error().to_string();
  expect_values(*ceil, {1, 1, 2, 2}, {10, 11, 14, 15});
  auto dil = run1("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}});
  ASSERT_TRUE(dil) << dil.error().to_string();
  expect_values(*dil, {1, 1, 2, 2}, {10, 11, 14, 15});
  // Padding never wins a max, even against negative values.
  Tensor neg = f32({1, 1, 2, 2}, {-1, -2, -3, -4});
  auto pad = run1("MaxPool", {neg}, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  ASSERT_TRUE(pad);
  expect_values(*pad, {1, 1, 3, 3}, {-1, -1, -2, -1, -1, -2, -3, -3, -4});
  auto same = run1("MaxPool", {iota({1, 1, 1, 5})},
                   {{"kernel_shape", Ints{1, 2}},
                    {"strides", Ints{1, 2}},
                    {"auto_pad", std::string("SAME_LOWER")}});
  ASSERT_TRUE(same);
  expect_values(*same, {1, 1, 1, 3}, {0, 2, 4});
}

TEST(NnMaxPool, OneAndThreeDimensionsAndUint8) {
  auto one = run1("MaxPool", {f32({1, 1, 5}, {3, 1, 4, 1, 5})}, {{"kernel_shape", Ints{2}}});
  ASSERT_TRUE(one);
  expect_values(*one, {1, 1, 4}, {3, 4, 4, 5});
  auto three = run1("MaxPool", {iota({1, 1, 2, 2, 2})}, {{"kernel_shape", Ints{2, 2, 2}}});
  ASSERT_TRUE(three);
  expect_values(*three, {1, 1, 1, 1, 1}, {7});
  Tensor u = Tensor::from<uint8_t>({1, 1, 1, 3}, {200, 7, 255});
  auto q = run1("MaxPool", {u}, {{"kernel_shape", Ints{1, 2}}});
  ASSERT_TRUE(q) << q.error().to_string();
  ASSERT_EQ(q->dtype(), DType::kU8);
  EXPECT_EQ(q->data<uint8_t>()[0], 200);
  EXPECT_EQ(q->data<uint8_t>()[1], 255);
}

TEST(NnMaxPool, Errors) {
  Tensor x = iota({1, 1, 4, 4});
  EXPECT_TRUE(fails_with(run1("MaxPool", {x}), ErrorCode::kInvalidArgument, "kernel_shape"));
  EXPECT_TRUE(fails_with(run1("MaxPool", {x}, {{"kernel_shape", Ints{2}}}),
                         ErrorCode::kInvalidArgument, "kernel_shape"));
  EXPECT_TRUE(fails_with(run1("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1}}}),
                         ErrorCode::kInvalidArgument, "pads"));
  EXPECT_TRUE(fails_with(
      run1("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"auto_pad", std::string("SAME")}}),
      ErrorCode::kInvalidArgument, "auto_pad"));
  EXPECT_TRUE(fails_with(run1("MaxPool", {iota({4, 4})}, {{"kernel_shape", Ints{2, 2}}}),
                         ErrorCode::kInvalidArgument, "rank >= 3"));
}

TEST(NnAveragePool, CountIncludePadAndCeilMode) {
  Tensor x = iota({1, 1, 3, 3});
  const std::map<std::string, Attribute> base{{"kernel_shape", Ints{2, 2}},
                                              {"pads", Ints{1, 1, 1, 1}}};
  auto ex = run1("AveragePool", {x}, base);
  ASSERT_TRUE(ex) << ex.error().to_string();
  ASSERT_EQ(ex->shape(), (Ints{1, 1, 4, 4}));
  EXPECT_FLOAT_EQ(ex->data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(ex->data<float>()[1], 0.5f);  // (0 + 1) / 2
  EXPECT_FLOAT_EQ(ex->data<float>()[5], 2.0f);  // (0 + 1 + 3 + 4) / 4
  auto inc_attrs = base;
  inc_attrs["count_include_pad"] = int64_t{1};
  auto inc = run1("AveragePool", {x}, inc_attrs);
  ASSERT_TRUE(inc);
  EXPECT_FLOAT_EQ(inc->data<float>()[1], 0.25f);  // (0 + 1) / 4
  EXPECT_FLOAT_EQ(inc->data<float>()[5], 2.0f);
  // ceil_mode: the last window hangs past the input and averages 1 element.
  for (int64_t include : {0, 1}) {
    auto c = run1("AveragePool", {iota({1, 1, 1, 5})},
                  {{"kernel_shape", Ints{1, 2}},
                   {"strides", Ints{1, 2}},
                   {"ceil_mode", int64_t{1}},
                   {"count_include_pad", include}});
    ASSERT_TRUE(c) << c.error().to_string();
    expect_values(*c, {1, 1, 1, 3}, {0.5f, 2.5f, 4.0f});
  }
}

TEST(NnLpPool, PNormOverWindows) {
  auto y = run1("LpPool", {f32({1, 1, 1, 3}, {3, -4, 12})}, {{"kernel_shape", Ints{1, 2}}});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 1, 2}, {5, std::sqrt(160.0f)});
  auto p1 = run1("LpPool", {f32({1, 1, 1, 3}, {3, -4, 12})},
                 {{"kernel_shape", Ints{1, 3}}, {"p", int64_t{1}}});
  ASSERT_TRUE(p1);
  expect_values(*p1, {1, 1, 1, 1}, {19});
}

TEST(NnGlobalPools, ReduceAllSpatialDims) {
  Tensor x = iota({1, 2, 2, 2});
  auto avg = run1("GlobalAveragePool", {x});
  auto mx = run1("GlobalMaxPool", {x});
  auto lp = run1("GlobalLpPool", {f32({1, 1, 2}, {3, 4})});
  ASSERT_TRUE(avg && mx && lp);
  expect_values(*avg, {1, 2, 1, 1}, {1.5f, 5.5f});
  expect_values(*mx, {1, 2, 1, 1}, {3, 7});
  expect_values(*lp, {1, 1, 1}, {5});
  auto empty = run1("GlobalAveragePool", {iota({0, 3, 2, 2})});
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_EQ(empty->shape(), (Ints{0, 3, 1, 1}));
}

TEST(NnMaxUnpool, InvertsMaxPoolPlacement) {
  Tensor x = iota({1, 1, 4, 4});
  const std::map<std::string, Attribute> attrs{{"kernel_shape", Ints{2, 2}},
                                               {"strides", Ints{2, 2}}};
  auto pooled = run("MaxPool", {x}, attrs, 2);
  ASSERT_TRUE(pooled);
  auto up = run1("MaxUnpool", {(*pooled)[0], (*pooled)[1]}, attrs);
  ASSERT_TRUE(up) << up.error().to_string();
  std::vector<float> want(16, 0.0f);
  for (int i : {5, 7, 13, 15}) want[i] = static_cast<float>(i);
  expect_values(*up, {1, 1, 4, 4}, want);
  auto bigger = run1("MaxUnpool", {(*pooled)[0], (*pooled)[1], i64({4}, {1, 1, 5, 5})}, attrs);
  ASSERT_TRUE(bigger) << bigger.error().to_string();
  EXPECT_EQ(bigger->shape(), (Ints{1, 1, 5, 5}));
  EXPECT_EQ(bigger->data<float>()[15], 15.0f);
  auto bad = run1("MaxUnpool", {(*pooled)[0], i64({1, 1, 2, 2}, {0, 1, 2, 16})}, attrs);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidArgument, "index 16"));
}

}  // namespace
}  // namespace hone::nn_test
