// Unary math and activation kernels against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "elementwise_test_util.h"

namespace hone::eval {
namespace {

using namespace ew_test;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> run_f(const std::string& op, std::vector<float> x,
                         std::map<std::string, Attribute> attrs = {}) {
  auto r = run1(op, {f32v(std::move(x))}, std::move(attrs));
  EXPECT_TRUE(r) << op << ": " << r.error().to_string();
  return r ? vals<float>(*r) : std::vector<float>{};
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want,
                     double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(ElementwiseUnary, MathFunctions) {
  expect_near_all(run_f("Exp", {0, 1, -1}), {1, std::exp(1.0), std::exp(-1.0)});
  expect_near_all(run_f("Log", {1, std::exp(2.0f)}), {0, 2}, 1e-6);
  expect_near_all(run_f("Sqrt", {4, 2, 0}), {2, std::sqrt(2.0), 0});
  expect_near_all(run_f("Reciprocal", {4, -0.5f}), {0.25, -2});
  expect_near_all(run_f("Sin", {0, 1.5707963f}), {0, 1});
  expect_near_all(run_f("Cos", {0}), {1});
  expect_near_all(run_f("Tan", {0.7853982f}), {1});
  expect_near_all(run_f("Asin", {1}), {M_PI / 2});
  expect_near_all(run_f("Acos", {1, -1}), {0, M_PI});
  expect_near_all(run_f("Atan", {1}), {M_PI / 4});
  expect_near_all(run_f("Sinh", {1}), {std::sinh(1.0)});
  expect_near_all(run_f("Cosh", {1}), {std::cosh(1.0)});
  expect_near_all(run_f("Asinh", {1}), {std::asinh(1.0)});
  expect_near_all(run_f("Acosh", {2}), {std::acosh(2.0)});
  expect_near_all(run_f("Atanh", {0.5f}), {std::atanh(0.5)});
  expect_near_all(run_f("Erf", {0, 1, -1}), {0, 0.8427007929, -0.8427007929});
  // Out of domain gives NaN, not an error.
  EXPECT_TRUE(std::isnan(run_f("Sqrt", {-1})[0]));
  EXPECT_EQ(run_f("Log", {0})[0], -kInf);
}

TEST(ElementwiseUnary, FloorCeilRoundHalfToEven) {
  EXPECT_EQ(run_f("Floor", {-1.5f, 1.5f, 2}), (std::vector<float>{-2, 1, 2}));
  EXPECT_EQ(run_f("Ceil", {-1.5f, 1.2f, 2}), (std::vector<float>{-1, 2, 2}));
  EXPECT_EQ(run_f("Round", {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.4f, 0.6f, 2.3f}),
            (std::vector<float>{0, 2, 2, -0, -2, -2, 0, 1, 2}));
}

TEST(ElementwiseUnary, AbsNegSignOnFloatsAndIntegers) {
  EXPECT_EQ(run_f("Abs", {-2, 3, -0.5f}), (std::vector<float>{2, 3, 0.5f}));
  EXPECT_EQ(run_f("Neg", {-2, 3}), (std::vector<float>{2, -3}));
  EXPECT_EQ(run_f("Sign", {-2, 0, 5}), (std::vector<float>{-1, 0, 1}));
  auto a = run1("Abs", {t<int32_t>({3}, {-7, 0, 9})});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dtype(), DType::kI32);
  EXPECT_EQ(vals<int32_t>(*a), (std::vector<int32_t>{7, 0, 9}));
  // int64 stays exact beyond 2^53.
  const int64_t big = (int64_t{1} << 60) + 1;
  auto n = run1("Neg", {t<int64_t>({1}, {big})});
  ASSERT_TRUE(n);
  EXPECT_EQ(vals<int64_t>(*n)[0], -big);
  auto s = run1("Sign", {t<int8_t>({3}, {-5, 0, 3})});
  ASSERT_TRUE(s);
  EXPECT_EQ(vals<int8_t>(*s), (std::vector<int8_t>{-1, 0, 1}));
  auto u = run1("Abs", {t<uint8_t>({2}, {200, 3})});
  ASSERT_TRUE(u);
  EXPECT_EQ(vals<uint8_t>(*u), (std::vector<uint8_t>{200, 3}));
}

TEST(ElementwiseUnary, FloatOnlyOpsRejectIntegers) {
  auto r = run1("Exp", {t<int32_t>({1}, {1})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().to_string().find("Exp"), std::string::npos);
}

TEST(ElementwiseUnary, HalfAndDoubleRoundOnce) {
  auto h = run1("Sqrt", {t<Half>({1}, {Half::from_float(2.0f)})});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->dtype(), DType::kF16);
  EXPECT_EQ(vals<Half>(*h)[0].bits, Half::from_float(std::sqrt(2.0f)).bits);
  auto d = run1("Exp", {t<double>({1}, {1.0})});
  ASSERT_TRUE(d);
  EXPECT_EQ(vals<double>(*d)[0], std::exp(1.0));
  auto b = run1("Neg", {t<BFloat16>({1}, {BFloat16::from_float(1.5f)})});
  ASSERT_TRUE(b);
  EXPECT_EQ(vals<BFloat16>(*b)[0].to_float(), -1.5f);
}

TEST(ElementwiseUnary, IsInfIsNaNNot) {
  auto inf = run1("IsInf", {f32v({kInf, -kInf, 1, kNaN})});
  ASSERT_TRUE(inf);
  EXPECT_EQ(inf->dtype(), DType::kBool);
  EXPECT_EQ(vals<bool>(*inf), (std::vector<bool>{true, true, false, false}));
  auto pos = run1("IsInf", {f32v({kInf, -kInf})}, {{"detect_negative", int64_t{0}}});
  ASSERT_TRUE(pos);
  EXPECT_EQ(vals<bool>(*pos), (std::vector<bool>{true, false}));
  auto neg = run1("IsInf", {f32v({kInf, -kInf})}, {{"detect_positive", int64_t{0}}});
  ASSERT_TRUE(neg);
  EXPECT_EQ(vals<bool>(*neg), (std::vector<bool>{false, true}));
  auto nan = run1("IsNaN", {f32v({kNaN, 1, kInf})});
  ASSERT_TRUE(nan);
  EXPECT_EQ(vals<bool>(*nan), (std::vector<bool>{true, false, false}));
  auto n = run1("Not", {t<bool>({2}, {true, false})});
  ASSERT_TRUE(n);
  EXPECT_EQ(vals<bool>(*n), (std::vector<bool>{false, true}));
  EXPECT_FALSE(run1("Not", {f32v({1})}));
  auto bn = run1("BitwiseNot", {t<uint8_t>({2}, {0, 0x0f})});
  ASSERT_TRUE(bn);
  EXPECT_EQ(vals<uint8_t>(*bn), (std::vector<uint8_t>{0xff, 0xf0}));
}

TEST(ElementwiseUnary, EmptyAndScalarTensors) {
  auto e = run1("Exp", {f32({0, 3}, {})});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->shape(), (std::vector<int64_t>{0, 3}));
  auto s = run1("Neg", {Tensor::scalar(2.0f)});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank(), 0u);
  EXPECT_EQ(vals<float>(*s)[0], -2.0f);
}

TEST(ElementwiseActivation, ReluFamily) {
  EXPECT_EQ(run_f("Relu", {-1, 0, 2}), (std::vector<float>{0, 0, 2}));
  auto ri = run1("Relu", {t<int64_t>({3}, {-5, 0, 7})});
  ASSERT_TRUE(ri);
  EXPECT_EQ(vals<int64_t>(*ri), (std::vector<int64_t>{0, 0, 7}));
  expect_near_all(run_f("LeakyRelu", {-10, 3}), {-0.1, 3});
  expect_near_all(run_f("LeakyRelu", {-10}, {{"alpha", 0.5f}}), {-5});
  expect_near_all(run_f("ThresholdedRelu", {0.5f, 1, 2}), {0, 0, 2});
  expect_near_all(run_f("ThresholdedRelu", {0.5f, 1, 2}, {{"alpha", 0.25f}}), {0.5, 1, 2});
}

TEST(ElementwiseActivation, ExponentialFamily) {
  expect_near_all(run_f("Elu", {-1, 2}), {std::exp(-1.0) - 1, 2});
  expect_near_all(run_f("Elu", {-1}, {{"alpha", 2.0f}}), {2 * (std::exp(-1.0) - 1)});
  const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
  expect_near_all(run_f("Selu", {-1, 0, 2}), {g * a * (std::exp(-1.0) - 1), 0, g * 2});
  expect_near_all(run_f("Selu", {-1, 2}, {{"alpha", 2.0f}, {"gamma", 3.0f}}),
                  {3 * 2 * (std::exp(-1.0) - 1), 6});
  expect_near_all(run_f("Celu", {-1, 2}, {{"alpha", 2.0f}}), {2 * (std::exp(-0.5) - 1), 2});
  expect_near_all(run_f("Sigmoid", {0, 2, -1000, 1000}), {0.5, 1 / (1 + std::exp(-2.0)), 0, 1});
  expect_near_all(run_f("Tanh", {0, 1}), {0, std::tanh(1.0)});
  expect_near_all(run_f("Softplus", {0, 2, 1000, -1000}),
                  {std::log(2.0), std::log1p(std::exp(2.0)), 1000, 0}, 1e-5);
  expect_near_all(run_f("Softsign", {1, -3}), {0.5, -0.75});
  const double sp = std::log1p(std::exp(1.0));
  expect_near_all(run_f("Mish", {1, 0}), {std::tanh(sp), 0});
}

TEST(ElementwiseActivation, HardSigmoidHardSwishShrink) {
  expect_near_all(run_f("HardSigmoid", {-10, 0, 1, 10}), {0, 0.5, 0.7, 1});
  expect_near_all(run_f("HardSigmoid", {1}, {{"alpha", 0.5f}, {"beta", 0.25f}}), {0.75});
  expect_near_all(run_f("HardSwish", {-4, 0, 1, 4}), {0, 0, 1 * (1.0 / 6 + 0.5), 4});
  expect_near_all(run_f("Shrink", {-2, -0.3f, 0.3f, 2}), {-2, 0, 0, 2});
  expect_near_all(run_f("Shrink", {-2, 0.5f, 2}, {{"bias", 1.5f}, {"lambd", 1.0f}}),
                  {-0.5, 0, 0.5});
  auto si = run1("Shrink", {t<int32_t>({3}, {-5, 1, 5})}, {{"bias", 2.0f}, {"lambd", 1.5f}});
  ASSERT_TRUE(si);
  EXPECT_EQ(vals<int32_t>(*si), (std::vector<int32_t>{-3, 0, 3}));
}

TEST(ElementwiseActivation, NaNPropagates) {
  for (const char* op : {"Relu", "HardSigmoid", "HardSwish", "Celu", "Elu", "Sigmoid", "Softplus"})
    EXPECT_TRUE(std::isnan(run_f(op, {kNaN})[0])) << op;
}

TEST(ElementwiseActivation, PReluBroadcastsSlopeOneWay) {
  // Slope per channel [3,1] over x [2,3,2]... broadcast from the right.
  auto r = run1("PRelu", {f32({2, 3}, {-1, -2, 3, -4, 5, -6}), f32({3}, {0.5f, 2, 10})});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(vals<float>(*r), (std::vector<float>{-0.5f, -4, 3, -2, 5, -60}));
  auto s = run1("PRelu", {f32({2}, {-1, 1}), Tensor::scalar(0.25f)});
  ASSERT_TRUE(s);
  EXPECT_EQ(vals<float>(*s), (std::vector<float>{-0.25f, 1}));
  // The slope may not grow the output.
  auto bad = run1("PRelu", {f32({3}, {1, 2, 3}), f32({2, 3}, {1, 1, 1, 1, 1, 1})});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("does not broadcast"), std::string::npos);
  // Opset 6: a 1-D slope of C values is per channel (axis 1), not trailing.
  auto ch = run1("PRelu", {f32({1, 2, 2}, {-1, -2, -3, 4}), f32v({0.5f, 10})}, {}, 6);
  ASSERT_TRUE(ch) << ch.error().to_string();
  EXPECT_EQ(vals<float>(*ch), (std::vector<float>{-0.5f, -1, -30, 4}));
  auto ints = run1("PRelu", {t<int32_t>({2}, {-3, 4}), t<int32_t>({1}, {2})});
  ASSERT_TRUE(ints);
  EXPECT_EQ(vals<int32_t>(*ints), (std::vector<int32_t>{-6, 4}));
}

TEST(ElementwiseActivation, GeluExactAndTanh) {
  auto exact = run1("Gelu", {f32v({-1, 0, 1})}, {}, 20);
  ASSERT_TRUE(exact) << exact.error().to_string();
  const double g1 = 0.5 * (1 + std::erf(1 / std::sqrt(2.0)));
  expect_near_all(vals<float>(*exact), {-(1 - g1), 0, g1});
  auto tanh = run1("Gelu", {f32v({1})}, {{"approximate", std::string("tanh")}}, 20);
  ASSERT_TRUE(tanh);
  const double k = std::sqrt(2 / M_PI);
  expect_near_all(vals<float>(*tanh), {0.5 * (1 + std::tanh(k * (1 + 0.044715)))});
  auto bad = run1("Gelu", {f32v({1})}, {{"approximate", std::string("fast")}}, 20);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("'fast'"), std::string::npos);
}

TEST(ElementwiseActivation, WrongInputCountIsAnError) {
  auto r = run1("Relu", {f32v({1}), f32v({2})});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("takes 1 inputs, got 2"), std::string::npos);
}

}  // namespace
}  // namespace hone::eval
