// The blas Conv kernels' paths against the reference: which of im2col,
// pointwise and depthwise each problem takes (odd sizes, strides, padding,
// dilations, groups), runtime weights, batched images and the single-image
// path that splits one SGEMM. Conv's attribute cases on their own (1-D,
// auto_pad) run from the op-case table (tests/unit/ops/op_cases_nn.cpp).
#include "blas_test_util.h"

namespace hone::blas {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;

struct ConvCase {
  std::vector<int64_t> x, w;
  GraphBuilder::ConvOptions o;
  bool bias = true;
  std::string kernel;  // expected kernel id
};

void run_case(const ConvCase& c, uint32_t seed, int64_t threads = 2) {
  std::mt19937 rng(seed);
  GraphBuilder b("conv");
  ValueId x = b.input("x", DType::kF32, Shape::of(c.x));
  ValueId bias = c.bias ? b.constant("b", uniform(rng, {c.w[0]})) : kNoValue;
  b.output(b.conv(x, b.constant("w", uniform(rng, c.w)), bias, c.o), "y");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(g, {uniform(rng, c.x)}, threads);
  EXPECT_NE(plan_text(*be).find(c.kernel), std::string::npos) << plan_text(*be);
}

TEST(BlasConv, Im2colOddSizesStridesPadding) {
  run_case({{2, 3, 9, 7},
            {5, 3, 3, 2},
            {.strides = {2, 1}, .pads = {1, 0, 2, 1}},
            true,
            "conv2d.f32.blas.im2col"},
           1);
}

TEST(BlasConv, Im2colDilationsNoBias) {
  run_case({{3, 4, 11, 10},
            {6, 4, 3, 3},
            {.strides = {1, 2}, .pads = {2, 2, 2, 2}, .dilations = {2, 3}},
            false,
            "conv2d.f32.blas.im2col"},
           2);
}

TEST(BlasConv, GroupedConv) {
  run_case({{2, 6, 8, 8},
            {9, 2, 3, 3},
            {.pads = {1, 1, 1, 1}, .group = 3},
            true,
            "conv2d.f32.blas.im2col"},
           3);
}

TEST(BlasConv, DepthwiseWithMultiplierStrideAndPadding) {
  run_case({{2, 4, 9, 9},
            {8, 1, 3, 3},
            {.strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 4},
            true,
            "conv2d.f32.blas.depthwise"},
           4);
  run_case({{1, 3, 7, 6},
            {3, 1, 5, 3},
            {.strides = {1, 3}, .pads = {2, 0, 1, 2}, .dilations = {1, 2}, .group = 3},
            false,
            "conv2d.f32.blas.depthwise"},
           5);
}

TEST(BlasConv, PointwiseReadsTheInputDirectly) {
  run_case({{3, 8, 5, 7}, {4, 8, 1, 1}, {}, true, "conv2d.f32.blas.pointwise"}, 6);
}

TEST(BlasConv, SmallPlanesBatchImagesIntoOneGemm) {
  // 8 images of 5x5: each thread takes 4 images as one SGEMM per group.
  run_case({{8, 6, 5, 5},
            {4, 3, 3, 3},
            {.pads = {1, 1, 1, 1}, .group = 2},
            true,
            "conv2d.f32.blas.im2col.batched +bias"},
           13, 2);
  // Uneven chunks (9 images over 2 and 3 threads), pointwise, no bias.
  for (int64_t t : {2, 3})
    run_case({{9, 8, 3, 3}, {5, 8, 1, 1}, {}, false, "conv2d.f32.blas.pointwise.batched]"}, 14, t);
}

TEST(BlasConv, SingleImageSplitsTheGemmAcrossThreads) {
  // One image, one group: the im2col and the SGEMM rows are split instead.
  run_case(
      {{1, 16, 20, 20}, {32, 16, 3, 3}, {.pads = {1, 1, 1, 1}}, true, "conv2d.f32.blas.im2col"}, 7,
      2);
}

TEST(BlasConv, RuntimeWeights) {
  std::mt19937 rng(10);
  GraphBuilder b("wx");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 6, 6});
  ValueId w = b.input("w", DType::kF32, Shape{4, 3, 3, 3});
  b.output(b.conv(x, w, kNoValue, {.pads = {1, 1, 1, 1}}), "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 6, 6}), uniform(rng, {4, 3, 3, 3})});
}

TEST(BlasConv, ThreadCountDoesNotChangeResults) {
  for (int64_t t : {1, 2, 3})
    run_case({{3, 5, 10, 9}, {7, 5, 3, 3}, {.pads = {1, 1, 1, 1}}, true, "im2col"}, 11, t);
}

}  // namespace
}  // namespace hone::blas
