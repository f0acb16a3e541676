// Reference Reduce* and ArgMax/ArgMin against hand-computed values: axes as
// attribute and as input, keepdims, noop_with_empty_axes, empty sets,
// integer exactness and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "linalg_test_util.h"

namespace hone {
namespace {

using lr_test::expect_near;
using lr_test::f32;
using lr_test::fails_with;
using lr_test::ints;
using lr_test::run1;
using lr_test::values;

constexpr double kInf = std::numeric_limits<double>::infinity();

// x = [[1, -2, 3], [-4, 5, -6]]
Tensor x23() {
  return f32({2, 3}, {1, -2, 3, -4, 5, -6});
}

TEST(Reduce, EveryKindOverAxis1) {
  struct Case {
    const char* op;
    std::vector<double> want;
  } cases[] = {
      {"ReduceSum", {2, -5}},
      {"ReduceMean", {2.0 / 3, -5.0 / 3}},
      {"ReduceMax", {3, 5}},
      {"ReduceMin", {-2, -6}},
      {"ReduceProd", {-6, 120}},
      {"ReduceL1", {6, 15}},
      {"ReduceL2", {std::sqrt(14.0), std::sqrt(77.0)}},
      {"ReduceSumSquare", {14, 77}},
      {"ReduceLogSumExp",
       {std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0)),
        std::log(std::exp(-4.0) + std::exp(5.0) + std::exp(-6.0))}},
  };
  for (const Case& c : cases) {
    // Opset 17: axes as attribute for all but ReduceSum.
    const bool sum = std::string(c.op) == "ReduceSum";
    auto y =
        sum ? run1(c.op, {x23(), ints({1})}, {{"keepdims", int64_t{0}}})
            : run1(c.op, {x23()}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
    ASSERT_TRUE(y) << c.op << ": " << y.error().to_string();
    EXPECT_EQ(y->shape(), (std::vector<int64_t>{2})) << c.op;
    expect_near(*y, c.want, 1e-5);
    // Opset 18: axes as input for every kind, negative axis, keepdims default.
    auto y18 = run1(c.op, {x23(), ints({-1})}, {}, 18);
    ASSERT_TRUE(y18) << c.op << ": " << y18.error().to_string();
    EXPECT_EQ(y18->shape(), (std::vector<int64_t>{2, 1})) << c.op;
    expect_near(*y18, c.want, 1e-5);
  }
  auto ls = run1("ReduceLogSum", {f32({2, 2}, {1, 2, 3, 4})}, {{"axes", std::vector<int64_t>{0}}});
  ASSERT_TRUE(ls) << ls.error().to_string();
  EXPECT_EQ(ls->shape(), (std::vector<int64_t>{1, 2}));
  expect_near(*ls, {std::log(4.0), std::log(6.0)});
}

TEST(Reduce, DefaultAndEmptyAxesReduceEverythingUnlessNoop) {
  auto all = run1("ReduceSum", {x23()});
  ASSERT_TRUE(all) << all.error().to_string();
  EXPECT_EQ(all->shape(), (std::vector<int64_t>{1, 1}));
  expect_near(*all, {-3});
  auto empty =
      run1("ReduceMax", {x23(), Tensor::zeros(DType::kI64, {0})}, {{"keepdims", int64_t{0}}}, 18);
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_EQ(empty->rank(), 0u);
  expect_near(*empty, {5});
  auto noop = run1("ReduceSum", {x23(), Tensor::zeros(DType::kI64, {0})},
                   {{"noop_with_empty_axes", int64_t{1}}});
  ASSERT_TRUE(noop) << noop.error().to_string();
  EXPECT_EQ(noop->shape(), (std::vector<int64_t>{2, 3}));
  expect_near(*noop, {1, -2, 3, -4, 5, -6});
  auto multi =
      run1("ReduceMean", {lr_test::iota({2, 3, 2})}, {{"axes", std::vector<int64_t>{0, 2}}});
  ASSERT_TRUE(multi);
  EXPECT_EQ(multi->shape(), (std::vector<int64_t>{1, 3, 1}));
  // axis 1 = j: mean of {2j, 2j+1, 6+2j, 7+2j} = 2j + 3.5
  expect_near(*multi, {3.5, 5.5, 7.5});
}

TEST(Reduce, EmptySetGivesIdentities) {
  Tensor e = Tensor::zeros(DType::kF32, {2, 0});
  auto axes1 =
      std::map<std::string, Attribute>{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}};
  struct Case {
    const char* op;
    double want;
  } cases[] = {{"ReduceProd", 1},       {"ReduceMax", -kInf},      {"ReduceMin", kInf},
               {"ReduceL1", 0},         {"ReduceL2", 0},           {"ReduceSumSquare", 0},
               {"ReduceLogSum", -kInf}, {"ReduceLogSumExp", -kInf}};
  for (const Case& c : cases) {
    auto y = run1(c.op, {e}, axes1);
    ASSERT_TRUE(y) << c.op << ": " << y.error().to_string();
    expect_near(*y, {c.want, c.want});
  }
  auto s = run1("ReduceSum", {e, ints({1})}, {{"keepdims", int64_t{0}}});
  ASSERT_TRUE(s);
  expect_near(*s, {0, 0});
  auto imax = run1("ReduceMax", {Tensor::zeros(DType::kI32, {0})}, {{"keepdims", int64_t{0}}});
  ASSERT_TRUE(imax) << imax.error().to_string();
  EXPECT_EQ(values<int32_t>(*imax), (std::vector<int32_t>{std::numeric_limits<int32_t>::lowest()}));
}

TEST(Reduce, IntegersStayExact) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable in double
  auto s = run1("ReduceSum", {ints({big, 2, -1})}, {{"keepdims", int64_t{0}}});
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(values<int64_t>(*s), (std::vector<int64_t>{big + 1}));
  auto p = run1("ReduceProd", {ints({big, 1})}, {{"keepdims", int64_t{0}}});
  ASSERT_TRUE(p);
  EXPECT_EQ(values<int64_t>(*p), (std::vector<int64_t>{big}));
  auto mx = run1("ReduceMax", {ints({big, big - 1})}, {{"keepdims", int64_t{0}}});
  ASSERT_TRUE(mx);
  EXPECT_EQ(values<int64_t>(*mx), (std::vector<int64_t>{big}));
  auto mean = run1("ReduceMean", {lr_test::t<int32_t>({2, 2}, {1, 2, 3, 5})},
                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  ASSERT_TRUE(mean);
  EXPECT_EQ(values<int32_t>(*mean), (std::vector<int32_t>{1, 4}));
  auto l1 = run1("ReduceL1", {lr_test::t<int32_t>({3}, {-3, 4, -5})});
  ASSERT_TRUE(l1);
  EXPECT_EQ(values<int32_t>(*l1), (std::vector<int32_t>{12}));
}

TEST(Reduce, ScalarAndErrors) {
  auto s = run1("ReduceSum", {Tensor::scalar(4.0f)});
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->rank(), 0u);
  expect_near(*s, {4});
  EXPECT_TRUE(fails_with(run1("ReduceSum", {x23(), ints({2})}), "out of range"));
  EXPECT_TRUE(fails_with(run1("ReduceMean", {x23()}, {{"axes", std::vector<int64_t>{-3}}}),
                         "out of range"));
  EXPECT_TRUE(fails_with(run1("ReduceSum", {x23(), f32({1}, {1})}), "integer"));
}

TEST(ArgMaxMin, AxisKeepdimsAndLastIndex) {
  Tensor x = f32({2, 3}, {1, 3, 3, 7, 0, 7});
  auto amax = run1("ArgMax", {x}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(amax) << amax.error().to_string();
  EXPECT_EQ(amax->dtype(), DType::kI64);
  EXPECT_EQ(amax->shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<int64_t>(*amax), (std::vector<int64_t>{1, 0}));
  auto last =
      run1("ArgMax", {x},
           {{"axis", int64_t{-1}}, {"select_last_index", int64_t{1}}, {"keepdims", int64_t{0}}});
  ASSERT_TRUE(last);
  EXPECT_EQ(last->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values<int64_t>(*last), (std::vector<int64_t>{2, 2}));
  auto amin = run1("ArgMin", {x});  // axis 0
  ASSERT_TRUE(amin);
  EXPECT_EQ(amin->shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(values<int64_t>(*amin), (std::vector<int64_t>{0, 1, 0}));
  auto imin = run1("ArgMin", {ints({5, -2, 9, -2})}, {{"select_last_index", int64_t{1}}});
  ASSERT_TRUE(imin);
  EXPECT_EQ(values<int64_t>(*imin), (std::vector<int64_t>{3}));
  EXPECT_TRUE(fails_with(run1("ArgMax", {x}, {{"axis", int64_t{2}}}), "out of range"));
  EXPECT_TRUE(fails_with(run1("ArgMax", {Tensor::zeros(DType::kF32, {0, 2})}), "empty axis"));
}

}  // namespace
}  // namespace hone
