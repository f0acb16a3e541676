// The [1, 0, 2] Transposes a batch-first torch MultiheadAttention puts around
// itself ([B, S, E] to [S, B, E] before its input products, back after its
// output product), fused into the LayerNormalization units beside them
// (op.h LnSwap): a LayerNormalization whose one reader is such a Transpose
// writes its rows in the swapped order, and an add+layernorm unit reads its
// transposed residual operand through the swap, so neither Transpose copies.
// Checked against the f64 reference in f32 and under bf16 activations, at a
// batch above 1 (the rows really move) and at batch 1; and a transposed
// operand that broadcasts (the unit transposes it into its workspace first).
// Skips, with the reason, on a machine without a CUDA device.
#include <cmath>

#include "cuda_test_util.h"
#include "hone/correctness.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::f64_truth;
using testing_util::plan_text;
using testing_util::uniform;

constexpr int64_t kS = 37, kE = 96;

/// ||got - want|| / ||want|| over every element.
double rel_l2(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.numel(), want.numel());
  double d2 = 0, w2 = 0;
  for (int64_t i = 0; i < want.numel() && i < got.numel(); ++i) {
    const double w = want.data<float>()[i], d = got.data<float>()[i] - w;
    d2 += d * d;
    w2 += w * w;
  }
  return std::sqrt(d2 / w2);
}

/// x [B, S, E] -> LN1 -> Transpose -> MatMul + bias -> Transpose -> (that) +
/// x -> LN2: `out` (LN2) and `sum` (the residual stream, read again by a
/// Relu), as torchvision's ViT encoder block exports at any batch.
Graph sequence_first_block() {
  std::mt19937 rng(21);
  GraphBuilder b("seq_first_block");
  const float a = 1.7f / std::sqrt(static_cast<float>(kE));
  auto vec = [&](const char* name, float lo, float hi) {
    return b.constant(name, uniform(rng, {kE}, lo, hi));
  };
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kS, kE});
  ValueId h = b.layer_norm(x, vec("ln1_s", 0.8f, 1.2f), vec("ln1_b", -0.1f, 0.1f));
  ValueId t = b.transpose(h, {1, 0, 2});
  ValueId p =
      b.add(b.matmul(t, b.constant("w", uniform(rng, {kE, kE}, -a, a))), vec("w_b", -0.1f, 0.1f));
  ValueId sum = b.add(b.transpose(p, {1, 0, 2}), x);  // the transposed operand first
  b.output(b.layer_norm(sum, vec("ln2_s", 0.8f, 1.2f), vec("ln2_b", -0.1f, 0.1f)), "out");
  b.output(b.op("Relu", {sum}), "stream");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

std::vector<std::string> plan_lines_with(const std::string& plan, const std::string& what) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < plan.size()) {
    size_t end = plan.find('\n', at);
    if (end == std::string::npos) end = plan.size();
    const std::string line = plan.substr(at, end - at);
    if (!line.starts_with("choice:") && line.find(what) != std::string::npos) out.push_back(line);
    at = end + 1;
  }
  return out;
}

TEST(CudaLayerNormSwap, TheTransposesAroundAttentionAreFusedIntoTheLayerNorms) {
  HONE_REQUIRE_CUDA();
  const Graph g = sequence_first_block();
  const std::tuple<const char*, const char*, Precision> cases[] = {
      {"fp32", "f32", Precision::kFp32}, {"bf16", "bf16", Precision::kBf16}};
  for (const auto& [precision, activations, p] : cases) {
    for (const int64_t batch : {int64_t{4}, int64_t{1}}) {
      SCOPED_TRACE(std::string(precision) + " batch " + std::to_string(batch));
      std::mt19937 rng(22);
      const std::vector<Tensor> inputs = {uniform(rng, {batch, kS, kE}, -2.0f, 2.0f)};
      const std::vector<Tensor> want = f64_truth(g, inputs);
      CudaBackend be;
      ASSERT_TRUE(be.configure("precision", precision));
      ASSERT_TRUE(be.configure("activations", std::string(activations) == "f32" ? "f32" : "half"));
      ASSERT_TRUE(be.build(g));
      auto got = be.infer(inputs);
      ASSERT_TRUE(got) << got.error().to_string() << "\n" << plan_text(be);
      EXPECT_EQ(be.fallback_runs(), 0u) << plan_text(be);
      ASSERT_EQ(got->size(), 2u);
      const GateTolerance gate = GateTolerance::for_precision(p);
      for (size_t o = 0; o < 2; ++o) {
        const double err = rel_l2((*got)[o], want[o]);
        EXPECT_LE(err, p == Precision::kFp32 ? 1e-5 : gate.floor_rel_l2) << "output " << o;
      }
      const std::string plan = plan_text(be);
      // No Transpose copies or views of its own: both are inside the units.
      EXPECT_TRUE(plan_lines_with(plan, "transpose.").empty()) << plan;
      const std::string t = std::string(activations) == "f32" ? "f32" : precision;
      EXPECT_EQ(plan_lines_with(plan, "layernorm." + t + ".cuda.warp [1,0,2] out").size(), 1u)
          << plan;
      EXPECT_EQ(plan_lines_with(plan, "add+layernorm." + t + ".cuda.warp [1,0,2] in").size(), 1u)
          << plan;
    }
  }
}

/// A transposed operand [S, 1, E] -> [1, S, E] added to x [B, S, E]: the
/// Add broadcasts, so the unit transposes it into its workspace first.
TEST(CudaLayerNormSwap, ATransposedOperandThatBroadcastsIsMovedFirst) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(23);
  GraphBuilder b("broadcast_swap");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kS, kE});
  ValueId c = b.input("c", DType::kF32, Shape{kS, Dim::symbol("one"), kE});
  ValueId sum = b.add(x, b.transpose(b.op("Relu", {c}), {1, 0, 2}));
  b.output(b.layer_norm(sum, b.constant("s", uniform(rng, {kE}, 0.8f, 1.2f)),
                        b.constant("b", uniform(rng, {kE}, -0.1f, 0.1f))),
           "out");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  const std::vector<Tensor> inputs = {uniform(rng, {3, kS, kE}), uniform(rng, {kS, 1, kE})};
  auto be = testing_util::expect_matches_reference(g, inputs);
  const std::string plan = plan_text(*be);
  EXPECT_EQ(plan_lines_with(plan, "transposed-in").size(), 1u) << plan;
  EXPECT_TRUE(plan_lines_with(plan, "transpose.").empty()) << plan;
}

}  // namespace
}  // namespace hone::cuda
