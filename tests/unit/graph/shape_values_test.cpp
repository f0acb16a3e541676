// Shapes whose operand is computed from dims (passes/shape_values.h): the
// values of Shape -> Gather -> Mul -> Concat lists flow as numbers, symbols
// and expressions, so a Reshape's, Expand's, Slice's or ConstantOfShape's
// output has a rank and dims, and equal derived dims compare equal.
#include <gtest/gtest.h>

#include <random>

#include "hone/graph_builder.h"
#include "hone/passes.h"
#include "passes/shape_propagation.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::same_outputs;
using passes_test::uniform;

std::string shape_of(const Graph& g, ValueId v) {
  return g.value(v).shape ? g.value(v).shape->to_string() : "none";
}

ValueId ints(GraphBuilder& b, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return b.constant("", Tensor::from<int64_t>({n}, v));
}

ValueId scalar(GraphBuilder& b, int64_t v) {
  return b.constant("", Tensor::scalar<int64_t>(v));
}

/// Unsqueeze(Gather(Shape(x), k)): dim k of x as a one-entry list, the exporters' way.
ValueId dim_of(GraphBuilder& b, ValueId x, int64_t k) {
  return b.op("Unsqueeze", {b.op("Gather", {b.op("Shape", {x}), scalar(b, k)}), ints(b, {0})});
}

TEST(ShapeValues, ComputedReshapeTargetsGiveRankAndDerivedDims) {
  GraphBuilder b("views");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("b"), Dim::symbol("H"), 7, 16});
  // x.view(b, H * 7, 16) twice, the product taken in either order.
  ValueId hw = b.op("Mul", {dim_of(b, x, 1), dim_of(b, x, 2)});
  ValueId wh = b.op("Mul", {dim_of(b, x, 2), dim_of(b, x, 1)});
  ValueId v1 = b.op("Reshape", {x, b.concat({dim_of(b, x, 0), hw, ints(b, {16})}, 0)});
  ValueId v2 = b.op("Reshape", {x, b.concat({dim_of(b, x, 0), wh, ints(b, {-1})}, 0)});
  ValueId sum = b.op("Add", {v1, v2});
  // x.view(b, -1, 4, 4): the -1 divides the element count exactly.
  ValueId heads = b.op("Reshape", {x, b.concat({dim_of(b, x, 0), ints(b, {-1, 4, 4})}, 0)});
  // A target whose entry nobody knows still gives the rank.
  ValueId y = b.input("y", DType::kF32, Shape{Dim(), 8});
  ValueId opaque = b.op("Reshape", {y, b.concat({dim_of(b, y, 0), ints(b, {2, 4})}, 0)});
  for (ValueId v : {sum, heads, opaque}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, v1), "[b,(7*H),16]");
  EXPECT_EQ(shape_of(*g, v2), "[b,(7*H),16]");
  EXPECT_EQ(shape_of(*g, sum), "[b,(7*H),16]");
  EXPECT_EQ(shape_of(*g, heads), "[b,(7*H),4,4]");
  EXPECT_EQ(shape_of(*g, opaque), "[?,2,4]");
}

TEST(ShapeValues, ExpandWithMinusOnesKeepsTheBatch) {
  // torch's cls_token.expand(B, -1, -1): Where(Equal(shape, -1), 1, shape).
  GraphBuilder b("cls");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 196, 192});
  ValueId cls = b.constant("cls", Tensor::zeros(DType::kF32, {1, 1, 192}));
  ValueId shape = b.concat({dim_of(b, x, 0), ints(b, {-1, -1})}, 0);
  ValueId minus = b.op("Equal", {shape, ints(b, {-1, -1, -1})});
  ValueId target = b.op("Where", {minus, ints(b, {1, 1, 1}), shape});
  ValueId tokens = b.concat({b.op("Expand", {cls, target}), x}, 1);
  b.output(tokens);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, tokens), "[batch,197,192]");
}

TEST(ShapeValues, SlicesRangesAndFilledTensorsOfComputedLengths) {
  GraphBuilder b("mask");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  // gpt2's causal mask: bias[:, :, :seq, :seq] of a [1, 1, 256, 256] table.
  ValueId table = b.constant("bias", Tensor::zeros(DType::kBool, {1, 1, 256, 256}));
  ValueId seq = dim_of(b, x, 1);
  ValueId rows = b.op("Slice", {table, ints(b, {0}), seq, ints(b, {2}), ints(b, {1})});
  ValueId mask = b.op("Slice", {rows, ints(b, {0}), seq, ints(b, {3}), ints(b, {1})});
  ValueId zeros = b.op("ConstantOfShape", {b.op("Shape", {x})});
  ValueId twice = b.op("Mul", {b.op("Gather", {b.op("Shape", {x}), scalar(b, 1)}), scalar(b, 2)});
  ValueId range = b.op("Range", {scalar(b, 0), twice, scalar(b, 1)});
  ValueId tiled = b.op("Tile", {x, b.concat({ints(b, {1}), seq, ints(b, {1})}, 0)});
  for (ValueId v : {mask, zeros, range, tiled}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, mask), "[1,1,seq,seq]");
  EXPECT_EQ(shape_of(*g, zeros), "[batch,seq,8]");
  EXPECT_EQ(g->value(zeros).dtype, DType::kF32);
  EXPECT_EQ(shape_of(*g, range), "[(2*seq)]");
  EXPECT_EQ(shape_of(*g, tiled), "[batch,(seq*seq),8]");
}

TEST(ShapeValues, ResizeToAnotherTensorsSizeOrByWholeScales) {
  // An FPN's upsample to the lateral's size: sizes = x's [N, C] and y's [H, W].
  GraphBuilder b("fpn");
  const Dim batch = Dim::symbol("batch");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 8, Dim::symbol("h"), Dim::symbol("w")});
  ValueId y = b.input("y", DType::kF32, Shape{batch, 8, 16, 16});
  auto part = [&](ValueId v, int64_t from, int64_t to) {
    return b.op("Slice", {b.op("Shape", {v}), ints(b, {from}), ints(b, {to})});
  };
  ValueId sizes = b.concat({part(x, 0, 2), part(y, 2, 4)}, 0);
  ValueId up = b.op("Resize", {x, kNoValue, kNoValue, sizes}, {{"mode", std::string("nearest")}});
  ValueId sum = b.op("Add", {up, y});
  ValueId scales = b.constant("", Tensor::from<float>({4}, {1.0f, 1.0f, 2.0f, 2.0f}));
  ValueId twice = b.op("Resize", {x, kNoValue, scales}, {{"mode", std::string("nearest")}});
  for (ValueId v : {sum, twice}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, up), "[batch,8,16,16]");
  EXPECT_EQ(shape_of(*g, sum), "[batch,8,16,16]");
  EXPECT_EQ(shape_of(*g, twice), "[batch,8,(2*h),(2*w)]");
}

TEST(ShapeValues, DerivedTargetsFoldToConstantsThatComputeTheSame) {
  GraphBuilder b("fold");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("b"), Dim::symbol("H"), 3, 4});
  ValueId hw = b.op("Mul", {dim_of(b, x, 1), dim_of(b, x, 2)});
  b.output(b.op("Reshape", {x, b.concat({dim_of(b, x, 0), hw, ints(b, {4})}, 0)}), "tokens");
  const Graph g = *std::move(b).build();
  PassStats st;
  auto out = fold_reshape_targets(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 1);
  for (const Node& n : out->nodes()) {
    if (n.op_type != "Reshape") continue;
    ASSERT_TRUE(out->value(n.inputs[1]).initializer);
    const Tensor& t = *out->value(n.inputs[1]).initializer;
    EXPECT_EQ(std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel()),
              (std::vector<int64_t>{0, -1, 4}));
    EXPECT_EQ(shape_of(*out, n.outputs[0]), "[b,(3*H),4]");
  }
  std::mt19937 rng(28);
  for (int64_t h : {1, 5}) {
    const std::vector<Tensor> in{uniform(rng, {2, h, 3, 4})};
    EXPECT_TRUE(same_outputs(g, *out, in, 0.0, /*bitwise=*/true)) << h;
  }
}

}  // namespace
}  // namespace hone
