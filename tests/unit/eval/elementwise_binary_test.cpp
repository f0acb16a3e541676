// Binary, comparison, logic, bitwise and variadic kernels, with broadcasting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "elementwise_test_util.h"

namespace hone::eval {
namespace {

using namespace ew_test;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ElementwiseBinary, ArithmeticSameShape) {
  const Tensor a = f32v({1, 2, 3}), b = f32v({4, 5, 6});
  EXPECT_EQ(vals<float>(*run1("Add", {a, b})), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(vals<float>(*run1("Sub", {a, b})), (std::vector<float>{-3, -3, -3}));
  EXPECT_EQ(vals<float>(*run1("Mul", {a, b})), (std::vector<float>{4, 10, 18}));
  EXPECT_EQ(vals<float>(*run1("Div", {b, a})), (std::vector<float>{4, 2.5f, 2}));
}

TEST(ElementwiseBinary, BroadcastingBothWays) {
  // [2,1] + [3] → [2,3]
  auto r = run1("Add", {f32({2, 1}, {10, 20}), f32v({1, 2, 3})});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(vals<float>(*r), (std::vector<float>{11, 12, 13, 21, 22, 23}));
  // [2,3,2] * [3,1]: middle axis varies in b, last broadcast.
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  auto m = run1("Mul", {f32({2, 3, 2}, x), f32({3, 1}, {1, 10, 100})});
  ASSERT_TRUE(m);
  EXPECT_EQ(vals<float>(*m),
            (std::vector<float>{0, 1, 20, 30, 400, 500, 6, 7, 80, 90, 1000, 1100}));
  // Scalar with a tensor, scalar with scalar.
  auto s = run1("Sub", {Tensor::scalar(10.0f), f32v({1, 2})});
  ASSERT_TRUE(s);
  EXPECT_EQ(vals<float>(*s), (std::vector<float>{9, 8}));
  auto ss = run1("Add", {Tensor::scalar(1.0f), Tensor::scalar(2.0f)});
  ASSERT_TRUE(ss);
  EXPECT_EQ(ss->rank(), 0u);
  EXPECT_EQ(vals<float>(*ss)[0], 3.0f);
  // An empty dim broadcasts to empty.
  auto e = run1("Add", {f32({0, 1}, {}), f32v({1, 2})});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->shape(), (std::vector<int64_t>{0, 2}));
}

TEST(ElementwiseBinary, LargeBroadcastMatchesScalarLoop) {
  // Big enough to take the parallel path; each element checked.
  const int64_t rows = 300, cols = 257;
  std::vector<float> a(rows * cols), b(cols);
  for (int64_t i = 0; i < rows * cols; ++i) a[i] = static_cast<float>(i % 1000);
  for (int64_t j = 0; j < cols; ++j) b[j] = static_cast<float>(j);
  auto r = run1("Sub", {f32({rows, cols}, a), f32({1, cols}, b)});
  ASSERT_TRUE(r);
  const float* p = r->data<float>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      ASSERT_EQ(p[i * cols + j], a[i * cols + j] - b[j]) << i << "," << j;
}

TEST(ElementwiseBinary, ShapeAndDtypeErrors) {
  auto shape = run1("Add", {f32v({1, 2}), f32v({1, 2, 3})});
  ASSERT_FALSE(shape);
  EXPECT_NE(shape.error().message().find("cannot be broadcast"), std::string::npos);
  auto dtype = run1("Mul", {f32v({1}), t<int32_t>({1}, {1})});
  ASSERT_FALSE(dtype);
  EXPECT_NE(dtype.error().message().find("same dtype"), std::string::npos);
  EXPECT_NE(dtype.error().to_string().find("while running node"), std::string::npos);
}

TEST(ElementwiseBinary, LegacyBroadcastAttributeBeforeOpset7) {
  // A [2,3,2], B [3] placed at axis 1: B varies along the middle axis.
  std::vector<float> x(12, 0.0f);
  auto r = run1("Add", {f32({2, 3, 2}, x), f32v({1, 2, 3})},
                {{"broadcast", int64_t{1}}, {"axis", int64_t{1}}}, 6);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(vals<float>(*r), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // Without axis, B is suffix-aligned as in NumPy.
  auto s =
      run1("Mul", {f32({2, 2}, {1, 2, 3, 4}), f32v({10, 100})}, {{"broadcast", int64_t{1}}}, 6);
  ASSERT_TRUE(s);
  EXPECT_EQ(vals<float>(*s), (std::vector<float>{10, 200, 30, 400}));
  auto bad = run1("Add", {f32({2, 3}, {0, 0, 0, 0, 0, 0}), f32v({1, 2})},
                  {{"broadcast", int64_t{1}}, {"axis", int64_t{1}}}, 6);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("legacy broadcast"), std::string::npos);
}

TEST(ElementwiseBinary, IntegerArithmeticIsExact) {
  const int64_t big = (int64_t{1} << 62) + 3;
  auto add = run1("Add", {t<int64_t>({1}, {big}), t<int64_t>({1}, {1})});
  ASSERT_TRUE(add);
  EXPECT_EQ(vals<int64_t>(*add)[0], big + 1);
  // Division truncates toward zero.
  auto div = run1("Div", {t<int32_t>({4}, {7, -7, 7, -7}), t<int32_t>({4}, {2, 2, -2, -2})});
  ASSERT_TRUE(div);
  EXPECT_EQ(vals<int32_t>(*div), (std::vector<int32_t>{3, -3, -3, 3}));
  auto u8 = run1("Mul", {t<uint8_t>({2}, {16, 3}), t<uint8_t>({2}, {16, 5})});
  ASSERT_TRUE(u8);
  EXPECT_EQ(vals<uint8_t>(*u8), (std::vector<uint8_t>{0, 15}));  // 256 wraps to 0
  auto u16 = run1("Mul", {t<uint16_t>({1}, {65535}), t<uint16_t>({1}, {65535})});
  ASSERT_TRUE(u16);
  EXPECT_EQ(vals<uint16_t>(*u16)[0], 1);
  auto zero = run1("Div", {t<int32_t>({2}, {1, 2}), t<int32_t>({2}, {1, 0})});
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message().find("division by zero"), std::string::npos);
}

TEST(ElementwiseBinary, PowMixedTypes) {
  auto ff = run1("Pow", {f32v({2, 4, 9}), f32v({3, 0.5f, 0.5f})});
  ASSERT_TRUE(ff);
  EXPECT_EQ(vals<float>(*ff), (std::vector<float>{8, 2, 3}));
  auto fi = run1("Pow", {f32v({2, 3}), t<int64_t>({2}, {2, -1})});
  ASSERT_TRUE(fi);
  EXPECT_EQ(fi->dtype(), DType::kF32);
  EXPECT_NEAR(vals<float>(*fi)[1], 1.0f / 3, 1e-7);
  auto ifl = run1("Pow", {t<int32_t>({3}, {1, 2, 3}), f32v({4, 5, 6})});
  ASSERT_TRUE(ifl);
  EXPECT_EQ(ifl->dtype(), DType::kI32);
  EXPECT_EQ(vals<int32_t>(*ifl), (std::vector<int32_t>{1, 32, 729}));
  auto ii = run1("Pow", {t<int64_t>({3}, {3, -2, 2}), t<int64_t>({3}, {39, 3, -1})});
  ASSERT_TRUE(ii);
  EXPECT_EQ(vals<int64_t>(*ii), (std::vector<int64_t>{4052555153018976267, -8, 0}));
  auto zero = run1("Pow", {t<int32_t>({1}, {0}), t<int32_t>({1}, {-1})});
  ASSERT_FALSE(zero);
}

// Pow widens its exponent (f64, int64 or uint64) before the kernel: the
// widening must keep an unsigned exponent's value and a narrow one's sign.
TEST(ElementwiseBinary, PowWidensTheExponentExactly) {
  // 3^(2^63) mod 2^32 is 1 (3's order mod 2^32 divides 2^30); read as int64
  // the exponent would be negative and give 0.
  auto big = run1("Pow", {t<int32_t>({1}, {3}), t<uint64_t>({1}, {uint64_t{1} << 63})});
  ASSERT_TRUE(big);
  EXPECT_EQ(vals<int32_t>(*big), (std::vector<int32_t>{1}));
  auto small = run1("Pow", {t<int8_t>({3}, {-2, 3, 2}), t<uint8_t>({3}, {3, 5, 0})});
  ASSERT_TRUE(small);
  EXPECT_EQ(small->dtype(), DType::kI8);
  EXPECT_EQ(vals<int8_t>(*small), (std::vector<int8_t>{-8, -13, 1}));  // 243 wraps to -13
  auto neg = run1("Pow", {t<int16_t>({2}, {-1, 5}), t<int8_t>({2}, {-3, -1})});
  ASSERT_TRUE(neg);
  EXPECT_EQ(vals<int16_t>(*neg), (std::vector<int16_t>{-1, 0}));
  auto half = run1("Pow", {f32v({2, 9}), t<uint16_t>({2}, {10, 0})});
  ASSERT_TRUE(half);
  EXPECT_EQ(vals<float>(*half), (std::vector<float>{1024, 1}));
  auto boolean = run1("Pow", {f32v({2}), t<bool>({1}, {true})});
  ASSERT_FALSE(boolean);
  EXPECT_NE(boolean.error().message().find("numeric"), std::string::npos)
      << boolean.error().message();
}

TEST(ElementwiseBinary, ModSignRules) {
  const Tensor a = t<int32_t>({4}, {5, -5, 5, -5}), b = t<int32_t>({4}, {3, 3, -3, -3});
  auto py = run1("Mod", {a, b});
  ASSERT_TRUE(py);
  EXPECT_EQ(vals<int32_t>(*py), (std::vector<int32_t>{2, 1, -1, -2}));  // sign of divisor
  auto c = run1("Mod", {a, b}, {{"fmod", int64_t{1}}});
  ASSERT_TRUE(c);
  EXPECT_EQ(vals<int32_t>(*c), (std::vector<int32_t>{2, -2, 2, -2}));  // sign of dividend
  auto f = run1("Mod", {f32v({5.5f, -5.5f}), f32v({2, 2})}, {{"fmod", int64_t{1}}});
  ASSERT_TRUE(f);
  EXPECT_EQ(vals<float>(*f), (std::vector<float>{1.5f, -1.5f}));
  auto bad = run1("Mod", {f32v({1}), f32v({2})});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("fmod=1"), std::string::npos);
  auto u = run1("Mod", {t<uint8_t>({2}, {200, 7}), t<uint8_t>({1}, {7})});
  ASSERT_TRUE(u);
  EXPECT_EQ(vals<uint8_t>(*u), (std::vector<uint8_t>{4, 0}));
  EXPECT_FALSE(run1("Mod", {t<int32_t>({1}, {1}), t<int32_t>({1}, {0})}));
}

TEST(ElementwiseBinary, BitShiftAndBitwise) {
  auto l = run1("BitShift", {t<uint8_t>({3}, {16, 4, 1}), t<uint8_t>({3}, {1, 2, 8})},
                {{"direction", std::string("LEFT")}});
  ASSERT_TRUE(l);
  EXPECT_EQ(vals<uint8_t>(*l), (std::vector<uint8_t>{32, 16, 0}));
  auto r = run1("BitShift", {t<uint32_t>({2}, {16, 4}), t<uint32_t>({1}, {2})},
                {{"direction", std::string("RIGHT")}});
  ASSERT_TRUE(r);
  EXPECT_EQ(vals<uint32_t>(*r), (std::vector<uint32_t>{4, 1}));
  EXPECT_FALSE(run1("BitShift", {t<uint8_t>({1}, {1}), t<uint8_t>({1}, {1})}));
  EXPECT_FALSE(run1("BitShift", {t<int8_t>({1}, {1}), t<int8_t>({1}, {1})},
                    {{"direction", std::string("LEFT")}}));
  const Tensor a = t<int32_t>({2}, {0b1100, -1}), b = t<int32_t>({2}, {0b1010, 5});
  EXPECT_EQ(vals<int32_t>(*run1("BitwiseAnd", {a, b})), (std::vector<int32_t>{0b1000, 5}));
  EXPECT_EQ(vals<int32_t>(*run1("BitwiseOr", {a, b})), (std::vector<int32_t>{0b1110, -1}));
  EXPECT_EQ(vals<int32_t>(*run1("BitwiseXor", {a, b})), (std::vector<int32_t>{0b0110, -6}));
}

TEST(ElementwiseBinary, LogicalOps) {
  const Tensor a = t<bool>({4}, {false, false, true, true}),
               b = t<bool>({4}, {false, true, false, true});
  EXPECT_EQ(vals<bool>(*run1("And", {a, b})), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(vals<bool>(*run1("Or", {a, b})), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(vals<bool>(*run1("Xor", {a, b})), (std::vector<bool>{false, true, true, false}));
  auto bc = run1("And", {t<bool>({2, 1}, {true, false}), t<bool>({2}, {true, false})});
  ASSERT_TRUE(bc);
  EXPECT_EQ(vals<bool>(*bc), (std::vector<bool>{true, false, false, false}));
  EXPECT_FALSE(run1("And", {f32v({1}), f32v({1})}));
}

TEST(ElementwiseBinary, Comparisons) {
  const Tensor a = f32v({1, 2, 3, kNaN}), b = f32v({2, 2, 2, kNaN});
  EXPECT_EQ(vals<bool>(*run1("Equal", {a, b})), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(vals<bool>(*run1("Less", {a, b})), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(vals<bool>(*run1("LessOrEqual", {a, b})),
            (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(vals<bool>(*run1("Greater", {a, b})), (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(vals<bool>(*run1("GreaterOrEqual", {a, b})),
            (std::vector<bool>{false, true, true, false}));
  // int64 compares exactly even where double would not.
  const int64_t big = int64_t{1} << 60;
  auto i = run1("Less", {t<int64_t>({1}, {big}), t<int64_t>({1}, {big + 1})});
  ASSERT_TRUE(i);
  EXPECT_TRUE(vals<bool>(*i)[0]);
  auto e = run1("Equal", {t<bool>({2}, {true, false}), t<bool>({1}, {true})});
  ASSERT_TRUE(e);
  EXPECT_EQ(vals<bool>(*e), (std::vector<bool>{true, false}));
}

TEST(ElementwiseVariadic, SumMeanMinMax) {
  const Tensor a = f32v({1, 5, 3}), b = f32({1}, {2}), c = f32v({0, 10, 3});
  EXPECT_EQ(vals<float>(*run1("Sum", {a, b, c})), (std::vector<float>{3, 17, 8}));
  EXPECT_EQ(vals<float>(*run1("Mean", {a, b, c})), (std::vector<float>{1, 17.0f / 3, 8.0f / 3}));
  EXPECT_EQ(vals<float>(*run1("Min", {a, b, c})), (std::vector<float>{0, 2, 2}));
  EXPECT_EQ(vals<float>(*run1("Max", {a, b, c})), (std::vector<float>{2, 10, 3}));
  EXPECT_EQ(vals<float>(*run1("Max", {a})), (std::vector<float>{1, 5, 3}));
  auto nan = run1("Max", {f32v({kNaN, 1}), f32v({1, kNaN})});
  ASSERT_TRUE(nan);
  EXPECT_TRUE(std::isnan(vals<float>(*nan)[0]));
  EXPECT_TRUE(std::isnan(vals<float>(*nan)[1]));
  auto imin = run1("Min", {t<uint8_t>({2}, {200, 3}), t<uint8_t>({2}, {100, 7})});
  ASSERT_TRUE(imin);
  EXPECT_EQ(vals<uint8_t>(*imin), (std::vector<uint8_t>{100, 3}));
  auto bc = run1("Sum", {f32({2, 1}, {1, 2}), f32v({10, 20, 30})});
  ASSERT_TRUE(bc);
  EXPECT_EQ(vals<float>(*bc), (std::vector<float>{11, 21, 31, 12, 22, 32}));
  EXPECT_FALSE(run1("Sum", {}));
  EXPECT_FALSE(run1("Mean", {t<int32_t>({1}, {1})}));
}

TEST(ElementwiseVariadic, SumAccumulatesInDouble) {
  // In float, 1e8 + 1 + 1 - 1e8 rounds to 0 (the ones vanish); in double it is 2.
  auto r = run1("Sum", {f32v({1e8f}), f32v({1}), f32v({1}), f32v({-1e8f})});
  ASSERT_TRUE(r);
  EXPECT_EQ(vals<float>(*r)[0], 2.0f);
}

TEST(ElementwiseVariadic, WhereBroadcastsThreeWays) {
  auto r = run1("Where", {t<bool>({2, 1}, {true, false}), f32v({1, 2, 3}), Tensor::scalar(-1.0f)});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(vals<float>(*r), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  auto i = run1("Where",
                {t<bool>({2}, {false, true}), t<int64_t>({2}, {1, 2}), t<int64_t>({2}, {3, 4})});
  ASSERT_TRUE(i);
  EXPECT_EQ(vals<int64_t>(*i), (std::vector<int64_t>{3, 2}));
  EXPECT_FALSE(run1("Where", {f32v({1}), f32v({1}), f32v({1})}));
  EXPECT_FALSE(run1("Where", {t<bool>({1}, {true}), f32v({1}), t<int32_t>({1}, {1})}));
}

}  // namespace
}  // namespace hone::eval
