// Slice, Gather, GatherElements, GatherND, Compress, NonZero, OneHot.
#include <gtest/gtest.h>

#include <limits>

#include "shape_test_util.h"

namespace hone::shape_test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(ShapeSlice, StepsAxesAndClamping) {
  // x = [[0..4],[5..9],[10..14]]
  auto a =
      run1("Slice", {iota_f32({3, 5}), i64({0, 1}), i64({kMax, 100}), i64({0, 1}), i64({2, 2})});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{2, 2}));
  EXPECT_EQ(values<float>(*a), (Floats{1, 3, 11, 13}));
  // Negative step from the end to the start (INT_MIN end).
  auto b = run1("Slice", {iota_f32({5}), i64({-1}), i64({kMin}), i64({0}), i64({-2})});
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ(values<float>(*b), (Floats{4, 2, 0}));
  // Negative axis, no steps.
  auto c = run1("Slice", {iota_f32({3, 5}), i64({-2}), i64({-1}), i64({-1})});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>(*c), (Floats{3, 8, 13}));
  // Start past end gives an empty slice.
  auto d = run1("Slice", {iota_f32({5}), i64({4}), i64({2})});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->shape(), (Ints{0}));
  // Negative step, start clamped to dim-1 and end -1 after clamping.
  auto e = run1("Slice", {iota_f32({4}), i64({10}), i64({-10}), i64({0}), i64({-1})});
  ASSERT_TRUE(e);
  EXPECT_EQ(values<float>(*e), (Floats{3, 2, 1, 0}));
}

TEST(ShapeSlice, Opset1AttributesAndErrors) {
  auto a = run1("Slice", {iota_f32({3, 5})},
                {{"starts", Ints{1}}, {"ends", Ints{2}}, {"axes", Ints{0}}}, 9);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<float>(*a), (Floats{5, 6, 7, 8, 9}));
  EXPECT_TRUE(
      fails_with(run1("Slice", {iota_f32({5}), i64({0}), i64({2}), i64({0}), i64({0})}), "is 0"));
  EXPECT_TRUE(fails_with(run1("Slice", {iota_f32({5}), i64({0}), i64({2, 3})}), "same length"));
  EXPECT_TRUE(
      fails_with(run1("Slice", {iota_f32({5}), i64({0, 0}), i64({2, 2}), i64({0, -1})}), "twice"));
}

TEST(ShapeGather, AxisNegativeIndicesAndRank) {
  auto a = run1("Gather", {iota_f32({3, 2}), Tensor::from<int64_t>({2, 2}, {0, -1, 1, 0})});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{2, 2, 2}));
  EXPECT_EQ(values<float>(*a), (Floats{0, 1, 4, 5, 2, 3, 0, 1}));
  auto b = run1("Gather", {iota_f32({2, 3}), Tensor::from<int32_t>({2}, {2, 0})},
                {{"axis", int64_t{1}}});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{2, 0, 5, 3}));
  auto s = run1("Gather", {iota_f32({3}), Tensor::scalar<int64_t>(1)});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank(), 0u);
  EXPECT_EQ(s->data<float>()[0], 1.0f);
  EXPECT_TRUE(fails_with(run1("Gather", {iota_f32({3}), i64({3})}), "out of range"));
  EXPECT_TRUE(fails_with(run1("Gather", {iota_f32({3}), i64({-4})}), "out of range"));
}

TEST(ShapeGatherElements, PicksAlongAxis) {
  auto a = run1("GatherElements",
                {f32({2, 2}, {1, 2, 3, 4}), Tensor::from<int64_t>({2, 2}, {0, 0, 1, 0})},
                {{"axis", int64_t{1}}});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<float>(*a), (Floats{1, 1, 4, 3}));
  auto b = run1("GatherElements",
                {iota_f32({3, 3}), Tensor::from<int64_t>({2, 3}, {1, 2, 0, 2, 0, -3})});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{3, 7, 2, 6, 1, 2}));
  EXPECT_TRUE(
      fails_with(run1("GatherElements", {iota_f32({2, 2}), Tensor::from<int64_t>({1, 1}, {2})}),
                 "out of range"));
}

TEST(ShapeGatherND, TuplesSlicesAndBatchDims) {
  // indices [[0,0],[1,1]] on 2x2 → elements.
  auto a =
      run1("GatherND", {f32({2, 2}, {0, 1, 2, 3}), Tensor::from<int64_t>({2, 2}, {0, 0, 1, 1})});
  ASSERT_TRUE(a);
  EXPECT_EQ(values<float>(*a), (Floats{0, 3}));
  // indices [[1],[0]] → rows.
  auto b = run1("GatherND", {f32({2, 2}, {0, 1, 2, 3}), Tensor::from<int64_t>({2, 1}, {1, 0})});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape(), (Ints{2, 2}));
  EXPECT_EQ(values<float>(*b), (Floats{2, 3, 0, 1}));
  // batch_dims=1: data [2,2,2], indices [[1],[0]] → [[2,3],[4,5]].
  auto c = run1("GatherND", {iota_f32({2, 2, 2}), Tensor::from<int64_t>({2, 1}, {1, 0})},
                {{"batch_dims", int64_t{1}}});
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->shape(), (Ints{2, 2}));
  EXPECT_EQ(values<float>(*c), (Floats{2, 3, 4, 5}));
  EXPECT_TRUE(fails_with(
      run1("GatherND", {iota_f32({2, 2}), Tensor::from<int64_t>({1, 3}, {0, 0, 0})}), "last dim"));
  EXPECT_TRUE(fails_with(
      run1("GatherND", {iota_f32({2, 2}), Tensor::from<int64_t>({1, 2}, {0, 2})}), "out of range"));
}

TEST(ShapeCompress, AxisAndFlattened) {
  auto a = run1("Compress", {iota_f32({3, 2}), t<bool>({3}, {false, true, true})},
                {{"axis", int64_t{0}}});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{2, 2}));
  EXPECT_EQ(values<float>(*a), (Floats{2, 3, 4, 5}));
  auto b =
      run1("Compress", {iota_f32({3, 2}), t<bool>({2}, {false, true})}, {{"axis", int64_t{-1}}});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{1, 3, 5}));
  auto c = run1("Compress", {iota_f32({2, 2}), t<bool>({4}, {true, false, false, true})});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>(*c), (Floats{0, 3}));
  EXPECT_TRUE(fails_with(run1("Compress", {iota_f32({2}), t<bool>({3}, {false, false, true})}),
                         "past the end"));
}

TEST(ShapeNonZero, CoordinatesPerAxis) {
  auto a = run1("NonZero", {f32({2, 2}, {1, 0, 1, 1})});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->shape(), (Ints{2, 3}));
  EXPECT_EQ(values<int64_t>(*a), (Ints{0, 1, 1, 0, 0, 1}));
  auto b = run1("NonZero", {t<bool>({3}, {false, false, false})});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape(), (Ints{1, 0}));
  auto c = run1("NonZero", {Tensor::from<int32_t>({4}, {0, -2, 0, 5})});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<int64_t>(*c), (Ints{1, 3}));
}

TEST(ShapeOneHot, AxisNegativeIndicesAndOutOfRange) {
  auto a = run1("OneHot", {i64({0, -1, 5}), Tensor::scalar<int64_t>(3), f32({2}, {0, 1})});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{3, 3}));
  EXPECT_EQ(values<float>(*a), (Floats{1, 0, 0, 0, 0, 1, 0, 0, 0}));
  auto b =
      run1("OneHot",
           {i64({1, 2}), Tensor::from<float>({1}, {3.0f}), Tensor::from<int32_t>({2}, {-1, 7})},
           {{"axis", int64_t{0}}});
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ(b->shape(), (Ints{3, 2}));
  EXPECT_EQ(values<int32_t>(*b), (std::vector<int32_t>{-1, -1, 7, -1, -1, 7}));
  EXPECT_TRUE(fails_with(
      run1("OneHot", {i64({0}), Tensor::scalar<int64_t>(2), f32({3}, {0, 1, 2})}), "off_value"));
  EXPECT_FALSE(
      run1("OneHot", {i64({0}), Tensor::scalar<int64_t>(int64_t{1} << 50), f32({2}, {0, 1})}));
}

}  // namespace
}  // namespace hone::shape_test

namespace hone::shape_test {
namespace {

TEST(ShapeDtypes, IntegerAndBoolDataMoveExactly) {
  const int64_t big = (int64_t{1} << 62) + 3;  // not representable in double
  auto g = run1("Gather", {Tensor::from<int64_t>({3}, {1, big, 2}), i64({1, 1})});
  ASSERT_TRUE(g);
  EXPECT_EQ(values<int64_t>(*g), (Ints{big, big}));
  auto c =
      run1("Concat", {t<bool>({1}, {true}), t<bool>({2}, {false, true})}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<bool>(*c), (std::vector<bool>{true, false, true}));
  auto s = run1("Slice", {Tensor::from<uint8_t>({4}, {1, 2, 3, 255}), i64({-1}), i64({0}), i64({0}),
                          i64({-2})});
  ASSERT_TRUE(s);
  EXPECT_EQ(values<uint8_t>(*s), (std::vector<uint8_t>{255, 2}));
  auto m = run1("ScatterElements",
                {Tensor::from<int64_t>({2}, {big, 0}), i64({0}), Tensor::from<int64_t>({1}, {5})},
                {{"reduction", std::string("max")}});
  ASSERT_TRUE(m);
  EXPECT_EQ(values<int64_t>(*m), (Ints{big, 0}));
}

}  // namespace
}  // namespace hone::shape_test
