// ScatterElements, Scatter, ScatterND, Pad, DepthToSpace, SpaceToDepth,
// Trilu, ReverseSequence, EyeLike.
#include <gtest/gtest.h>

#include "shape_test_util.h"

namespace hone::shape_test {
namespace {

TEST(ShapeScatterElements, NoneAndReductions) {
  const Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  const Tensor idx = Tensor::from<int64_t>({1, 3}, {1, 3, -4});
  const Tensor upd = f32({1, 3}, {10, 20, 30});
  auto a = run1("ScatterElements", {data, idx, upd}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<float>(*a), (Floats{1, 30, 3, 20, 5}));  // -4 → 1: the last write wins
  auto b = run1("ScatterElements", {data, idx, upd},
                {{"axis", int64_t{1}}, {"reduction", std::string("add")}});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{1, 42, 3, 24, 5}));
  auto c = run1("ScatterElements", {data, idx, upd},
                {{"axis", int64_t{1}}, {"reduction", std::string("mul")}});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>(*c), (Floats{1, 600, 3, 80, 5}));
  auto d = run1("ScatterElements", {data, idx, f32({1, 3}, {0, 9, 1})},
                {{"axis", int64_t{1}}, {"reduction", std::string("max")}});
  ASSERT_TRUE(d);
  EXPECT_EQ(values<float>(*d), (Floats{1, 2, 3, 9, 5}));
  auto e = run1("ScatterElements", {data, idx, f32({1, 3}, {0, 9, 1})},
                {{"axis", int64_t{1}}, {"reduction", std::string("min")}});
  ASSERT_TRUE(e);
  EXPECT_EQ(values<float>(*e), (Floats{1, 0, 3, 4, 5}));
  EXPECT_TRUE(fails_with(
      run1("ScatterElements", {data, Tensor::from<int64_t>({1, 1}, {5}), f32({1, 1}, {0})},
           {{"axis", int64_t{1}}}),
      "out of range"));
  EXPECT_TRUE(fails_with(
      run1("ScatterElements", {data, idx, upd}, {{"reduction", std::string("sub")}}), "reduction"));
}

TEST(ShapeScatter, DeprecatedFormAxisZeroInt) {
  auto a = run1("Scatter",
                {Tensor::from<int32_t>({3, 2}, {0, 0, 0, 0, 0, 0}),
                 Tensor::from<int64_t>({1, 2}, {2, 0}), Tensor::from<int32_t>({1, 2}, {7, 8})},
                {}, 10);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<int32_t>(*a), (std::vector<int32_t>{0, 8, 0, 0, 7, 0}));
}

TEST(ShapeScatterND, ElementsSlicesAndAdd) {
  auto a = run1("ScatterND", {f32({4}, {1, 2, 3, 4}), Tensor::from<int64_t>({2, 1}, {3, -3}),
                              f32({2}, {9, 10})});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<float>(*a), (Floats{1, 10, 3, 9}));
  auto b = run1("ScatterND",
                {iota_f32({2, 2}), Tensor::from<int64_t>({1, 1}, {1}), f32({1, 2}, {7, 8})});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{0, 1, 7, 8}));
  auto c = run1("ScatterND",
                {f32({3}, {1, 1, 1}), Tensor::from<int64_t>({2, 1}, {0, 0}), f32({2}, {2, 3})},
                {{"reduction", std::string("add")}});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>(*c), (Floats{6, 1, 1}));
  EXPECT_TRUE(fails_with(
      run1("ScatterND", {iota_f32({2, 2}), Tensor::from<int64_t>({1, 1}, {1}), f32({2}, {7, 8})}),
      "must have shape"));
  EXPECT_TRUE(fails_with(
      run1("ScatterND", {iota_f32({2}), Tensor::from<int64_t>({1, 1}, {2}), f32({1}, {7})}),
      "out of range"));
}

TEST(ShapePad, ConstantWithValueAndNegativePads) {
  auto a = run1("Pad", {f32({2, 2}, {1, 2, 3, 4}), i64({0, 1, 1, 0}), Tensor::scalar<float>(9.0f)});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{3, 3}));
  EXPECT_EQ(values<float>(*a), (Floats{9, 1, 2, 9, 3, 4, 9, 9, 9}));
  // Negative pads crop.
  auto b = run1("Pad", {iota_f32({4}), i64({-1, 1})});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{1, 2, 3, 0}));
  // Opset 2 attributes.
  auto c = run1("Pad", {iota_f32({2})}, {{"pads", Ints{1, 0}}, {"value", 5.0f}}, 2);
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>(*c), (Floats{5, 0, 1}));
  EXPECT_TRUE(fails_with(run1("Pad", {iota_f32({2}), i64({1})}), "entries"));
  EXPECT_TRUE(fails_with(run1("Pad", {iota_f32({2}), i64({-3, 0})}), "below zero"));
}

TEST(ShapePad, ReflectEdgeWrap) {
  const Tensor x = f32({3}, {1, 2, 3});
  auto r = run1("Pad", {x, i64({2, 2})}, {{"mode", std::string("reflect")}});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values<float>(*r), (Floats{3, 2, 1, 2, 3, 2, 1}));
  auto e = run1("Pad", {x, i64({2, 1})}, {{"mode", std::string("edge")}});
  ASSERT_TRUE(e);
  EXPECT_EQ(values<float>(*e), (Floats{1, 1, 1, 2, 3, 3}));
  auto w = run1("Pad", {x, i64({2, 1})}, {{"mode", std::string("wrap")}}, 19);
  ASSERT_TRUE(w);
  EXPECT_EQ(values<float>(*w), (Floats{2, 3, 1, 2, 3, 1}));
  EXPECT_TRUE(fails_with(run1("Pad", {x, i64({1, 1})}, {{"mode", std::string("mirror")}}), "mode"));
}

TEST(ShapePad, AxesInputAndIntAndBool) {
  // Opset 18 axes: pad only axis -1 of a 2x1.
  auto a = run1(
      "Pad",
      {Tensor::from<int32_t>({2, 1}, {1, 2}), i64({1, 0}), Tensor::scalar<int32_t>(-1), i64({-1})},
      {}, 18);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{2, 2}));
  EXPECT_EQ(values<int32_t>(*a), (std::vector<int32_t>{-1, 1, -1, 2}));
  auto b = run1("Pad", {t<bool>({1}, {true}), i64({1, 1})});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<bool>(*b), (std::vector<bool>{false, true, false}));
}

TEST(ShapeDepthToSpace, DcrAndCrd) {
  // N=1, C=4, H=W=1: channels become a 2x2 block.
  auto a = run1("DepthToSpace", {iota_f32({1, 4, 1, 1})}, {{"blocksize", int64_t{2}}});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->shape(), (Ints{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(*a), (Floats{0, 1, 2, 3}));
  // C=8, H=1, W=1, b=2: DCR channel (i*2+j)*2 + c', CRD c'*4 + i*2 + j.
  auto d = run1("DepthToSpace", {iota_f32({1, 8, 1, 1})}, {{"blocksize", int64_t{2}}});
  ASSERT_TRUE(d);
  EXPECT_EQ(values<float>(*d), (Floats{0, 2, 4, 6, 1, 3, 5, 7}));
  auto c = run1("DepthToSpace", {iota_f32({1, 8, 1, 1})},
                {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}});
  ASSERT_TRUE(c);
  EXPECT_EQ(values<float>(*c), (Floats{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(fails_with(
      run1("DepthToSpace", {iota_f32({1, 3, 1, 1})}, {{"blocksize", int64_t{2}}}), "divisible"));
}

TEST(ShapeSpaceToDepth, InvertsDepthToSpaceDcr) {
  auto s = run1("SpaceToDepth", {iota_f32({1, 2, 2, 4})}, {{"blocksize", int64_t{2}}});
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->shape(), (Ints{1, 8, 1, 2}));
  // Channel (i*2+j)*2 + c at (h', w') holds x[c, i, 2w'+j].
  EXPECT_EQ(values<float>(*s), (Floats{0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}));
  auto back = run1("DepthToSpace", {*s}, {{"blocksize", int64_t{2}}});
  ASSERT_TRUE(back);
  EXPECT_EQ(values<float>(*back), values<float>(iota_f32({1, 2, 2, 4})));
}

TEST(ShapeTrilu, UpperLowerWithK) {
  const Tensor x = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto u = run1("Trilu", {x});
  ASSERT_TRUE(u);
  EXPECT_EQ(values<float>(*u), (Floats{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  auto u1 = run1("Trilu", {x, Tensor::scalar<int64_t>(1)});
  ASSERT_TRUE(u1);
  EXPECT_EQ(values<float>(*u1), (Floats{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  auto l = run1("Trilu", {x, Tensor::scalar<int64_t>(-1)}, {{"upper", int64_t{0}}});
  ASSERT_TRUE(l);
  EXPECT_EQ(values<float>(*l), (Floats{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_FALSE(run1("Trilu", {f32({3}, {1, 2, 3})}));
}

TEST(ShapeReverseSequence, TimeMajorAndBatchMajor) {
  // time_axis 0, batch_axis 1: x[t, b]; lens [3, 1].
  auto a = run1("ReverseSequence", {iota_f32({3, 2}), i64({3, 1})});
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<float>(*a), (Floats{4, 1, 2, 3, 0, 5}));
  auto b = run1("ReverseSequence", {iota_f32({2, 3}), i64({2, 3})},
                {{"time_axis", int64_t{1}}, {"batch_axis", int64_t{0}}});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{1, 0, 2, 5, 4, 3}));
  EXPECT_TRUE(fails_with(run1("ReverseSequence", {iota_f32({3, 2}), i64({4, 1})}), "outside"));
}

TEST(ShapeEyeLike, OffsetAndDtype) {
  auto a = run1("EyeLike", {Tensor::zeros(DType::kF32, {2, 3})}, {{"k", int64_t{1}}});
  ASSERT_TRUE(a);
  EXPECT_EQ(values<float>(*a), (Floats{0, 1, 0, 0, 0, 1}));
  auto b = run1("EyeLike", {Tensor::zeros(DType::kF32, {2, 2})}, {{"dtype", int64_t{7}}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dtype(), DType::kI64);
  EXPECT_EQ(values<int64_t>(*b), (Ints{1, 0, 0, 1}));
  EXPECT_FALSE(run1("EyeLike", {Tensor::zeros(DType::kF32, {2})}));
}

}  // namespace
}  // namespace hone::shape_test

namespace hone::shape_test {
namespace {

TEST(ShapeEmpty, ZeroSizedTensorsPassThrough) {
  const Tensor e = Tensor::zeros(DType::kF32, {2, 0, 3});
  auto tr = run1("Transpose", {e});
  ASSERT_TRUE(tr);
  EXPECT_EQ(tr->shape(), (Ints{3, 0, 2}));
  auto sl = run1("Slice", {e, i64({0}), i64({1}), i64({0})});
  ASSERT_TRUE(sl);
  EXPECT_EQ(sl->shape(), (Ints{1, 0, 3}));
  auto tl = run1("Trilu", {e});
  ASSERT_TRUE(tl);
  EXPECT_EQ(tl->shape(), (Ints{2, 0, 3}));
  // Constant padding of an empty axis fills it with the value.
  auto pd = run1("Pad", {e, i64({0, 1, 0, 0, 0, 0}), Tensor::scalar<float>(4.0f)});
  ASSERT_TRUE(pd) << pd.error().to_string();
  EXPECT_EQ(pd->shape(), (Ints{2, 1, 3}));
  EXPECT_EQ(values<float>(*pd), Floats(6, 4.0f));
  EXPECT_FALSE(run1("Pad", {e, i64({0, 1, 0, 0, 0, 0})}, {{"mode", std::string("edge")}}));
}

}  // namespace
}  // namespace hone::shape_test
