// Reshape, Flatten, Transpose, Squeeze/Unsqueeze, Concat, Split, Shape, Size,
// Expand, Tile, Constant, ConstantOfShape, Range.
#include <gtest/gtest.h>

#include "shape_test_util.h"

namespace hone::shape_test {
namespace {

TEST(ShapeReshape, CopiesZeroAndInfersMinusOne) {
  auto y = run1("Reshape", {iota_f32({2, 3, 4}), i64({0, -1, 2})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (Ints{2, 6, 2}));
  EXPECT_EQ(values<float>(*y)[23], 23.0f);
}

TEST(ShapeReshape, AllowZeroKeepsZeroDim) {
  auto y = run1("Reshape", {Tensor::zeros(DType::kF32, {0, 3}), i64({3, 0})},
                {{"allowzero", int64_t{1}}});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (Ints{3, 0}));
  // 0 with -1 under allowzero is ambiguous.
  EXPECT_TRUE(fails_with(run1("Reshape", {Tensor::zeros(DType::kF32, {0, 3}), i64({0, -1})},
                              {{"allowzero", int64_t{1}}}),
                         "allowzero"));
}

TEST(ShapeReshape, Errors) {
  EXPECT_TRUE(fails_with(run1("Reshape", {iota_f32({2, 3}), i64({4, 2})}), "element count"));
  EXPECT_TRUE(fails_with(run1("Reshape", {iota_f32({2, 3}), i64({-1, -1})}), "more than one -1"));
  EXPECT_TRUE(fails_with(run1("Reshape", {iota_f32({6}), i64({4, -1})}), "cannot infer"));
  EXPECT_TRUE(fails_with(run1("Reshape", {iota_f32({6}), i64({6, 0})}), "rank 1"));
}

TEST(ShapeReshape, Opset1UsesShapeAttribute) {
  auto y = run1("Reshape", {iota_f32({2, 3})}, {{"shape", Ints{3, 2}}}, 4);
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (Ints{3, 2}));
}

TEST(ShapeFlatten, AxisZeroNegativeAndRank) {
  auto a = run1("Flatten", {iota_f32({2, 3, 4})}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->shape(), (Ints{1, 24}));
  auto b = run1("Flatten", {iota_f32({2, 3, 4})}, {{"axis", int64_t{-1}}});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape(), (Ints{6, 4}));
  auto c = run1("Flatten", {iota_f32({2, 3, 4})}, {{"axis", int64_t{3}}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->shape(), (Ints{24, 1}));
  EXPECT_TRUE(
      fails_with(run1("Flatten", {iota_f32({2, 3})}, {{"axis", int64_t{3}}}), "out of range"));
}

TEST(ShapeTranspose, DefaultReversesAndPermWorks) {
  auto y = run1("Transpose", {iota_f32({2, 3})});
  ASSERT_TRUE(y);
  EXPECT_EQ(y->shape(), (Ints{3, 2}));
  EXPECT_EQ(values<float>(*y), (Floats{0, 3, 1, 4, 2, 5}));
  auto z = run1("Transpose", {iota_f32({2, 3, 2})}, {{"perm", Ints{1, 0, 2}}});
  ASSERT_TRUE(z);
  EXPECT_EQ(z->shape(), (Ints{3, 2, 2}));
  EXPECT_EQ(values<float>(*z), (Floats{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11}));
  EXPECT_TRUE(fails_with(run1("Transpose", {iota_f32({2, 3})}, {{"perm", Ints{0, 0}}}), "twice"));
}

TEST(ShapeTranspose, WorksOnBoolAndHalf) {
  auto y = run1("Transpose", {t<bool>({2, 2}, {true, false, false, false})});
  ASSERT_TRUE(y);
  EXPECT_EQ(values<bool>(*y), (std::vector<bool>{true, false, false, false}));
  Tensor h = Tensor::zeros(DType::kF16, {1, 2});
  h.data<Half>()[1] = Half::from_float(2.5f);
  auto z = run1("Transpose", {h});
  ASSERT_TRUE(z);
  EXPECT_EQ(z->data<Half>()[1].to_float(), 2.5f);
}

TEST(ShapeTranspose, LargeCopiesOnThePoolMatchElementByElement) {
  // 3 MiB of f32, above the size where rows are split over the pool's threads.
  const Tensor x = iota_f32({24, 128, 256});
  auto y = run1("Transpose", {x}, {{"perm", Ints{2, 0, 1}}});
  ASSERT_TRUE(y);
  ASSERT_EQ(y->shape(), (Ints{256, 24, 128}));
  const float* yp = y->data<float>();
  for (int64_t c = 0; c < 256; ++c)
    for (int64_t a = 0; a < 24; ++a)
      for (int64_t b = 0; b < 128; ++b)
        ASSERT_EQ(yp[(c * 24 + a) * 128 + b], static_cast<float>((a * 128 + b) * 256 + c))
            << c << "," << a << "," << b;
  auto r = run1("Reshape", {x, i64({-1, 256})});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->shape(), (Ints{3072, 256}));
  EXPECT_TRUE(r->bitwise_equal(*x.reshaped({3072, 256})));
}

TEST(ShapeSqueeze, AllOnesOrGivenAxes) {
  auto a = run1("Squeeze", {iota_f32({1, 3, 1, 2})});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->shape(), (Ints{3, 2}));
  auto b = run1("Squeeze", {iota_f32({1, 3, 1, 2}), i64({-2})});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape(), (Ints{1, 3, 2}));
  auto c = run1("Squeeze", {iota_f32({1, 3})}, {{"axes", Ints{0}}}, 11);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->shape(), (Ints{3}));
  EXPECT_TRUE(fails_with(run1("Squeeze", {iota_f32({1, 3}), i64({1})}), "not 1"));
}

TEST(ShapeUnsqueeze, NegativeAxesCountInOutputRank) {
  auto a = run1("Unsqueeze", {iota_f32({3, 4}), i64({0, -1})});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->shape(), (Ints{1, 3, 4, 1}));
  auto b = run1("Unsqueeze", {Tensor::scalar<float>(2.0f), i64({0})});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->shape(), (Ints{1}));
  auto c = run1("Unsqueeze", {iota_f32({3})}, {{"axes", Ints{1, 0}}}, 11);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->shape(), (Ints{1, 1, 3}));
  EXPECT_TRUE(fails_with(run1("Unsqueeze", {iota_f32({3}), i64({0, 0})}), "twice"));
  EXPECT_TRUE(fails_with(run1("Unsqueeze", {iota_f32({3}), i64({3})}), "out of range"));
}

TEST(ShapeConcat, MiddleAxisAndEmptyInput) {
  auto y =
      run1("Concat",
           {iota_f32({2, 1}), f32({2, 2}, {10, 11, 12, 13}), Tensor::zeros(DType::kF32, {2, 0})},
           {{"axis", int64_t{-1}}});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (Ints{2, 3}));
  EXPECT_EQ(values<float>(*y), (Floats{0, 10, 11, 1, 12, 13}));
  EXPECT_TRUE(fails_with(
      run1("Concat", {iota_f32({2, 1}), iota_f32({3, 1})}, {{"axis", int64_t{1}}}), "differs"));
}

TEST(ShapeSplit, SizesInputEqualAndUneven) {
  auto a = run("Split", {iota_f32({5}), i64({2, 3})}, {}, 2);
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(values<float>((*a)[0]), (Floats{0, 1}));
  EXPECT_EQ(values<float>((*a)[1]), (Floats{2, 3, 4}));
  auto b = run("Split", {iota_f32({2, 4})}, {{"axis", int64_t{1}}}, 2);
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>((*b)[1]), (Floats{2, 3, 6, 7}));
  auto c = run("Split", {iota_f32({7})}, {{"num_outputs", int64_t{3}}}, 3, 18);
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ((*c)[0].shape(), (Ints{3}));
  EXPECT_EQ(values<float>((*c)[2]), (Floats{6}));
  auto d = run("Split", {iota_f32({4})}, {{"split", Ints{1, 3}}}, 2, 11);
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)[1].shape(), (Ints{3}));
  EXPECT_FALSE(run("Split", {iota_f32({5}), i64({2, 2})}, {}, 2));
}

TEST(ShapeShapeAndSize, StartEndClamp) {
  auto s = run1("Shape", {iota_f32({2, 3, 4})}, {{"start", int64_t{-2}}, {"end", int64_t{10}}});
  ASSERT_TRUE(s);
  EXPECT_EQ(values<int64_t>(*s), (Ints{3, 4}));
  auto full = run1("Shape", {Tensor::scalar<float>(1.0f)});
  ASSERT_TRUE(full);
  EXPECT_EQ(full->shape(), (Ints{0}));
  auto n = run1("Size", {iota_f32({2, 3, 4})});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->rank(), 0u);
  EXPECT_EQ(n->data<int64_t>()[0], 24);
}

TEST(ShapeExpand, BidirectionalBroadcast) {
  auto y = run1("Expand", {f32({3, 1}, {1, 2, 3}), i64({2, 1, 2})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (Ints{2, 3, 2}));
  EXPECT_EQ(values<float>(*y), (Floats{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // A shape smaller than the input keeps the input dims.
  auto z = run1("Expand", {iota_f32({2, 3}), i64({3})});
  ASSERT_TRUE(z);
  EXPECT_EQ(z->shape(), (Ints{2, 3}));
  EXPECT_TRUE(fails_with(run1("Expand", {iota_f32({2, 3}), i64({4})}), "broadcast"));
  EXPECT_FALSE(run1("Expand", {iota_f32({1}), i64({int64_t{1} << 40, int64_t{1} << 40})}));
}

TEST(ShapeTile, RepeatsEachAxis) {
  auto y = run1("Tile", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 3})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (Ints{4, 6}));
  EXPECT_EQ(values<float>(*y),
            (Floats{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  auto e = run1("Tile", {f32({2}, {1, 2}), i64({0})});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->shape(), (Ints{0}));
  EXPECT_TRUE(fails_with(run1("Tile", {f32({2}, {1, 2}), i64({-1})}), "negative"));
  EXPECT_TRUE(fails_with(run1("Tile", {f32({2}, {1, 2}), i64({1, 1})}), "one entry per axis"));
}

TEST(ShapeConstant, AllValueForms) {
  auto a = run1("Constant", {}, {{"value", f32({2}, {1.5f, 2.5f})}});
  ASSERT_TRUE(a);
  EXPECT_EQ(values<float>(*a), (Floats{1.5f, 2.5f}));
  auto b = run1("Constant", {}, {{"value_ints", Ints{4, 5, 6}}});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<int64_t>(*b), (Ints{4, 5, 6}));
  auto c = run1("Constant", {}, {{"value_float", 3.0f}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rank(), 0u);
  EXPECT_EQ(c->data<float>()[0], 3.0f);
  EXPECT_FALSE(run1("Constant", {}));
}

TEST(ShapeConstantOfShape, DefaultAndValue) {
  auto a = run1("ConstantOfShape", {i64({2, 3})});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dtype(), DType::kF32);
  EXPECT_EQ(values<float>(*a), Floats(6, 0.0f));
  auto b = run1("ConstantOfShape", {i64({2})}, {{"value", Tensor::from<int32_t>({1}, {7})}});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<int32_t>(*b), (std::vector<int32_t>{7, 7}));
  auto s = run1("ConstantOfShape", {i64({})});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank(), 0u);
  EXPECT_FALSE(run1("ConstantOfShape", {i64({-1})}));
  EXPECT_FALSE(run1("ConstantOfShape", {i64({int64_t{1} << 40, int64_t{1} << 40})}));
}

TEST(ShapeRange, IntegerAndFloat) {
  auto a = run1("Range", {Tensor::scalar<int64_t>(10), Tensor::scalar<int64_t>(0),
                          Tensor::scalar<int64_t>(-3)});
  ASSERT_TRUE(a);
  EXPECT_EQ(values<int64_t>(*a), (Ints{10, 7, 4, 1}));
  auto b = run1("Range", {Tensor::scalar<float>(1.0f), Tensor::scalar<float>(2.0f),
                          Tensor::scalar<float>(0.25f)});
  ASSERT_TRUE(b);
  EXPECT_EQ(values<float>(*b), (Floats{1.0f, 1.25f, 1.5f, 1.75f}));
  auto e = run1("Range", {Tensor::scalar<int32_t>(5), Tensor::scalar<int32_t>(1),
                          Tensor::scalar<int32_t>(2)});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->numel(), 0);
  EXPECT_FALSE(run1("Range", {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(1),
                              Tensor::scalar<int64_t>(0)}));
  EXPECT_FALSE(run1("Range", {Tensor::scalar<float>(0), Tensor::scalar<float>(1e30f),
                              Tensor::scalar<float>(1e-30f)}));
}

}  // namespace
}  // namespace hone::shape_test
