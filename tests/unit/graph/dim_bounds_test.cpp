#include "passes/dim_bounds.h"

#include <gtest/gtest.h>

#include "ops/nonzero.h"
#include "ops/run_length.h"
#include "passes/shape_propagation.h"

namespace hone::passes {
namespace {

/// x: [batch, 8] reshaped to [2 * batch, 4] through Shape → Gather → Mul →
/// Concat, the way exporters write it; the importer named the result's first
/// dim "unk__1", as ONNX shape inference does when it cannot work a dim out.
Graph reshape_by_shape_subgraph() {
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), 8});
  const ValueId shape = g.add_node("Shape", {x}, 1, {}, "shape")[0];
  const ValueId zero = g.add_initializer("zero", Tensor::from<int64_t>({1}, {0}));
  const ValueId b = g.add_node("Gather", {shape, zero}, 1, {{"axis", int64_t{0}}}, "gather")[0];
  const ValueId two = g.add_initializer("two", Tensor::from<int64_t>({1}, {2}));
  const ValueId rows = g.add_node("Mul", {b, two}, 1, {}, "rows")[0];
  const ValueId four = g.add_initializer("four", Tensor::from<int64_t>({1}, {4}));
  const ValueId target = g.add_node("Concat", {rows, four}, 1, {{"axis", int64_t{0}}}, "cat")[0];
  const ValueId y = g.add_node("Reshape", {x, target}, 1, {}, "reshape")[0];
  g.value(y).dtype = DType::kF32;
  g.value(y).shape = Shape{Dim::symbol("unk__1"), 4};
  const ValueId z = g.add_node("Relu", {y}, 1, {}, "relu")[0];
  g.value(z).dtype = DType::kF32;
  g.value(z).shape = Shape{Dim::symbol("unk__1"), 4};
  g.add_output(z);
  return g;
}

TEST(DimBounds, InnerDimsFollowFromTheInputBounds) {
  const Graph g = reshape_by_shape_subgraph();
  const auto b = derive_dim_bounds(g, {{"batch", 5}});
  EXPECT_EQ(b.at("batch"), 5);
  ASSERT_TRUE(b.contains("unk__1"));
  EXPECT_EQ(b.at("unk__1"), 10);
  // Larger inputs, larger bounds: nothing is a fixed default.
  EXPECT_EQ(derive_dim_bounds(g, {{"batch", 300}}).at("unk__1"), 600);
}

TEST(DimBounds, AnInputSymbolWithoutABoundLeavesWhatDependsOnItAbsent) {
  const Graph g = reshape_by_shape_subgraph();
  const auto b = derive_dim_bounds(g, {});
  EXPECT_FALSE(b.contains("unk__1"));
  EXPECT_FALSE(b.contains("batch"));
}

TEST(DimBounds, TheGraphIsLeftAsItWas) {
  const Graph g = reshape_by_shape_subgraph();
  (void)derive_dim_bounds(g, {{"batch", 5}});
  const Value& y = g.value(g.find_value("reshape_out0"));
  ASSERT_TRUE(y.shape.has_value());
  EXPECT_EQ((*y.shape)[0], Dim::symbol("unk__1"));
}

TEST(DimBounds, DerivedDimsTakeTheirValueAtTheBounds) {
  // A dim named by its expression (ops/sym_int.h) that no node folds to a
  // number here (the value has no producer): its value at the bounds.
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq")});
  const ValueId y = g.add_input("y", DType::kF32, Shape{Dim::symbol("(4*seq)")});
  const ValueId z = g.add_input("z", DType::kF32, Shape{Dim::symbol("(seq-1)")});
  g.add_output(x);
  g.add_output(y);
  g.add_output(z);
  const auto b = derive_dim_bounds(g, {{"batch", 2}, {"seq", 16}});
  EXPECT_EQ(b.at("(4*seq)"), 64);
  EXPECT_EQ(b.at("(seq-1)"), 15);  // a difference: the top of its range, seq - 1 at seq's most
}

TEST(DimBounds, NonZerosLengthIsNamedAndBoundByItsInputsElements) {
  // [rank, count]: the count a symbol of its own (ops/nonzero.h), at most the
  // input's element count at the bounds; what reads it carries the symbol.
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), 8});
  const ValueId nz = g.add_node("NonZero", {x}, 1, {}, "nz")[0];
  g.value(nz).name = "/mlp/NonZero_output_0";
  const ValueId perm =
      g.add_node("Transpose", {nz}, 1, {{"perm", std::vector<int64_t>{1, 0}}}, "perm")[0];
  g.add_output(perm);
  propagate_shapes(g);
  ASSERT_TRUE(g.value(nz).shape);
  const Dim len = ops::nonzero_length("/mlp/NonZero_output_0");
  EXPECT_EQ(len.symbol_name(), "nonzero__mlp_NonZero_output_0");
  EXPECT_EQ(*g.value(nz).shape, (Shape{2, len}));
  ASSERT_TRUE(g.value(perm).shape);
  EXPECT_EQ(*g.value(perm).shape, (Shape{len, 2}));
  const auto b = derive_dim_bounds(g, {{"batch", 3}});
  EXPECT_EQ(b.at(len.symbol_name()), 24);
}

TEST(DimBounds, NonMaxSuppressionsCountIsNamedAndBoundByItsScores) {
  // [count, 3]: the count a symbol as NonZero's (ops/nonzero.h, ops/nms.h), at
  // most one row per batch, class and box: the scores' element count.
  Graph g("g");
  const Dim boxes = Dim::symbol("boxes");
  const ValueId b = g.add_input("b", DType::kF32, Shape{1, boxes, 4});
  const ValueId s = g.add_input("s", DType::kF32, Shape{1, 3, boxes});
  const ValueId sel = g.add_node("NonMaxSuppression", {b, s}, 1, {}, "nms")[0];
  g.value(sel).name = "/det/NonMaxSuppression_output_0";
  g.add_output(sel);
  propagate_shapes(g);
  const Dim len = ops::nonzero_length("/det/NonMaxSuppression_output_0");
  ASSERT_TRUE(g.value(sel).shape);
  EXPECT_EQ(*g.value(sel).shape, (Shape{len, 3}));
  EXPECT_EQ(g.value(sel).dtype, DType::kI64);
  EXPECT_EQ(derive_dim_bounds(g, {{"boxes", 50}}).at(len.symbol_name()), 150);
}

TEST(DimBounds, RunTimeTopKAndWhatReadsItAreBoundFromTheirInputs) {
  // A TopK of a run-time K along NonZero's count: its length a symbol of its
  // own (ops/run_length.h), at most that count's bound; a NonZero of its
  // values at most their element count, from those bounds.
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), 8});
  const ValueId k = g.add_input("k", DType::kI64, Shape{1});
  const ValueId nz = g.add_node("NonZero", {x}, 1, {}, "nz")[0];
  g.value(nz).name = "nz_out";
  const ValueId f = g.add_node("Cast", {nz}, 1, {{"to", int64_t{1}}}, "f")[0];
  const auto top = g.add_node("TopK", {f, k}, 2, {{"axis", int64_t{1}}}, "top");
  g.value(top[0]).name = "/det/TopK_output_0";
  const ValueId nz2 = g.add_node("NonZero", {top[0]}, 1, {}, "nz2")[0];
  g.value(nz2).name = "nz2_out";
  g.add_output(top[1]);
  g.add_output(nz2);
  propagate_shapes(g);
  const Dim len = ops::topk_length("/det/TopK_output_0");
  EXPECT_EQ(len.symbol_name(), "topk__det_TopK_output_0");
  ASSERT_TRUE(g.value(top[0]).shape && g.value(top[1]).shape);
  EXPECT_EQ(*g.value(top[0]).shape, (Shape{2, len}));
  EXPECT_EQ(*g.value(top[1]).shape, (Shape{2, len}));
  EXPECT_EQ(g.value(top[1]).dtype, DType::kI64);
  const auto b = derive_dim_bounds(g, {{"batch", 3}});
  EXPECT_EQ(b.at("nonzero_nz_out"), 24);
  EXPECT_EQ(b.at(len.symbol_name()), 24);
  EXPECT_EQ(b.at("nonzero_nz2_out"), 48);
}

}  // namespace
}  // namespace hone::passes
