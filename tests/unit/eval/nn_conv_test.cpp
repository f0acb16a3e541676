// Conv, ConvTranspose, ConvInteger and QLinearConv on the reference: the ONNX
// documentation examples, randomized comparisons with naive loops, shapes
// from auto_pad / output_shape, and errors.
#include <gtest/gtest.h>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

const std::vector<float> kConvPadded = {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                        117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};

TEST(NnConv, OnnxExampleWithAndWithoutPadding) {
  Tensor x = iota({1, 1, 5, 5});
  Tensor w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto padded = run1("Conv", {x, w}, {{"pads", Ints{1, 1, 1, 1}}});
  ASSERT_TRUE(padded) << padded.error().to_string();
  expect_values(*padded, {1, 1, 5, 5}, kConvPadded);
  auto valid = run1("Conv", {x, w});
  ASSERT_TRUE(valid) << valid.error().to_string();
  expect_values(*valid, {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});
  auto strided = run1("Conv", {x, w}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 0}}});
  ASSERT_TRUE(strided) << strided.error().to_string();
  expect_values(*strided, {1, 1, 3, 2}, {21, 33, 99, 117, 111, 123});
}

TEST(NnConv, AutoPadSameMatchesExplicitPads) {
  Tensor x = iota({1, 1, 5, 5});
  Tensor w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto same = run1("Conv", {x, w}, {{"auto_pad", std::string("SAME_UPPER")}});
  ASSERT_TRUE(same) << same.error().to_string();
  expect_values(*same, {1, 1, 5, 5}, kConvPadded);
  // Stride 2 on 5 wide with a 2-wide kernel: output 3, total pad 1, which
  // SAME_UPPER puts at the end and SAME_LOWER at the start.
  Tensor x5 = iota({1, 1, 1, 5});
  Tensor w2 = f32({1, 1, 1, 2}, {1, 10});
  auto upper =
      run1("Conv", {x5, w2}, {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{1, 2}}});
  auto lower =
      run1("Conv", {x5, w2}, {{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{1, 2}}});
  ASSERT_TRUE(upper && lower);
  expect_values(*upper, {1, 1, 1, 3}, {10, 32, 4});
  expect_values(*lower, {1, 1, 1, 3}, {0, 21, 43});
  Tensor x4 = iota({1, 1, 1, 4});
  auto valid =
      run1("Conv", {x4, w2}, {{"auto_pad", std::string("VALID")}, {"pads", Ints{0, 5, 0, 5}}});
  ASSERT_TRUE(valid);
  expect_values(*valid, {1, 1, 1, 3}, {10, 21, 32});
}

struct ConvCase {
  Ints x_shape, w_shape, strides, pads, dil;
  int64_t group;
  bool bias;
};

TEST(NnConv, MatchesNaiveLoopsOnRandomConfigurations) {
  std::mt19937 rng(7);
  const std::vector<ConvCase> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
      {{1, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2, false},
      {{1, 6, 8, 8}, {6, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 6, true},  // depthwise
      {{2, 2, 5, 11}, {3, 2, 2, 4}, {3, 2}, {2, 3, 0, 1}, {2, 3}, 1, true},
      {{1, 1, 3, 3}, {2, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 1, false},  // kernel > input
  };
  for (const ConvCase& c : cases) {
    Tensor x = random(c.x_shape, rng), w = random(c.w_shape, rng);
    Tensor b = random({c.w_shape[0]}, rng);
    std::vector<Tensor> ins{x, w};
    if (c.bias) ins.push_back(b);
    auto y =
        run1("Conv", ins,
             {{"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dil}, {"group", c.group}});
    ASSERT_TRUE(y) << y.error().to_string();
    expect_near(*y,
                naive_conv2d(x, w, c.bias ? values(b) : std::vector<float>{}, c.strides, c.pads,
                             c.dil, c.group),
                1e-4);
  }
}

TEST(NnConv, OneAndThreeDimensionsAgreeWithTwoDimensions) {
  std::mt19937 rng(11);
  // 1-D conv = 2-D conv with a height-1 input and kernel.
  Tensor x1 = random({2, 3, 10}, rng), w1 = random({2, 3, 3}, rng);
  auto y1 =
      run1("Conv", {x1, w1}, {{"strides", Ints{2}}, {"pads", Ints{1, 2}}, {"dilations", Ints{2}}});
  ASSERT_TRUE(y1) << y1.error().to_string();
  Tensor x1r = *x1.reshaped({2, 3, 1, 10}), w1r = *w1.reshaped({2, 3, 1, 3});
  Tensor want1 = naive_conv2d(x1r, w1r, {}, {1, 2}, {0, 1, 0, 2}, {1, 2}, 1);
  expect_near(*y1, *want1.reshaped(y1->shape()), 1e-4);
  // 3-D conv with a depth-1 kernel over a depth-1 input = 2-D conv.
  Tensor x3 = random({1, 2, 1, 6, 5}, rng), w3 = random({3, 2, 1, 3, 2}, rng);
  auto y3 = run1("Conv", {x3, w3}, {{"pads", Ints{0, 1, 0, 0, 1, 1}}});
  ASSERT_TRUE(y3) << y3.error().to_string();
  Tensor want3 = naive_conv2d(*x3.reshaped({1, 2, 6, 5}), *w3.reshaped({3, 2, 3, 2}), {}, {1, 1},
                              {1, 0, 1, 1}, {1, 1}, 1);
  expect_near(*y3, *want3.reshaped(y3->shape()), 1e-4);
  // A true 3-D case: all-ones 2x2x2 kernel sums a 2x2x2 block.
  Tensor cube = iota({1, 1, 2, 2, 2});
  auto s = run1("Conv", {cube, f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f))});
  ASSERT_TRUE(s);
  expect_values(*s, {1, 1, 1, 1, 1}, {28});
}

TEST(NnConv, HalfPrecisionRoundsOnce) {
  Tensor x = Tensor::zeros(DType::kF16, {1, 1, 1, 3});
  Tensor w = Tensor::zeros(DType::kF16, {1, 1, 1, 3});
  for (int i = 0; i < 3; ++i) {
    x.data<Half>()[i] = Half::from_float(1.0f + static_cast<float>(i));
    w.data<Half>()[i] = Half::from_float(0.5f);
  }
  auto y = run1("Conv", {x, w});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->dtype(), DType::kF16);
  EXPECT_EQ(y->data<Half>()[0].to_float(), 3.0f);
}

TEST(NnConv, RejectsBadShapes) {
  Tensor x = iota({1, 4, 5, 5});
  EXPECT_TRUE(fails_with(run1("Conv", {x, iota({2, 3, 3, 3})}), ErrorCode::kInvalidArgument,
                         "input channels per group"));
  EXPECT_TRUE(fails_with(run1("Conv", {x, iota({3, 2, 3, 3})}, {{"group", int64_t{2}}}),
                         ErrorCode::kInvalidArgument, "group 2"));
  EXPECT_TRUE(fails_with(run1("Conv", {x, iota({2, 4, 3, 3}), iota({3})}),
                         ErrorCode::kInvalidArgument, "bias B"));
  EXPECT_TRUE(fails_with(run1("Conv", {x, iota({2, 4, 7, 7})}), ErrorCode::kInvalidArgument,
                         "larger than the padded input"));
  EXPECT_TRUE(fails_with(run1("Conv", {x, iota({2, 4, 3, 3})}, {{"strides", Ints{1}}}),
                         ErrorCode::kInvalidArgument, "strides"));
  EXPECT_TRUE(fails_with(run1("Conv", {x, iota({2, 4, 3, 3})}, {{"kernel_shape", Ints{2, 2}}}),
                         ErrorCode::kInvalidArgument, "kernel_shape"));
  EXPECT_TRUE(fails_with(run1("Conv", {iota({4, 5}), iota({2, 4, 3})}), ErrorCode::kInvalidArgument,
                         "rank >= 3"));
}

/// Naive 2-D transposed convolution (scatter form) with explicit begin pads
/// and a given output size.
Tensor naive_conv_transpose2d(const Tensor& x, const Tensor& w, Ints strides, Ints pads_begin,
                              Ints dil, Ints out_hw, int64_t group) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t mg = w.dim(1), kh = w.dim(2), kw = w.dim(3), m = mg * group, cg = c / group;
  Tensor y = Tensor::zeros(DType::kF32, {n, m, out_hw[0], out_hw[1]});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j)
          for (int64_t oc = 0; oc < mg; ++oc)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t yy = i * strides[0] + a * dil[0] - pads_begin[0];
                const int64_t xx = j * strides[1] + q * dil[1] - pads_begin[1];
                if (yy < 0 || yy >= out_hw[0] || xx < 0 || xx >= out_hw[1]) continue;
                const int64_t out_c = (ic / cg) * mg + oc;
                y.data<float>()[((b * m + out_c) * out_hw[0] + yy) * out_hw[1] + xx] +=
                    x.data<float>()[((b * c + ic) * h + i) * wd + j] *
                    w.data<float>()[((ic * mg + oc) * kh + a) * kw + q];
              }
  return y;
}

TEST(NnConvTranspose, OnnxStyleExamples) {
  // 1-D: [0,1,2] with a ones kernel of 3 spreads into 5 outputs.
  auto y = run1("ConvTranspose", {iota({1, 1, 3}), f32({1, 2, 3}, {1, 1, 1, 1, 1, 1})});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 2, 5}, {0, 1, 3, 3, 2, 0, 1, 3, 3, 2});
  // Stride 3 with output_padding 1 on the width.
  auto p = run1("ConvTranspose", {iota({1, 1, 1, 2}), f32({1, 1, 1, 2}, {1, 2})},
                {{"strides", Ints{1, 3}}, {"output_padding", Ints{0, 1}}});
  ASSERT_TRUE(p) << p.error().to_string();
  expect_values(*p, {1, 1, 1, 6}, {0, 0, 0, 1, 2, 0});
  // An input smaller than the kernel is fine for the transposed direction.
  auto small = run1("ConvTranspose",
                    {f32({1, 1, 1, 1}, {2}), f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f))});
  ASSERT_TRUE(small) << small.error().to_string();
  expect_values(*small, {1, 1, 3, 3}, std::vector<float>(9, 2.0f));
}

TEST(NnConvTranspose, MatchesNaiveLoops) {
  std::mt19937 rng(3);
  Tensor x = random({2, 4, 3, 4}, rng), w = random({4, 3, 3, 2}, rng), b = random({6}, rng);
  auto y = run1("ConvTranspose", {x, w, b},
                {{"strides", Ints{2, 3}},
                 {"pads", Ints{1, 0, 0, 1}},
                 {"dilations", Ints{1, 2}},
                 {"group", int64_t{2}}});
  ASSERT_TRUE(y) << y.error().to_string();
  // out = s*(in-1) + dilated kernel - pads
  const Ints out_hw{2 * 2 + 3 - 1, 3 * 3 + 3 - 1};
  Tensor want = naive_conv_transpose2d(x, w, {2, 3}, {1, 0}, {1, 2}, out_hw, 2);
  for (int64_t i = 0; i < want.numel(); ++i)
    want.data<float>()[i] += b.data<float>()[(i / (out_hw[0] * out_hw[1])) % 6];
  expect_near(*y, want, 1e-4);
}

TEST(NnConvTranspose, OutputShapeAndSameAutoPadComputePads) {
  std::mt19937 rng(5);
  Tensor x = random({1, 1, 3, 3}, rng), w = random({1, 2, 3, 3}, rng);
  // Full output is 2*(3-1)+3 = 7; asking for 6 pads 1 (at the start unless SAME_UPPER).
  auto y = run1("ConvTranspose", {x, w}, {{"strides", Ints{2, 2}}, {"output_shape", Ints{6, 6}}});
  ASSERT_TRUE(y) << y.error().to_string();
  expect_near(*y, naive_conv_transpose2d(x, w, {2, 2}, {1, 1}, {1, 1}, {6, 6}, 1), 1e-5);
  auto upper = run1("ConvTranspose", {x, w},
                    {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
  ASSERT_TRUE(upper) << upper.error().to_string();
  expect_near(*upper, naive_conv_transpose2d(x, w, {2, 2}, {0, 0}, {1, 1}, {6, 6}, 1), 1e-5);
  EXPECT_TRUE(fails_with(run1("ConvTranspose", {x, w}, {{"pads", Ints{4, 4, 4, 4}}}),
                         ErrorCode::kInvalidArgument, "output spatial dim"));
}

TEST(NnConvInteger, OnnxExampleWithZeroPoints) {
  Tensor x = Tensor::from<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  Tensor w = Tensor::from<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  auto y = run1("ConvInteger", {x, w, Tensor::scalar<uint8_t>(1)});
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->dtype(), DType::kI32);
  EXPECT_EQ(std::vector<int32_t>(y->data<int32_t>(), y->data<int32_t>() + 4),
            (std::vector<int32_t>{12, 16, 24, 28}));
  // Padding reads as the zero point, i.e. contributes nothing.
  auto p = run1("ConvInteger", {x, w, Tensor::scalar<uint8_t>(1)}, {{"pads", Ints{1, 1, 1, 1}}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->data<int32_t>()[0], 1);  // only x[0,0]-1
  // Per-channel weight zero point with int8 weights.
  Tensor wi = Tensor::from<int8_t>({2, 1, 1, 1}, {3, -3});
  auto pc = run1("ConvInteger", {x, wi, Tensor(), Tensor::from<int8_t>({2}, {1, -1})});
  ASSERT_TRUE(pc) << pc.error().to_string();
  EXPECT_EQ(pc->data<int32_t>()[0], 4);        // 2 * (3-1)
  EXPECT_EQ(pc->data<int32_t>()[9 + 8], -20);  // 10 * (-3+1)
}

TEST(NnQLinearConv, RequantizesWithRoundingAndSaturation) {
  Tensor x = Tensor::from<uint8_t>({1, 1, 1, 3}, {10, 20, 250});
  Tensor w = Tensor::from<uint8_t>({1, 1, 1, 1}, {3});
  auto y = run1("QLinearConv",
                {x, Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(0), w, Tensor::scalar(1.0f),
                 Tensor::scalar<uint8_t>(1), Tensor::scalar(1.0f), Tensor::scalar<uint8_t>(5)});
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->dtype(), DType::kU8);
  // real = (x * (3-1)) * 0.5 = x; + 5; 250 + 5 saturates to 255.
  EXPECT_EQ(std::vector<uint8_t>(y->data<uint8_t>(), y->data<uint8_t>() + 3),
            (std::vector<uint8_t>{15, 25, 255}));
  // Bias (int32) is added before the scale; 2.5 rounds to even.
  Tensor xs = Tensor::from<uint8_t>({1, 1, 1, 1}, {1});
  auto b =
      run1("QLinearConv", {xs, Tensor::scalar(0.5f), Tensor::scalar<uint8_t>(0), w,
                           Tensor::scalar(1.0f), Tensor::scalar<uint8_t>(0), Tensor::scalar(1.0f),
                           Tensor::scalar<uint8_t>(0), Tensor::from<int32_t>({1}, {2})});
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ(b->data<uint8_t>()[0], 2);  // (3 + 2) * 0.5 = 2.5 → 2
}

}  // namespace
}  // namespace hone::nn_test
