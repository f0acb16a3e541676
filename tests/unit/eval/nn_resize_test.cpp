// Resize and Upsample: nearest modes, linear and cubic filters, coordinate
// transformations, crop-and-resize extrapolation, integer inputs, errors.
#include <gtest/gtest.h>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

/// Resize (opset 13 input order) with scales or sizes.
Result<Tensor> resize(const Tensor& x, std::vector<float> scales, Ints sizes,
                      std::map<std::string, Attribute> attrs, int64_t opset = 13,
                      Tensor roi = Tensor()) {
  std::vector<Tensor> ins{x, roi, Tensor(), Tensor()};
  if (!scales.empty()) ins[2] = f32({static_cast<int64_t>(scales.size())}, scales);
  if (!sizes.empty()) ins[3] = i64({static_cast<int64_t>(sizes.size())}, sizes);
  return run1("Resize", ins, std::move(attrs), opset);
}

TEST(NnResize, NearestUpsampleHalfPixel) {
  auto y =
      resize(f32({1, 1, 2, 2}, {1, 2, 3, 4}), {1, 1, 2, 2}, {}, {{"mode", std::string("nearest")}});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(NnResize, NearestModesAndTransforms) {
  Tensor x = iota({8});
  auto down = resize(x, {}, {4},
                     {{"coordinate_transformation_mode", std::string("asymmetric")},
                      {"nearest_mode", std::string("floor")}});
  ASSERT_TRUE(down) << down.error().to_string();
  expect_values(*down, {4}, {0, 2, 4, 6});
  // half_pixel at scale 1/3 on 3 outputs: x = 3o + 1 → centres 1, 4, 7.
  auto third = resize(iota({9}), {}, {3}, {});
  ASSERT_TRUE(third);
  expect_values(*third, {3}, {1, 4, 7});
  // align_corners maps the ends onto the ends; round_prefer_ceil breaks ties up.
  auto ac = resize(iota({3}), {}, {5},
                   {{"coordinate_transformation_mode", std::string("align_corners")},
                    {"nearest_mode", std::string("round_prefer_ceil")}});
  ASSERT_TRUE(ac);
  expect_values(*ac, {5}, {0, 1, 1, 2, 2});
  auto acf = resize(iota({3}), {}, {5},
                    {{"coordinate_transformation_mode", std::string("align_corners")}});
  ASSERT_TRUE(acf);
  expect_values(*acf, {5}, {0, 0, 1, 1, 2});
}

TEST(NnResize, LinearHalfPixelAndAlignCorners) {
  auto y = resize(f32({2}, {1, 2}), {2}, {}, {{"mode", std::string("linear")}});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {4}, {1, 1.25f, 1.75f, 2});
  auto ac = resize(f32({3}, {1, 2, 3}), {}, {5},
                   {{"mode", std::string("linear")},
                    {"coordinate_transformation_mode", std::string("align_corners")}});
  ASSERT_TRUE(ac);
  expect_values(*ac, {5}, {1, 1.5f, 2, 2.5f, 3});
  // 2-D bilinear is separable: the centre of a 2x2 → 3x3 align_corners grid is the mean.
  auto bi = resize(f32({2, 2}, {1, 2, 3, 4}), {}, {3, 3},
                   {{"mode", std::string("linear")},
                    {"coordinate_transformation_mode", std::string("align_corners")}});
  ASSERT_TRUE(bi);
  expect_values(*bi, {3, 3}, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

TEST(NnResize, CubicInterpolatesAndKeepsConstants) {
  auto ac = resize(f32({4}, {1, 2, 4, 8}), {}, {7},
                   {{"mode", std::string("cubic")},
                    {"coordinate_transformation_mode", std::string("align_corners")}});
  ASSERT_TRUE(ac) << ac.error().to_string();
  // Integer positions reproduce the input; at 0.5 the A=-0.75 weights are
  // (-0.09375, 0.59375, 0.59375, -0.09375) over the edge-clamped 1, 1, 2, 4.
  expect_values(*ac, {7}, {1, 1.3125f, 2, ac->data<float>()[3], 4, ac->data<float>()[5], 8});
  auto flat = resize(
      f32({4}, {5, 5, 5, 5}), {2.5f}, {},
      {{"mode", std::string("cubic")}, {"exclude_outside", int64_t{1}}, {"cubic_coeff_a", -0.5f}});
  ASSERT_TRUE(flat);
  for (float v : values(*flat)) EXPECT_NEAR(v, 5.0f, 1e-5);
  // Antialiased downsampling (opset 18) averages more input; constants stay constant.
  auto aa = resize(f32({6}, {2, 2, 2, 2, 2, 2}), {0.5f}, {},
                   {{"mode", std::string("linear")}, {"antialias", int64_t{1}}}, 18);
  ASSERT_TRUE(aa) << aa.error().to_string();
  expect_values(*aa, {3}, {2, 2, 2});
}

TEST(NnResize, CropAndResizeExtrapolates) {
  Tensor roi = f32({2}, {0, 2});  // start 0, end 2 (normalized): x = 2o for 3 outputs on 3 inputs
  auto y = resize(f32({3}, {1, 2, 3}), {}, {3},
                  {{"mode", std::string("linear")},
                   {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                   {"extrapolation_value", 10.0f}},
                  13, roi);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {3}, {1, 3, 10});
}

TEST(NnResize, IntegerNearestIsExactAndAxesSelectDims) {
  Tensor x = Tensor::from<int64_t>({2}, {(int64_t{1} << 60) + 1, -7});
  auto y = run1("Resize", {x, Tensor(), f32({1}, {2})}, {});
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->dtype(), DType::kI64);
  EXPECT_EQ(y->data<int64_t>()[1], (int64_t{1} << 60) + 1);
  EXPECT_EQ(y->data<int64_t>()[3], -7);
  auto ax =
      run1("Resize", {iota({2, 2}), Tensor(), Tensor(), i64({1}, {4})}, {{"axes", Ints{1}}}, 18);
  ASSERT_TRUE(ax) << ax.error().to_string();
  expect_values(*ax, {2, 4}, {0, 0, 1, 1, 2, 2, 3, 3});
  auto keep = run1("Resize", {iota({2, 4}), Tensor(), Tensor(), i64({2}, {4, 4})},
                   {{"keep_aspect_ratio_policy", std::string("not_larger")}}, 18);
  ASSERT_TRUE(keep) << keep.error().to_string();
  EXPECT_EQ(keep->shape(), (Ints{2, 4}));
}

TEST(NnResize, OpsetTenAndUpsample) {
  auto r10 = run1("Resize", {f32({1, 2}, {1, 2}), f32({2}, {1, 3})}, {}, 10);
  ASSERT_TRUE(r10) << r10.error().to_string();
  expect_values(*r10, {1, 6}, {1, 1, 1, 2, 2, 2});
  auto up = run1("Upsample", {f32({1, 2}, {1, 2}), f32({2}, {1, 3})}, {}, 9);
  ASSERT_TRUE(up) << up.error().to_string();
  expect_values(*up, {1, 6}, {1, 1, 1, 2, 2, 2});
  auto up7 = run1("Upsample", {f32({2}, {1, 3})},
                  {{"mode", std::string("linear")}, {"scales", std::vector<float>{2}}}, 7);
  ASSERT_TRUE(up7) << up7.error().to_string();
  expect_values(*up7, {4}, {1, 2, 3, 3});
}

TEST(NnResize, Errors) {
  Tensor x = iota({2, 2});
  EXPECT_TRUE(
      fails_with(resize(x, {1, 2}, {2, 4}, {}), ErrorCode::kInvalidArgument, "exactly one"));
  EXPECT_TRUE(fails_with(resize(x, {}, {}, {}), ErrorCode::kInvalidArgument, "exactly one"));
  EXPECT_TRUE(fails_with(resize(x, {2}, {}, {}), ErrorCode::kInvalidArgument, "expected 2"));
  EXPECT_TRUE(
      fails_with(resize(x, {1, -2}, {}, {}), ErrorCode::kInvalidArgument, "must be positive"));
  EXPECT_TRUE(fails_with(resize(x, {1, 2}, {}, {{"mode", std::string("area")}}),
                         ErrorCode::kInvalidArgument, "area"));
  EXPECT_TRUE(
      fails_with(resize(x, {1, 2}, {}, {{"coordinate_transformation_mode", std::string("bogus")}}),
                 ErrorCode::kInvalidArgument, "bogus"));
}

}  // namespace
}  // namespace hone::nn_test
