// Half-precision activations through a transformer layer on the cuda backend
// (storage.h): under precision=bf16/fp16 with activations=half, a pre-norm
// encoder layer (LayerNormalization, q/k/v products with their biases, fused
// attention over split heads, the output product, residual Adds, the second
// LayerNormalization fused with its Add, the GELU MLP) keeps its values in
// bf16/f16 from the first LayerNormalization to the block's output: the
// products write half through cuBLASLt's epilogue, attention reads and
// writes half, and the one conversion left is the block output's. Its
// outputs are within the gate's bound for the precision of the f64 reference
// (relative L2 and the worst element against the RMS, as hone tune judges:
// element-wise tolerances do not fit values near zero after a layer of
// half-precision roundings). Skips, with
// the reason, on a machine without a CUDA device.
#include <cmath>
#include <cstdio>

#include "cuda_test_util.h"
#include "eval/kernel_util.h"
#include "hone/correctness.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::f64_truth;
using testing_util::plan_text;
using testing_util::uniform;

constexpr int64_t kS = 77, kE = 128, kHeads = 2, kD = 64, kHidden = 512;

/// A ViT-like pre-norm encoder layer over x [batch, 77, 128]: y = x + a,
/// a = proj(attention(LN1(x))), out = y + MLP(LN2(y)).
Graph encoder_layer() {
  std::mt19937 rng(11);
  GraphBuilder b("encoder");
  auto w = [&](const char* name, int64_t k, int64_t n) {
    const float a = 1.7f / std::sqrt(static_cast<float>(k));
    return b.constant(name, uniform(rng, {k, n}, -a, a));
  };
  auto vec = [&](const char* name, int64_t n, float lo, float hi) {
    return b.constant(name, uniform(rng, {n}, lo, hi));
  };
  auto i64 = [&](std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return b.constant("", Tensor::from<int64_t>({n}, std::move(v)));
  };
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kS, kE});
  ValueId h = b.layer_norm(x, vec("ln1_s", kE, 0.8f, 1.2f), vec("ln1_b", kE, -0.1f, 0.1f));
  auto heads = [&](const char* name, std::vector<int64_t> perm) {
    ValueId p = b.add(b.matmul(h, w(name, kE, kE)),
                      vec((std::string(name) + "_b").c_str(), kE, -0.1f, 0.1f));
    return b.transpose(b.op("Reshape", {p, i64({0, kS, kHeads, kD})}), std::move(perm));
  };
  ValueId q = heads("wq", {0, 2, 1, 3});
  ValueId kt = heads("wk", {0, 2, 3, 1});
  ValueId v = heads("wv", {0, 2, 1, 3});
  ValueId s = b.div(b.matmul(q, kt), b.scalar_f32("", 8.0f));
  ValueId o = b.transpose(b.matmul(b.softmax(s), v), {0, 2, 1, 3});
  ValueId merged = b.op("Reshape", {o, i64({0, kS, kE})});
  ValueId a = b.add(b.matmul(merged, w("wo", kE, kE)), vec("wo_b", kE, -0.1f, 0.1f));
  ValueId y = b.add(x, a);
  ValueId h2 = b.layer_norm(y, vec("ln2_s", kE, 0.8f, 1.2f), vec("ln2_b", kE, -0.1f, 0.1f));
  ValueId up = b.add(b.matmul(h2, w("w1", kE, kHidden)), vec("b1", kHidden, -0.1f, 0.1f));
  ValueId down = b.add(b.matmul(b.gelu(up), w("w2", kHidden, kE)), vec("b2", kE, -0.1f, 0.1f));
  b.output(b.add(y, down), "out");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);  // as loading a model does
  return g;
}

std::vector<Tensor> layer_inputs() {
  std::mt19937 rng(12);
  return {uniform(rng, {3, kS, kE})};
}

/// Expects `got` within the calibrated gate's floors for `p` of the f64
/// `truth` (relative L2, and max|diff| / RMS: hone tune's judgement of a
/// candidate whose f32 reference is exact, as here), naming the figures.
void expect_within_gate(const Tensor& got, const Tensor& truth, Precision p) {
  ASSERT_EQ(got.numel(), truth.numel());
  const float* a = got.data<float>();
  const float* b = truth.data<float>();
  double diff2 = 0, ref2 = 0, worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    diff2 += d * d;
    ref2 += static_cast<double>(b[i]) * b[i];
    worst = std::max(worst, std::abs(d));
  }
  const double rms = std::sqrt(ref2 / static_cast<double>(got.numel()));
  const double rel_l2 = std::sqrt(diff2 / ref2), max_err = worst / rms;
  const GateTolerance gate = GateTolerance::for_precision(p);
  std::printf("[   INFO   ] %s: rel L2 %.3g (floor %.3g), max|diff|/RMS %.3g (floor %.3g)\n",
              std::string(to_string(p)).c_str(), rel_l2, gate.floor_rel_l2, max_err,
              gate.floor_max);
  EXPECT_LE(rel_l2, gate.floor_rel_l2);
  EXPECT_LE(max_err, gate.floor_max);
}

/// The lines of a kernel plan that are steps (not the "choice:" record of
/// what was timed, which names every candidate's kernel).
std::string steps_of(const std::string& plan) {
  std::string out;
  size_t at = 0;
  while (at < plan.size()) {
    size_t end = plan.find('\n', at);
    if (end == std::string::npos) end = plan.size();
    const std::string line = plan.substr(at, end - at);
    if (!line.starts_with("choice:")) out += line + "\n";
    at = end + 1;
  }
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CudaHalfTransformer, EncoderLayerRunsInHalfFromItsFirstLayerNorm) {
  HONE_REQUIRE_CUDA();
  const Graph g = encoder_layer();
  const std::vector<Tensor> inputs = layer_inputs();
  const std::vector<Tensor> want = f64_truth(g, inputs);
  const std::tuple<const char*, const char*, Precision> cases[] = {
      {"bf16", "bf16", Precision::kBf16}, {"fp16", "f16", Precision::kFp16}};
  for (const auto& [precision, type, p] : cases) {
    SCOPED_TRACE(precision);
    CudaBackend be;
    ASSERT_TRUE(be.configure("precision", precision));
    ASSERT_TRUE(be.configure("activations", "half"));
    auto built = be.build(g);
    ASSERT_TRUE(built) << built.error().to_string();
    EXPECT_TRUE(backend_test::all_nodes_on_backend(be, g));
    auto got = be.infer(inputs);
    ASSERT_TRUE(got) << got.error().to_string() << "\n" << plan_text(be);
    EXPECT_EQ(be.fallback_runs(), 0u) << plan_text(be);
    ASSERT_EQ(got->size(), 1u);
    expect_within_gate((*got)[0], want[0], p);
    const std::string plan = steps_of(plan_text(be));
    std::printf("[   INFO   ] %s kernel plan:\n%s\n", precision, plan.c_str());
    const std::string t = type;
    // The one conversion: the layer's output leaving the block as f32.
    EXPECT_EQ(count(plan, "convert '"), 1u) << plan;
    EXPECT_EQ(count(plan, "(block output)"), 1u) << plan;
    EXPECT_EQ(count(plan, "layernorm." + t + ".cuda."), 2u) << plan;  // LN1 and Add + LN2
    EXPECT_EQ(count(plan, "add+layernorm." + t + ".cuda."), 1u) << plan;
    EXPECT_EQ(count(plan, "matmul." + t + ".cuda.cublaslt+bias half_io"), 4u) << plan;
    // The plain or the cp.async kernel, whichever was faster.
    EXPECT_EQ(count(plan, "attention." + t + ".cuda.fused_mma_half_io") +
                  count(plan, "attention." + t + ".cuda.fused_mma_async_half_io"),
              1u)
        << plan;
    EXPECT_EQ(count(plan, " half_io]"), 5u) << plan;  // the four products and the MLP
    EXPECT_EQ(plan.find(".f32.cuda"), std::string::npos) << plan;
  }
}

TEST(CudaHalfTransformer, HalfAndF32ActivationsAgreeWithinTheBound) {
  HONE_REQUIRE_CUDA();
  const Graph g = encoder_layer();
  const std::vector<Tensor> inputs = layer_inputs();
  const std::vector<Tensor> want = f64_truth(g, inputs);
  std::vector<Tensor> outs[2];
  const char* modes[] = {"f32", "half"};
  for (int i = 0; i < 2; ++i) {
    CudaBackend be;
    ASSERT_TRUE(be.configure("precision", "bf16"));
    ASSERT_TRUE(be.configure("activations", modes[i]));
    ASSERT_TRUE(be.build(g));
    auto got = be.infer(inputs);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_EQ(be.fallback_runs(), 0u) << modes[i] << "\n" << plan_text(be);
    outs[i] = std::move(*got);
    // A second call (replayed, on a CUDA graph once captured) gives the same bits.
    auto again = be.infer(inputs);
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_TRUE(testing_util::same_bits(outs[i], *again)) << modes[i];
  }
  for (const auto& out : outs) expect_within_gate(out[0], want[0], Precision::kBf16);
}

/// torch's batch-first MultiheadAttention moves [B, S, E] to [S, B, E]
/// around its products: x -> LayerNorm -> Transpose -> MatMul (no bias, as a
/// Llama's) -> Transpose.
Graph sequence_first_products() {
  std::mt19937 rng(13);
  GraphBuilder b("seq_first");
  const float a = 1.7f / std::sqrt(static_cast<float>(kE));
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kS, kE});
  ValueId h = b.layer_norm(x, b.constant("ln_s", uniform(rng, {kE}, 0.8f, 1.2f)),
                           b.constant("ln_b", uniform(rng, {kE}, -0.1f, 0.1f)));
  ValueId t = b.transpose(h, {1, 0, 2});
  ValueId p = b.matmul(t, b.constant("w", uniform(rng, {kE, kE}, -a, a)));
  b.output(b.transpose(p, {1, 0, 2}), "out");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

TEST(CudaHalfTransformer, ABatchOneTransposeIsAViewAndABiasFreeProductStaysHalf) {
  HONE_REQUIRE_CUDA();
  const Graph g = sequence_first_products();
  for (const int64_t batch : {int64_t{1}, int64_t{3}}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::mt19937 rng(14);
    const std::vector<Tensor> inputs = {uniform(rng, {batch, kS, kE})};
    const std::vector<Tensor> want = f64_truth(g, inputs);
    CudaBackend be;
    ASSERT_TRUE(be.configure("precision", "bf16"));
    ASSERT_TRUE(be.configure("activations", "half"));
    ASSERT_TRUE(be.build(g));
    auto got = be.infer(inputs);
    ASSERT_TRUE(got) << got.error().to_string() << "\n" << plan_text(be);
    EXPECT_EQ(be.fallback_runs(), 0u) << plan_text(be);
    expect_within_gate((*got)[0], want[0], Precision::kBf16);
    const std::string plan = steps_of(plan_text(be));
    // The first Transpose is the LayerNormalization's row order (LnSwap);
    // the second, at batch 1, a view ([1, S, E] and [S, 1, E] are the same
    // bytes), at batch 3 a copy.
    EXPECT_EQ(count(plan, "layernorm.bf16.cuda.warp [1,0,2] out"), 1u) << plan;
    EXPECT_EQ(count(plan, "transpose.view"), batch == 1 ? 1u : 0u) << plan;
    // The bias-free product reads and writes bf16: the one conversion is the
    // block output's.
    EXPECT_EQ(count(plan, "matmul.bf16.cuda.cublaslt half_io"), 1u) << plan;
    EXPECT_EQ(count(plan, "convert '"), 1u) << plan;
  }
}

}  // namespace
}  // namespace hone::cuda
