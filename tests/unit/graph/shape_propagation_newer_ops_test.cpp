// Shape propagation over the ops of opsets 18-26 (Attention's four outputs,
// the same-shape ones, and those whose shape comes from constant inputs).
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

std::string shape_of(const Graph& g, ValueId v) {
  return g.value(v).shape ? g.value(v).shape->to_string() : "none";
}

TEST(ShapePropagationNewerOps, AttentionOutputs) {
  GraphBuilder b("attention", 23);
  const Dim batch = Dim::symbol("b");
  auto q = b.input("q", DType::kF32, {batch, 3, 32});
  auto kv = b.input("kv", DType::kF32, {batch, 3, 16});
  auto past = b.input("past", DType::kF32, {batch, 2, 5, 8});
  auto outs = b.op_n("Attention", {q, kv, kv, kNoValue, past, past}, 4,
                     {{"q_num_heads", int64_t{4}}, {"kv_num_heads", int64_t{2}}});
  auto q4 = b.input("q4", DType::kF32, {batch, 6, 7, 8});
  auto k4 = b.input("k4", DType::kF32, {batch, 2, 9, 8});
  auto v4 = b.input("v4", DType::kF32, {batch, 2, 9, 5});
  auto y4 = b.op("Attention", {q4, k4, v4});
  for (size_t i = 0; i < outs.size(); ++i) b.output(outs[i], "o" + std::to_string(i));
  b.output(y4, "y4");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, outs[0]), "[b,3,32]");
  EXPECT_EQ(shape_of(*g, outs[1]), "[b,2,8,8]");
  EXPECT_EQ(shape_of(*g, outs[2]), "[b,2,8,8]");
  EXPECT_EQ(shape_of(*g, outs[3]), "[b,4,3,8]");
  EXPECT_EQ(shape_of(*g, y4), "[b,6,7,5]");
}

TEST(ShapePropagationNewerOps, ConstantDrivenAndSameShapeOps) {
  GraphBuilder b("misc", 26);
  auto x = b.input("x", DType::kF32, {Dim::symbol("n"), 2, 6, 6});
  auto w = b.input("w", DType::kF32, {3, 2, 3, 3});
  auto off = b.input("off", DType::kF32, {Dim::symbol("n"), 18, 4, 4});
  auto dc = b.op("DeformConv", {x, w, off});
  auto col = b.input("col", DType::kF32, {1, 8, 16});
  auto ci = b.op("Col2Im", {col, b.constant("img", i64s({5, 5})), b.constant("blk", i64s({2, 2}))});
  auto theta = b.input("theta", DType::kF32, {2, 3, 4});
  auto ag = b.op("AffineGrid", {theta, b.constant("size", i64s({2, 1, 3, 4, 5}))});
  auto cc = b.op("CenterCropPad", {x, b.constant("target", i64s({3, 9}))},
                 {{"axes", std::vector<int64_t>{-2, -1}}});
  auto sw = b.op("Swish", {x}, {{"alpha", 1.5f}});
  auto cp = b.op("CumProd", {x, b.constant("axis", Tensor::scalar(int64_t{1}))});
  for (ValueId v : {dc, ci, ag, cc, sw, cp}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, dc), "[n,3,4,4]");
  EXPECT_EQ(shape_of(*g, ci), "[1,2,5,5]");
  EXPECT_EQ(shape_of(*g, ag), "[2,3,4,5,3]");
  EXPECT_EQ(shape_of(*g, cc), "[n,2,3,9]");
  EXPECT_EQ(shape_of(*g, sw), "[n,2,6,6]");
  EXPECT_EQ(shape_of(*g, cp), "[n,2,6,6]");
}

}  // namespace
}  // namespace hone
