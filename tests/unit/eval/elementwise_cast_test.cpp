// Cast, CastLike, Clip, Identity, Dropout and the linear quantization kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "elementwise_test_util.h"

namespace hone::eval {
namespace {

using namespace ew_test;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ONNX TensorProto element types.
constexpr int64_t kOnnxFloat = 1, kOnnxUint8 = 2, kOnnxInt8 = 3, kOnnxInt32 = 6, kOnnxInt64 = 7,
                  kOnnxString = 8, kOnnxBool = 9, kOnnxFloat16 = 10, kOnnxDouble = 11,
                  kOnnxBFloat16 = 16;

Result<Tensor> cast(const Tensor& x, int64_t to) {
  return run1("Cast", {x}, {{"to", to}});
}

TEST(ElementwiseCast, FloatToIntegerTruncatesTowardZero) {
  auto r = cast(f32v({1.9f, -1.9f, 0.5f, -0.5f, 3}), kOnnxInt32);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->dtype(), DType::kI32);
  EXPECT_EQ(vals<int32_t>(*r), (std::vector<int32_t>{1, -1, 0, 0, 3}));
  // NaN and out-of-range values do not crash (ONNX leaves them undefined).
  auto odd = cast(f32v({kNaN, 1e20f, -1e20f, 300, -5}), kOnnxUint8);
  ASSERT_TRUE(odd);
  EXPECT_EQ(vals<uint8_t>(*odd), (std::vector<uint8_t>{0, 255, 0, 255, 0}));
}

TEST(ElementwiseCast, IntegerAndBoolConversions) {
  const int64_t big = (int64_t{1} << 60) + 7;
  auto wide = cast(t<int64_t>({2}, {big, -1}), kOnnxInt64);
  ASSERT_TRUE(wide);
  EXPECT_EQ(vals<int64_t>(*wide)[0], big);
  auto narrow = cast(t<int64_t>({2}, {257, -1}), kOnnxUint8);
  ASSERT_TRUE(narrow);
  EXPECT_EQ(vals<uint8_t>(*narrow), (std::vector<uint8_t>{1, 255}));  // wraps
  auto to_bool = cast(f32v({0, -0.0f, 2, kNaN}), kOnnxBool);
  ASSERT_TRUE(to_bool);
  EXPECT_EQ(vals<bool>(*to_bool), (std::vector<bool>{false, false, true, true}));
  auto from_bool = cast(t<bool>({2}, {true, false}), kOnnxFloat);
  ASSERT_TRUE(from_bool);
  EXPECT_EQ(vals<float>(*from_bool), (std::vector<float>{1, 0}));
  auto i8 = cast(t<int32_t>({2}, {5, -3}), kOnnxDouble);
  ASSERT_TRUE(i8);
  EXPECT_EQ(vals<double>(*i8), (std::vector<double>{5, -3}));
}

TEST(ElementwiseCast, HalfAndBFloat16RoundOnceFromDouble) {
  // 1 + 2^-11 + 2^-40 is just above the half-way point between the halves 1
  // and 1 + 2^-10: correct rounding gives 1 + 2^-10. Going through float
  // first would drop the 2^-40 and round the tie to even (1.0).
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  auto h = cast(t<double>({1}, {v}), kOnnxFloat16);
  ASSERT_TRUE(h);
  EXPECT_EQ(vals<Half>(*h)[0].to_float(), 1.0f + std::ldexp(1.0f, -10));
  const double w = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  auto b = cast(t<double>({1}, {w}), kOnnxBFloat16);
  ASSERT_TRUE(b);
  EXPECT_EQ(vals<BFloat16>(*b)[0].to_float(), 1.0f + std::ldexp(1.0f, -7));
  auto back = cast(t<Half>({2}, {Half::from_float(0.5f), Half::from_float(-kInf)}), kOnnxFloat);
  ASSERT_TRUE(back);
  EXPECT_EQ(vals<float>(*back), (std::vector<float>{0.5f, -kInf}));
}

TEST(ElementwiseCast, UnsupportedTargetsAndMissingTo) {
  auto s = cast(f32v({1}), kOnnxString);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kUnsupported);
  auto none = run1("Cast", {f32v({1})});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("'to'"), std::string::npos);
}

TEST(ElementwiseCast, CastLikeTakesTheSecondInputsType) {
  auto r = run1("CastLike", {f32v({2.7f, -1}), t<int8_t>({1}, {0})});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dtype(), DType::kI8);
  EXPECT_EQ(vals<int8_t>(*r), (std::vector<int8_t>{2, -1}));
}

TEST(ElementwiseClip, InputBoundsOpset11) {
  const Tensor x = f32v({-3, -1, 0, 2, 5, kNaN});
  auto both = run1("Clip", {x, Tensor::scalar(-1.5f), Tensor::scalar(2.5f)});
  ASSERT_TRUE(both) << both.error().to_string();
  auto v = vals<float>(*both);
  EXPECT_EQ(std::vector<float>(v.begin(), v.end() - 1),
            (std::vector<float>{-1.5f, -1, 0, 2, 2.5f}));
  EXPECT_TRUE(std::isnan(v.back()));
  auto max_only = run1("Clip", {f32v({-3, 5}), Tensor(), Tensor::scalar(1.0f)});
  ASSERT_TRUE(max_only);
  EXPECT_EQ(vals<float>(*max_only), (std::vector<float>{-3, 1}));
  auto none = run1("Clip", {f32v({-3, 5})});
  ASSERT_TRUE(none);
  EXPECT_EQ(vals<float>(*none), (std::vector<float>{-3, 5}));
  // min > max: everything becomes max.
  auto swapped = run1("Clip", {f32v({-3, 0, 5}), Tensor::scalar(2.0f), Tensor::scalar(1.0f)});
  ASSERT_TRUE(swapped);
  EXPECT_EQ(vals<float>(*swapped), (std::vector<float>{1, 1, 1}));
  auto bad = run1("Clip", {f32v({1}), f32v({0, 1})});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("scalar"), std::string::npos);
}

TEST(ElementwiseClip, IntegersAndAttributeForm) {
  auto i = run1("Clip", {t<int8_t>({4}, {-128, -5, 5, 127}), Tensor(), t<int8_t>({}, {6})});
  ASSERT_TRUE(i) << i.error().to_string();
  EXPECT_EQ(vals<int8_t>(*i), (std::vector<int8_t>{-128, -5, 5, 6}));
  auto old = run1("Clip", {f32v({-3, 0, 5})}, {{"min", -1.0f}, {"max", 1.0f}}, 6);
  ASSERT_TRUE(old) << old.error().to_string();
  EXPECT_EQ(vals<float>(*old), (std::vector<float>{-1, 0, 1}));
  auto old_default = run1("Clip", {f32v({-3e38f, 3e38f})}, {}, 6);
  ASSERT_TRUE(old_default);
  EXPECT_EQ(vals<float>(*old_default), (std::vector<float>{-3e38f, 3e38f}));
}

TEST(ElementwisePassThrough, IdentityAndDropout) {
  auto id = run1("Identity", {t<int64_t>({2}, {4, 5})});
  ASSERT_TRUE(id);
  EXPECT_EQ(vals<int64_t>(*id), (std::vector<int64_t>{4, 5}));
  auto d = run("Dropout", {f32v({1, 2, 3})}, {}, 2);
  ASSERT_TRUE(d) << d.error().to_string();
  EXPECT_EQ(vals<float>((*d)[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ((*d)[1].dtype(), DType::kBool);
  EXPECT_EQ(vals<bool>((*d)[1]), (std::vector<bool>{true, true, true}));
  // Training with a zero ratio is still the identity.
  auto z = run("Dropout", {f32v({1}), Tensor::scalar(0.0f), t<bool>({}, {true})}, {}, 2);
  ASSERT_TRUE(z) << z.error().to_string();
  EXPECT_EQ(vals<float>((*z)[0]), (std::vector<float>{1}));
  auto train = run1("Dropout", {f32v({1}), Tensor::scalar(0.5f), t<bool>({}, {true})});
  ASSERT_FALSE(train);
  EXPECT_EQ(train.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(train.error().message().find("training-mode Dropout is random"), std::string::npos);
  // Opset 7-9: the mask has the input's type.
  auto old = run("Dropout", {f32v({1, 2})}, {{"ratio", 0.3f}}, 2, 7);
  ASSERT_TRUE(old);
  EXPECT_EQ((*old)[1].dtype(), DType::kF32);
  EXPECT_EQ(vals<float>((*old)[1]), (std::vector<float>{1, 1}));
}

TEST(ElementwiseQuantize, PerTensorRoundsHalfToEvenAndSaturates) {
  const Tensor x = f32v({0, 2, 3, 1000, -254, -1000, 5, 7});
  auto u8 = run1("QuantizeLinear", {x, Tensor::scalar(2.0f), t<uint8_t>({}, {128})});
  ASSERT_TRUE(u8) << u8.error().to_string();
  EXPECT_EQ(u8->dtype(), DType::kU8);
  // 3/2=1.5→2, 5/2=2.5→2, 7/2=3.5→4 (half to even).
  EXPECT_EQ(vals<uint8_t>(*u8), (std::vector<uint8_t>{128, 129, 130, 255, 1, 0, 130, 132}));
  auto i8 =
      run1("QuantizeLinear", {f32v({-300, -1, 300}), Tensor::scalar(1.0f), t<int8_t>({}, {-1})});
  ASSERT_TRUE(i8);
  EXPECT_EQ(vals<int8_t>(*i8), (std::vector<int8_t>{-128, -2, 127}));
  auto nozp = run1("QuantizeLinear", {f32v({-1, 10}), Tensor::scalar(0.5f)});
  ASSERT_TRUE(nozp);
  EXPECT_EQ(nozp->dtype(), DType::kU8);
  EXPECT_EQ(vals<uint8_t>(*nozp), (std::vector<uint8_t>{0, 20}));
}

TEST(ElementwiseQuantize, PerAxis) {
  // x [1,3,2], scale and zero point per channel (axis 1).
  const Tensor x = f32({1, 3, 2}, {-162, 10, -25, -1, 7, 10});
  const Tensor scale = f32v({2, 4, 3});
  const Tensor zp = t<uint8_t>({3}, {84, 24, 196});
  auto q = run1("QuantizeLinear", {x, scale, zp});
  ASSERT_TRUE(q) << q.error().to_string();
  EXPECT_EQ(vals<uint8_t>(*q), (std::vector<uint8_t>{3, 89, 18, 24, 198, 199}));
  auto dq = run1("DequantizeLinear", {*q, scale, zp});
  ASSERT_TRUE(dq);
  EXPECT_EQ(vals<float>(*dq), (std::vector<float>{-162, 10, -24, 0, 6, 9}));
  auto neg_axis = run1("QuantizeLinear", {x, scale, zp}, {{"axis", int64_t{-2}}});
  ASSERT_TRUE(neg_axis);
  EXPECT_EQ(vals<uint8_t>(*neg_axis), vals<uint8_t>(*q));
  auto mismatch = run1("QuantizeLinear", {x, f32v({1, 2}), t<uint8_t>({2}, {0, 0})});
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().message().find("per-axis"), std::string::npos);
}

TEST(ElementwiseQuantize, Dequantize) {
  auto u = run1("DequantizeLinear",
                {t<uint8_t>({4}, {0, 3, 128, 255}), Tensor::scalar(2.0f), t<uint8_t>({}, {128})});
  ASSERT_TRUE(u) << u.error().to_string();
  EXPECT_EQ(vals<float>(*u), (std::vector<float>{-256, -250, 0, 254}));
  auto i32 = run1("DequantizeLinear", {t<int32_t>({2}, {-30, 1000}), Tensor::scalar(0.5f)});
  ASSERT_TRUE(i32);
  EXPECT_EQ(vals<float>(*i32), (std::vector<float>{-15, 500}));
  auto bad =
      run1("DequantizeLinear", {t<uint8_t>({1}, {1}), Tensor::scalar(1.0f), t<int8_t>({}, {0})});
  ASSERT_FALSE(bad);
}

TEST(ElementwiseQuantize, DynamicQuantizeLinear) {
  auto r = run("DynamicQuantizeLinear", {f32v({0, 2, -3, -2.5f, 1.34f, 0.5f})}, {}, 3);
  ASSERT_TRUE(r) << r.error().to_string();
  const float scale = 5.0f / 255.0f;
  EXPECT_FLOAT_EQ(vals<float>((*r)[1])[0], scale);
  EXPECT_EQ(vals<uint8_t>((*r)[2])[0], 153);
  // round(x/scale) + 153 with the quotient in float32: -2.5/scale is
  // -127.4999955 (→ -127), 0.5/scale is 25.4999991, which float32 rounds to
  // the tie 25.5 (→ 26): the spec's expected output.
  EXPECT_EQ(vals<uint8_t>((*r)[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  // All-positive input: the range still includes 0, so the zero point is 0.
  auto pos = run("DynamicQuantizeLinear", {f32v({1, 2.55f})}, {}, 3);
  ASSERT_TRUE(pos);
  EXPECT_EQ(vals<uint8_t>((*pos)[2])[0], 0);
  EXPECT_EQ(vals<uint8_t>((*pos)[0]), (std::vector<uint8_t>{100, 255}));
  auto zeros = run("DynamicQuantizeLinear", {f32v({0, 0})}, {}, 3);
  ASSERT_TRUE(zeros);
  EXPECT_EQ(vals<float>((*zeros)[1])[0], 0.0f);
  EXPECT_EQ(vals<uint8_t>((*zeros)[0]), (std::vector<uint8_t>{0, 0}));
}

}  // namespace
}  // namespace hone::eval
