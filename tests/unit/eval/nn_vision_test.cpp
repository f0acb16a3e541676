// RoiAlign, GridSample and NonMaxSuppression on hand-computed cases.
#include <gtest/gtest.h>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

/// A [1, 1, h, w] image whose value is its column index.
Tensor column_ramp(int64_t h, int64_t w) {
  Tensor x = Tensor::zeros(DType::kF32, {1, 1, h, w});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % w);
  return x;
}

TEST(NnRoiAlign, AverageSamplesBilinearPoints) {
  Tensor rois = f32({1, 4}, {0, 0, 4, 4});
  Tensor batch = i64({1}, {0});
  // half_pixel: the roi spans [-0.5, 3.5]; two samples per bin land on 0.5 and 2.5.
  auto y = run1("RoiAlign", {column_ramp(4, 4), rois, batch}, {{"sampling_ratio", int64_t{2}}}, 16);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 1, 1}, {1.5f});
  // output_half_pixel (opset 10 behaviour): the roi spans [0, 4]; samples at 1 and 3 → 2.
  auto old = run1("RoiAlign", {column_ramp(4, 4), rois, batch},
                  {{"sampling_ratio", int64_t{2}},
                   {"coordinate_transformation_mode", std::string("output_half_pixel")}},
                  16);
  ASSERT_TRUE(old) << old.error().to_string();
  EXPECT_NEAR(old->data<float>()[0], 2.0f, 1e-6);
  auto bins = run1(
      "RoiAlign", {column_ramp(4, 4), rois, batch},
      {{"output_height", int64_t{1}}, {"output_width", int64_t{2}}, {"sampling_ratio", int64_t{1}}},
      16);
  ASSERT_TRUE(bins);
  expect_values(*bins, {1, 1, 1, 2}, {0.5f, 2.5f});
}

TEST(NnRoiAlign, MaxModeTakesTheLargestWeightedCorner) {
  Tensor x = f32({1, 1, 4, 4}, std::vector<float>(16, 3.0f));
  auto y = run1("RoiAlign", {x, f32({1, 4}, {0, 0, 4, 4}), i64({1}, {0})},
                {{"sampling_ratio", int64_t{2}}, {"mode", std::string("max")}}, 16);
  ASSERT_TRUE(y) << y.error().to_string();
  // Every sample sits between four pixels with weight 1/4 each.
  expect_values(*y, {1, 1, 1, 1}, {0.75f});
  auto bad = run1("RoiAlign", {x, f32({1, 4}, {0, 0, 4, 4}), i64({1}, {1})}, {}, 16);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidArgument, "batch index 1"));
}

TEST(NnGridSample, IdentityGridWithAlignCorners) {
  Tensor x = iota({1, 1, 2, 3});
  Tensor grid = f32({1, 2, 3, 2}, {-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1});
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    auto y = run1("GridSample", {x, grid},
                  {{"align_corners", int64_t{1}}, {"mode", std::string(mode)}}, 16);
    ASSERT_TRUE(y) << y.error().to_string();
    expect_values(*y, {1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}, 1e-5);
  }
}

TEST(NnGridSample, CubicIsSeparableInAnyRank) {
  // Opset 20's N-cubic: a volume constant along depth samples like its plane
  // (border padding keeps the clamped depth taps equal), and a plane
  // constant along rows like its 1-D row.
  std::mt19937 rng(7);
  const Tensor plane = random({1, 1, 4, 5}, rng);
  Tensor volume = Tensor::zeros(DType::kF32, {1, 1, 3, 4, 5});
  for (int64_t d = 0; d < 3; ++d)
    for (int64_t i = 0; i < 20; ++i) volume.data<float>()[d * 20 + i] = plane.data<float>()[i];
  const Tensor grid2 = f32({1, 1, 3, 2}, {0.3f, -0.4f, -0.7f, 0.6f, 0.05f, 0.9f});
  const Tensor grid3 =
      f32({1, 1, 1, 3, 3}, {0.3f, -0.4f, 0.2f, -0.7f, 0.6f, -0.8f, 0.05f, 0.9f, 0.5f});
  const std::map<std::string, Attribute> cubic{{"mode", std::string("cubic")},
                                               {"padding_mode", std::string("border")}};
  auto y2 = run1("GridSample", {plane, grid2}, cubic, 20);
  auto y3 = run1("GridSample", {volume, grid3}, cubic, 20);
  ASSERT_TRUE(y2) << y2.error().to_string();
  ASSERT_TRUE(y3) << y3.error().to_string();
  expect_values(*y3, {1, 1, 1, 1, 3}, values(*y2), 1e-5);
  const Tensor row = random({1, 1, 6}, rng);
  Tensor rows = Tensor::zeros(DType::kF32, {1, 1, 2, 6});
  for (int64_t i = 0; i < 12; ++i) rows.data<float>()[i] = row.data<float>()[i % 6];
  auto y1 = run1("GridSample", {row, f32({1, 2, 1}, {-0.35f, 0.8f})}, cubic, 20);
  auto y12 = run1("GridSample", {rows, f32({1, 1, 2, 2}, {-0.35f, 0.5f, 0.8f, -0.5f})}, cubic, 20);
  ASSERT_TRUE(y1) << y1.error().to_string();
  ASSERT_TRUE(y12) << y12.error().to_string();
  expect_values(*y12, {1, 1, 1, 2}, values(*y1), 1e-5);
}

TEST(NnGridSample, InterpolationAndPaddingModes) {
  Tensor x = iota({1, 1, 2, 3});
  // (x=-0.5, y=-1): pixel column 0.5 on row 0 → 0.5. (x=-3, y=-1): far left.
  Tensor grid = f32({1, 1, 2, 2}, {-0.5f, -1, -3, -1});
  auto zeros = run1("GridSample", {x, grid}, {{"align_corners", int64_t{1}}}, 16);
  auto border = run1("GridSample", {x, grid},
                     {{"align_corners", int64_t{1}}, {"padding_mode", std::string("border")}}, 16);
  auto reflect =
      run1("GridSample", {x, grid},
           {{"align_corners", int64_t{1}}, {"padding_mode", std::string("reflection")}}, 16);
  ASSERT_TRUE(zeros && border && reflect);
  expect_values(*zeros, {1, 1, 1, 2}, {0.5f, 0});
  expect_values(*border, {1, 1, 1, 2}, {0.5f, 0});
  // x=-3 is column -2 with align_corners; reflecting about 0 gives column 2.
  expect_values(*reflect, {1, 1, 1, 2}, {0.5f, 2});
  // Without align_corners, -1 is the outer edge of pixel 0 (column -0.5):
  // zero padding blends in half a zero.
  auto edge = run1("GridSample", {x, f32({1, 1, 1, 2}, {-1, -1})}, {}, 16);
  ASSERT_TRUE(edge);
  EXPECT_NEAR(edge->data<float>()[0], 0.0f, 1e-6);
  auto edge1 = run1("GridSample", {iota({1, 1, 2, 3}, 1), f32({1, 1, 1, 2}, {-1, -1})}, {}, 16);
  ASSERT_TRUE(edge1);
  EXPECT_NEAR(edge1->data<float>()[0], 0.25f, 1e-6);  // a quarter of pixel (0,0) = 1
  auto bad = run1("GridSample", {x, f32({1, 1, 1, 3}, {0, 0, 0})}, {}, 16);
  EXPECT_TRUE(fails_with(bad, ErrorCode::kInvalidArgument, "grid"));
}

TEST(NnNonMaxSuppression, SuppressesByIouAndLimitsOutput) {
  Tensor boxes = f32({1, 6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
  Tensor scores = f32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  auto y =
      run1("NonMaxSuppression", {boxes, scores, i64({1}, {3}), f32({1}, {0.5f}), f32({1}, {0.0f})});
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->shape(), (Ints{3, 3}));
  EXPECT_EQ(std::vector<int64_t>(y->data<int64_t>(), y->data<int64_t>() + 9),
            (Ints{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  auto two = run1("NonMaxSuppression", {boxes, scores, i64({1}, {2}), f32({1}, {0.5f})});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->dim(0), 2);
  // Score threshold 0.92 keeps only box 3; no max count selects nothing.
  auto thr = run1("NonMaxSuppression",
                  {boxes, scores, i64({1}, {3}), f32({1}, {0.5f}), f32({1}, {0.92f})});
  ASSERT_TRUE(thr);
  EXPECT_EQ(thr->dim(0), 1);
  auto none = run1("NonMaxSuppression", {boxes, scores});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->shape(), (Ints{0, 3}));
}

TEST(NnNonMaxSuppression, CenterPointBoxes) {
  // Two 1x1 boxes centred 0.2 apart overlap with IoU 0.8/1.2 = 2/3.
  Tensor boxes = f32({1, 2, 4}, {0.5f, 0.5f, 1, 1, 0.7f, 0.5f, 1, 1});
  Tensor scores = f32({1, 1, 2}, {0.8f, 0.9f});
  auto y = run1("NonMaxSuppression", {boxes, scores, i64({1}, {5}), f32({1}, {0.6f})},
                {{"center_point_box", int64_t{1}}});
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->dim(0), 1);
  EXPECT_EQ(y->data<int64_t>()[2], 1);
  auto keep = run1("NonMaxSuppression", {boxes, scores, i64({1}, {5}), f32({1}, {0.7f})},
                   {{"center_point_box", int64_t{1}}});
  ASSERT_TRUE(keep);
  EXPECT_EQ(keep->dim(0), 2);
}

}  // namespace
}  // namespace hone::nn_test
