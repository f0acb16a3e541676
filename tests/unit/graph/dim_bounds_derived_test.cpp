// passes::derive_dim_bounds on the dims a graph implies beyond its shape
// subgraphs: an If's outputs (the most over its branches), a TopK whose K
// folds to a constant only after the shape pass named its length, and
// expressions of bounded symbols (interval arithmetic).
#include <gtest/gtest.h>

#include <limits>
#include <memory>

#include "graph/body_test_util.h"
#include "ops/nonzero.h"
#include "ops/run_length.h"
#include "passes/dim_bounds.h"
#include "passes/shape_propagation.h"

namespace hone::passes {
namespace {

using body_test::add_if;
using body_test::captured;

ValueId ints(Graph& g, const std::string& name, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return g.add_initializer(name, Tensor::from<int64_t>({n}, std::move(v)));
}

/// torchvision's guard of batched NMS, `n` boxes: If(cond, then: an empty
/// i64[0], else: the indices NMS keeps), its output named "unk__1" as ONNX
/// shape inference names a dim the branches disagree on; then the first k of
/// them (a Slice of a run-time length, named "top").
Graph nms_guard() {
  Graph then_g("then");
  const ValueId empty =
      then_g.add_node("Constant", {}, 1, {{"value", Tensor::from<int64_t>({0}, {})}}, "empty")[0];
  then_g.add_output(empty);
  Graph else_g("else");
  const ValueId boxes = captured(else_g, "boxes");
  const ValueId scores = captured(else_g, "scores");
  const ValueId sel = else_g.add_node("NonMaxSuppression", {boxes, scores}, 1, {}, "nms")[0];
  else_g.value(sel).name = "selected";
  const ValueId col =
      else_g.add_node("Gather", {sel, ints(else_g, "two", {2})}, 1, {{"axis", int64_t{1}}})[0];
  const ValueId keep = else_g.add_node("Squeeze", {col, ints(else_g, "one", {1})}, 1)[0];
  else_g.add_output(keep);

  Graph g("guard");
  const Dim n = Dim::symbol("n");
  g.add_input("boxes", DType::kF32, Shape{1, n, 4});
  g.add_input("scores", DType::kF32, Shape{1, 1, n});
  const ValueId cond = g.add_input("cond", DType::kBool, Shape(std::vector<Dim>{}));
  const ValueId k = g.add_input("k", DType::kI64, Shape{1});
  const ValueId kept = add_if(g, cond, std::move(then_g), std::move(else_g), "guard");
  g.value(kept).dtype = DType::kI64;
  g.value(kept).shape = Shape{Dim::symbol("unk__1")};
  const ValueId top = g.add_node("Slice", {kept, ints(g, "zero", {0}), k}, 1, {}, "top")[0];
  g.value(top).name = "top";
  g.add_output(top);
  propagate_shapes(g);
  return g;
}

TEST(DimBounds, AnIfsOutputDimIsTheMostOverItsBranches) {
  // then: 0 rows; else: NMS' count, at most the scores' 1 * 1 * n elements.
  // What reads the If (the Slice's run-time length) is bounded through it.
  const Graph g = nms_guard();
  const Value& top = g.value(g.outputs()[0]);
  ASSERT_TRUE(top.shape);
  const Dim len = ops::slice_length("top", 0);
  ASSERT_EQ(*top.shape, Shape{len});
  const auto b = derive_dim_bounds(g, {{"n", 7}});
  ASSERT_TRUE(b.contains("unk__1"));
  EXPECT_EQ(b.at("unk__1"), 7);
  EXPECT_EQ(b.at(ops::nonzero_length("selected").symbol_name()), 7);  // the body's own
  ASSERT_TRUE(b.contains(len.symbol_name()));
  EXPECT_EQ(b.at(len.symbol_name()), 7);
  EXPECT_EQ(derive_dim_bounds(g, {{"n", 300}}).at("unk__1"), 300);
}

TEST(DimBounds, AnIfWhoseBranchHasNoBoundLeavesItsDimAbsent) {
  // Without n's bound the else branch's count has none, nor has the If's dim:
  // the then branch's 0 is no bound of it.
  const Graph g = nms_guard();
  const auto b = derive_dim_bounds(g, {});
  EXPECT_FALSE(b.contains("unk__1"));
  EXPECT_FALSE(b.contains(ops::slice_length("top", 0).symbol_name()));
}

TEST(DimBounds, AnIfOfAFoldedConditionWhoseBranchesDifferInRankTakesItsBranch) {
  // The exporter's x.squeeze(1) of a dim it cannot see is 1: If(dim == 1,
  // then: Squeeze, else: Identity), [n] or [n, 1]; the dim is 1, so the
  // condition folds and its branch's [n] is the If's.
  Graph then_g("then");
  const ValueId x1 = captured(then_g, "x");
  then_g.add_output(then_g.add_node("Squeeze", {x1, ints(then_g, "axis", {1})}, 1)[0]);
  Graph else_g("else");
  else_g.add_output(else_g.add_node("Identity", {captured(else_g, "x")}, 1)[0]);
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("n"), 1});
  const ValueId shape = g.add_node("Shape", {x}, 1)[0];
  const ValueId w =
      g.add_node("Gather", {shape, ints(g, "at1", {1})}, 1, {{"axis", int64_t{0}}})[0];
  const ValueId cond = g.add_node("Equal", {w, ints(g, "one", {1})}, 1)[0];
  const ValueId flat = g.add_node("Squeeze", {cond, ints(g, "at0", {0})}, 1)[0];
  const ValueId y = add_if(g, flat, std::move(then_g), std::move(else_g), "squeeze");
  g.value(y).dtype = DType::kF32;
  g.value(y).shape = Shape{Dim::symbol("unk__2")};
  g.add_output(y);
  propagate_shapes(g);
  const auto b = derive_dim_bounds(g, {{"n", 9}});
  ASSERT_TRUE(b.contains("unk__2"));
  EXPECT_EQ(b.at("unk__2"), 9);
}

TEST(DimBounds, ATopKWhoseKFoldsLaterIsBoundByItsAxis) {
  // K = min(10, x's width), as torchvision writes it: not a constant when the
  // shape pass names the TopK's length, one once the shapes fold. The length
  // is still at most the axis' 50, and a NonZero of the values at most that.
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{1, 50});
  const ValueId shape = g.add_node("Shape", {x}, 1)[0];
  const ValueId w =
      g.add_node("Gather", {shape, ints(g, "at1", {1})}, 1, {{"axis", int64_t{0}}})[0];
  const ValueId both =
      g.add_node("Concat", {ints(g, "ten", {10}), w}, 1, {{"axis", int64_t{0}}})[0];
  const ValueId k = g.add_node("ReduceMin", {both}, 1, {{"keepdims", int64_t{1}}})[0];
  const auto top = g.add_node("TopK", {x, k}, 2, {{"axis", int64_t{1}}}, "top");
  g.value(top[0]).name = "/rpn/TopK_output_0";
  const ValueId nz = g.add_node("NonZero", {top[0]}, 1, {}, "nz")[0];
  g.value(nz).name = "nz_out";
  g.add_output(top[1]);
  g.add_output(nz);
  propagate_shapes(g);
  const Dim len = ops::topk_length("/rpn/TopK_output_0");
  ASSERT_TRUE(g.value(top[0]).shape);
  ASSERT_EQ(*g.value(top[0]).shape, (Shape{1, len}));
  const auto b = derive_dim_bounds(g, {});
  ASSERT_TRUE(b.contains(len.symbol_name()));
  EXPECT_EQ(b.at(len.symbol_name()), 50);
  ASSERT_TRUE(b.contains("nonzero_nz_out"));
  EXPECT_EQ(b.at("nonzero_nz_out"), 50);
}

TEST(DimBounds, ADifferenceOfBoundedSymbolsIsBoundByItsRange) {
  // x[:, 1:] of NonZero's [2, count] is [2, (count-1)]: at most 23 where the
  // count is at most 24, so a NonZero of it at most 2 * 23.
  Graph g("g");
  const ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), 8});
  const ValueId nz = g.add_node("NonZero", {x}, 1, {}, "nz")[0];
  g.value(nz).name = "nz_out";
  const ValueId rest =
      g.add_node("Slice",
                 {nz, ints(g, "from", {1}), ints(g, "to", {std::numeric_limits<int64_t>::max()}),
                  ints(g, "axes", {1})},
                 1, {}, "rest")[0];
  const ValueId nz2 = g.add_node("NonZero", {rest}, 1, {}, "nz2")[0];
  g.value(nz2).name = "nz2_out";
  g.add_output(nz2);
  propagate_shapes(g);
  ASSERT_TRUE(g.value(rest).shape);
  const Dim less = Dim::symbol("(" + ops::nonzero_length("nz_out").symbol_name() + "-1)");
  ASSERT_EQ(*g.value(rest).shape, (Shape{2, less}));
  const auto b = derive_dim_bounds(g, {{"batch", 3}});
  EXPECT_EQ(b.at("nonzero_nz_out"), 24);
  ASSERT_TRUE(b.contains("nonzero_nz2_out"));
  EXPECT_EQ(b.at("nonzero_nz2_out"), 46);
}

}  // namespace
}  // namespace hone::passes
