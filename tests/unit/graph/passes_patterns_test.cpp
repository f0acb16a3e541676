// LayerNorm and GELU recognition, element-wise chains and attention: the
// rewritten graphs keep their outputs on the reference, near-misses stay.
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

ValueId reduce_mean_last(GraphBuilder& b, ValueId x) {
  return b.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}});
}

/// LayerNorm over the last axis as torch.onnx writes it (opset 17).
ValueId decomposed_layer_norm(GraphBuilder& b, std::mt19937& rng, ValueId x, int64_t d, bool pow,
                              bool affine, float eps = 1e-5f) {
  ValueId dev = b.sub(x, reduce_mean_last(b, x));
  ValueId sq = pow ? b.op("Pow", {dev, b.scalar_f32("", 2.0f)}) : b.mul(dev, dev);
  ValueId std = b.op("Sqrt", {b.add(reduce_mean_last(b, sq), b.scalar_f32("", eps))});
  ValueId y = b.div(dev, std);
  if (!affine) return y;
  return b.add(b.mul(y, b.constant("", uniform(rng, {d}, 0.5f, 1.5f))),
               b.constant("", uniform(rng, {d})));
}

TEST(PassesLayerNorm, DecomposedFormsBecomeLayerNormalization) {
  std::mt19937 rng(11);
  GraphBuilder b("ln");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 16});
  ValueId y = decomposed_layer_norm(b, rng, x, 16, /*pow=*/true, /*affine=*/true);
  b.output(decomposed_layer_norm(b, rng, b.relu(y), 16, /*pow=*/false, /*affine=*/false, 1e-3f),
           "y");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_layer_norm(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 2);
  EXPECT_EQ(count_op(*out, "LayerNormalization"), 2u);
  EXPECT_EQ(out->nodes().size(), 3u);  // LN, Relu, LN
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 5, 16}, -3.0f, 3.0f)}));
}

TEST(PassesLayerNorm, NearMissesStay) {
  std::mt19937 rng(12);
  GraphBuilder b("ln_miss");
  ValueId x = b.input("x", DType::kF32, Shape{2, 4, 8});
  // Mean over axis 1: not the last axis.
  ValueId m = b.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{1}}});
  ValueId dev = b.sub(x, m);
  ValueId var = b.op("ReduceMean", {b.op("Pow", {dev, b.scalar_f32("", 2.0f)})},
                     {{"axes", std::vector<int64_t>{1}}});
  b.output(b.div(dev, b.op("Sqrt", {b.add(var, b.scalar_f32("", 1e-5f))})), "y1");
  // Last axis, but the deviation is also a graph output.
  ValueId dev2 = b.sub(x, reduce_mean_last(b, x));
  ValueId var2 = reduce_mean_last(b, b.mul(dev2, dev2));
  b.output(b.div(dev2, b.op("Sqrt", {b.add(var2, b.scalar_f32("", 1e-5f))})), "y2");
  b.output(dev2, "dev");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_layer_norm(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
  EXPECT_EQ(count_op(*out, "LayerNormalization"), 0u);
}

/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
ValueId tanh_gelu(GraphBuilder& b, ValueId x, bool pow) {
  ValueId cube = pow ? b.op("Pow", {x, b.scalar_f32("", 3.0f)}) : b.mul(x, b.mul(x, x));
  ValueId inner = b.add(x, b.mul(b.scalar_f32("", 0.044715f), cube));
  ValueId t =
      b.tanh(b.mul(inner, b.scalar_f32("", static_cast<float>(std::sqrt(2.0 / std::numbers::pi)))));
  return b.mul(b.mul(b.scalar_f32("", 0.5f), x), b.add(t, b.scalar_f32("", 1.0f)));
}

TEST(PassesGelu, ErfAndTanhFormsBecomeGelu) {
  std::mt19937 rng(13);
  GraphBuilder b("gelu");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 32});
  ValueId h = b.gelu(x);  // Div(sqrt2) - Erf - Add(1) - Mul(x) - Mul(0.5)
  // x * 0.7071 instead of / sqrt2, and 0.5 applied first.
  ValueId e = b.op("Erf", {b.mul(b.scalar_f32("", 0.70710678f), h)});
  ValueId h2 = b.mul(b.add(b.scalar_f32("", 1.0f), e), b.mul(h, b.scalar_f32("", 0.5f)));
  ValueId h3 = tanh_gelu(b, h2, /*pow=*/true);
  b.output(tanh_gelu(b, h3, /*pow=*/false), "y");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_gelu(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 4);
  ASSERT_EQ(out->nodes().size(), 4u);
  EXPECT_EQ(out->nodes()[0].attr_string("approximate", ""), "none");
  EXPECT_EQ(out->nodes()[1].attr_string("approximate", ""), "none");
  EXPECT_EQ(out->nodes()[2].attr_string("approximate", ""), "tanh");
  EXPECT_EQ(out->nodes()[3].attr_string("approximate", ""), "tanh");
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {3, 32}, -4.0f, 4.0f)}));
}

TEST(PassesGelu, WrongConstantsOrSharedIntermediatesStay) {
  GraphBuilder b("gelu_miss");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  // 0.6 instead of 0.5: another function.
  ValueId e = b.op("Erf", {b.div(x, b.scalar_f32("", 1.4142135f))});
  b.output(b.mul(b.mul(x, b.add(e, b.scalar_f32("", 1.0f))), b.scalar_f32("", 0.6f)), "y1");
  // The 1 + erf term is read twice.
  ValueId e2 = b.op("Erf", {b.div(x, b.scalar_f32("", 1.4142135f))});
  ValueId a2 = b.add(e2, b.scalar_f32("", 1.0f));
  b.output(b.mul(b.mul(x, a2), b.scalar_f32("", 0.5f)), "y2");
  b.output(a2, "a2");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_gelu(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
  EXPECT_EQ(count_op(*out, "Gelu"), 0u);
}

TEST(PassesAnalysis, ElementwiseChainsStopAtBranchesAndGrowingOperands) {
  std::mt19937 rng(14);
  GraphBuilder b("chains");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 8});
  ValueId big = b.input("big", DType::kF32, Shape{3, Dim::symbol("n"), 8});
  // x -> Mul(const) -> Add(const row) -> Sigmoid -> Mul(x) -> Tanh -> Relu: one chain of 6,
  // ended by Relu's two readers.
  ValueId c = b.mul(
      b.sigmoid(b.add(b.mul(x, b.scalar_f32("", 2.0f)), b.constant("", uniform(rng, {8})))), x);
  ValueId r = b.relu(b.tanh(c));
  // An Add with an operand larger than the chain value does not join it; Add -> Exp
  // after it is a chain of its own.
  b.output(b.op("Exp", {b.add(r, big)}), "grown");
  b.output(b.op("Neg", {r}), "e");
  Graph g = *std::move(b).build();
  const auto chains = find_elementwise_chains(g);
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(chains[0].nodes.size(), 6u);
  EXPECT_EQ(g.node(chains[0].nodes.back()).op_type, "Relu");
  ASSERT_EQ(chains[1].nodes.size(), 2u);
  EXPECT_EQ(g.node(chains[1].nodes[0]).op_type, "Add");
}

TEST(PassesAnalysis, AttentionIsFoundWithScaleAndMask) {
  std::mt19937 rng(15);
  GraphBuilder b("attn");
  ValueId q = b.input("q", DType::kF32, Shape{2, Dim::symbol("seq"), 8});
  ValueId k = b.input("k", DType::kF32, Shape{2, Dim::symbol("seq"), 8});
  ValueId v = b.input("v", DType::kF32, Shape{2, Dim::symbol("seq"), 8});
  ValueId mask = b.input("mask", DType::kF32, Shape{Dim::symbol("seq"), Dim::symbol("seq")});
  ValueId s = b.div(b.matmul(q, b.transpose(k, {0, 2, 1})), b.scalar_f32("", std::sqrt(8.0f)));
  b.output(b.matmul(b.softmax(b.add(s, mask)), v), "o1");
  // No scale, no mask; and a near-miss: Softmax over axis 1.
  b.output(b.matmul(b.softmax(b.matmul(q, b.transpose(k, {0, 2, 1}))), v), "o2");
  b.output(b.matmul(b.softmax(b.matmul(q, b.transpose(k, {0, 2, 1})), 1), v), "o3");
  Graph g = *std::move(b).build();
  const auto found = find_attention(g);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_GE(found[0].mask, 0);
  EXPECT_GE(found[0].scale, 0);
  EXPECT_NEAR(found[0].scale_value, 1.0 / std::sqrt(8.0), 1e-6);
  EXPECT_EQ(found[1].mask, -1);
  EXPECT_EQ(found[1].scale, -1);
  EXPECT_EQ(g.node(found[1].qk).op_type, "MatMul");
}

}  // namespace
}  // namespace hone
