// RoiAlign, GridSample and NonMaxSuppression on hand-computed cases.
#include <algorithm>
#include <random>
#include <tuple>

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

/// NonMaxSuppression as ONNX defines it, pair by pair (every kept box against
/// each candidate in score order, ties in the boxes' order): the oracle for
/// the kernel's sorted, gridded search. Corners [y1, x1, y2, x2] in either order.
Ints brute_force_nms(const std::vector<float>& boxes, const std::vector<float>& scores,
                     int64_t classes, int64_t nb, int64_t max_out, double iou_thr,
                     double score_thr) {
  auto at = [&](int64_t i, int k) { return static_cast<double>(boxes[i * 4 + k]); };
  auto iou = [&](int64_t a, int64_t b) {
    double ya1 = std::min(at(a, 0), at(a, 2)), ya2 = std::max(at(a, 0), at(a, 2));
    double xa1 = std::min(at(a, 1), at(a, 3)), xa2 = std::max(at(a, 1), at(a, 3));
    double yb1 = std::min(at(b, 0), at(b, 2)), yb2 = std::max(at(b, 0), at(b, 2));
    double xb1 = std::min(at(b, 1), at(b, 3)), xb2 = std::max(at(b, 1), at(b, 3));
    double ih = std::max(0.0, std::min(ya2, yb2) - std::max(ya1, yb1));
    double iw = std::max(0.0, std::min(xa2, xb2) - std::max(xa1, xb1));
    double uni = (ya2 - ya1) * (xa2 - xa1) + (yb2 - yb1) * (xb2 - xb1) - ih * iw;
    return uni > 0 ? ih * iw / uni : 0.0;
  };
  Ints out;
  for (int64_t c = 0; c < classes; ++c) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < nb; ++i)
      if (scores[c * nb + i] > score_thr) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t l, int64_t r) { return scores[c * nb + l] > scores[c * nb + r]; });
    std::vector<int64_t> kept;
    for (int64_t i : order) {
      if (static_cast<int64_t>(kept.size()) >= max_out) break;
      bool keep = true;
      for (int64_t k : kept) keep = keep && !(iou(i, k) > iou_thr);
      if (!keep) continue;
      kept.push_back(i);
      out.insert(out.end(), {0, c, i});
    }
  }
  return out;
}

// Hundreds of boxes (the kernel's grid search, not its linear scan): small
// boxes scattered over a wide field, clusters of near-duplicates, boxes far
// apart per class as torchvision's batched NMS offsets them, boxes of zero
// width, corners given in either order, tied scores; one class under a
// score threshold and one with a max count. The selection, in its order,
// must be the pairwise definition's.
TEST(NnNonMaxSuppression, ManyBoxesSelectAsThePairwiseDefinition) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> pos(0, 400), size(1, 40), unit(0, 1);
  const int64_t nb = 700, classes = 3;
  std::vector<float> boxes;
  for (int64_t i = 0; i < nb; ++i) {
    float y = pos(rng), x = pos(rng), h = size(rng), w = size(rng);
    if (i % 7 == 0) x += 3000.0f * static_cast<float>(i % 3);  // far apart, as per-class offsets
    if (i % 11 == 0) w = 0;                                    // zero width
    if (i >= 300 && i < 400) y = 50 + unit(rng), x = 60 + unit(rng);  // a cluster
    if (i % 5 == 0)
      boxes.insert(boxes.end(), {y + h, x + w, y, x});  // corners swapped
    else
      boxes.insert(boxes.end(), {y, x, y + h, x + w});
  }
  std::vector<float> scores;
  for (int64_t i = 0; i < classes * nb; ++i)
    scores.push_back(i % 13 == 0 ? 0.5f : std::round(unit(rng) * 200) / 200);  // ties
  for (const auto& [max_out, thr, score_thr] : std::vector<std::tuple<int64_t, float, float>>{
           {100000, 0.5f, -1.0f}, {100000, 0.0f, -1.0f}, {50, 0.3f, 0.25f}, {100000, 1.0f, 0.6f}}) {
    SCOPED_TRACE(::testing::Message() << max_out << " " << thr << " " << score_thr);
    std::vector<Tensor> in{f32({1, nb, 4}, boxes), f32({1, classes, nb}, scores),
                           i64({1}, {max_out}), f32({1}, {thr})};
    if (score_thr >= 0) in.push_back(f32({1}, {score_thr}));
    auto y = run1("NonMaxSuppression", in);
    ASSERT_TRUE(y) << y.error().to_string();
    const Ints want = brute_force_nms(boxes, scores, classes, nb, max_out, thr,
                                      score_thr >= 0 ? score_thr : -1e300);
    ASSERT_EQ(y->dim(0) * 3, static_cast<int64_t>(want.size()));
    EXPECT_EQ(std::vector<int64_t>(y->data<int64_t>(), y->data<int64_t>() + y->numel()), want);
    EXPECT_GT(y->dim(0), 30);  // enough kept for the grid to matter
  }
}

}  // namespace
}  // namespace hone::nn_test
