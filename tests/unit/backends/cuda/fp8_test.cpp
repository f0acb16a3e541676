// precision=fp8 on the cuda backend (fp8.h). On any machine: e4m3 rounding
// (the host twin of the device conversion) against known values and every
// finite e4m3 value, the weights' quantization, the FP8 shape rules, and the
// refusals (backends without fp8; cuda where the device or cuBLASLt lacks
// it). On a device of compute capability 8.9 or newer: a Linear layer (MatMul
// + bias, and a Gemm with its weight stored [N, K]) and an MLP (Linear, GELU,
// Linear) run in FP8 within fp8's gate bound of the f64 reference, a product
// whose shapes break cuBLASLt's FP8 rules stays bf16 and says why, and a
// replay (CUDA graph) gives the same bits. Skips, with the reason, elsewhere.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "backends/cuda/cuda_api.h"
#include "backends/cuda/fp8.h"
#include "cuda_test_util.h"
#include "hone/correctness.h"
#include "hone/registry.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::f64_truth;
using testing_util::plan_text;
using testing_util::same_bits;
using testing_util::uniform;
using testing_util::weights;

TEST(CudaFp8, E4m3BitsOfKnownValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::pair<float, uint8_t> cases[] = {
      {0.0f, 0x00},
      {-0.0f, 0x80},
      {1.0f, 0x38},
      {-2.0f, 0xc0},
      {448.0f, 0x7e},
      {-448.0f, 0xfe},
      {500.0f, 0x7e},
      {1e9f, 0x7e},
      {inf, 0x7e},
      {-inf, 0xfe},
      {240.0f, 0x77},
      {0.015625f, 0x08},
      {0.001953125f, 0x01},
      {0.013671875f, 0x07},
      {-0.001953125f, 0x81},
      {1e-30f, 0x00},
      // Ties go to the even neighbour: 2^-10 between 0 and 2^-9; 1.5 x 2^-9
      // between 1 and 2 (x 2^-9); 1.0625 between 1 and 1.125; 1.1875 between
      // 1.125 and 1.25; 432 between 416 and 448; 7.5 x 2^-9 between the
      // largest subnormal and the smallest normal.
      {0.0009765625f, 0x00},
      {0.0029296875f, 0x02},
      {1.0625f, 0x38},
      {1.1875f, 0x3a},
      {432.0f, 0x7e},
      {0.0146484375f, 0x08},
      // Not ties: just above the midpoints round away.
      {1.0626f, 0x39},
      {0.00098f, 0x01}};
  for (const auto& [f, want] : cases)
    EXPECT_EQ(static_cast<int>(e4m3_bits(f)), static_cast<int>(want)) << f;
  EXPECT_EQ(e4m3_bits(std::nanf("")) & 0x7f, 0x7f);
  EXPECT_EQ(e4m3_value(0x7e), 448.0f);
  EXPECT_EQ(e4m3_value(0x01), 0.001953125f);
  EXPECT_TRUE(std::isnan(e4m3_value(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_value(0xff)));
}

TEST(CudaFp8, E4m3RoundsToTheNearestFiniteValue) {
  // Every finite code converts back to itself.
  std::vector<float> finite;
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7f) == 0x7f) continue;
    const float v = e4m3_value(static_cast<uint8_t>(b));
    EXPECT_EQ(e4m3_bits(v), b) << b << " = " << v;
    finite.push_back(v);
  }
  // Random values in range land on a nearest code.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-460.0f, 460.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = i % 2 == 0 ? u(rng) : u(rng) / 4096.0f;
    const float got = e4m3_value(e4m3_bits(x));
    float best = std::numeric_limits<float>::infinity();
    for (float v : finite) best = std::min(best, std::abs(v - x));
    EXPECT_EQ(std::abs(got - x), best) << x << " -> " << got;
  }
}

TEST(CudaFp8, WeightsQuantizeToTheirAmaxAndStoreNByK) {
  // W [K=2, N=3] row-major; stored [N, K] e4m3 with scale amax / 448.
  const float w[] = {0.5f, -3.5f, 0.25f, 1.0f, 0.0f, -0.125f};
  const Fp8HostWeight q = quantize_weight(w, 2, 3, false);
  EXPECT_FLOAT_EQ(q.scale, 3.5f / 448.0f);
  ASSERT_EQ(q.bits.size(), 6u);
  EXPECT_EQ(q.bits[2 * 1 + 0], 0xfe);  // W[0][1] = -amax -> -448
  for (int k = 0; k < 2; ++k)
    for (int n = 0; n < 3; ++n) {
      const float back = e4m3_value(q.bits[static_cast<size_t>(n * 2 + k)]) * q.scale;
      EXPECT_NEAR(back, w[k * 3 + n], std::abs(w[k * 3 + n]) * 0.0625f + 1e-7f) << k << "," << n;
    }
  // The same weight given [N, K] (a Gemm's transB) quantizes to the same bytes.
  const float wt[] = {0.5f, 1.0f, -3.5f, 0.0f, 0.25f, -0.125f};
  const Fp8HostWeight qt = quantize_weight(wt, 2, 3, true);
  EXPECT_EQ(qt.bits, q.bits);
  EXPECT_EQ(quantize_weight(std::vector<float>(6, 0.0f).data(), 2, 3, false).scale, 1.0f);
}

TEST(CudaFp8, ShapeRulesNameTheDimThatBreaksThem) {
  EXPECT_EQ(fp8_shape_why_not(768, 3072), "");
  EXPECT_NE(fp8_shape_why_not(100, 768).find("N = 100"), std::string::npos);
  EXPECT_NE(fp8_shape_why_not(768, 72).find("K = 72"), std::string::npos);
}

TEST(CudaFp8, BackendsWithoutFp8RefuseItClearly) {
  for (const std::string& name : default_registry().names()) {
    if (name == "cuda") continue;
    SCOPED_TRACE(name);
    auto be = default_registry().create(name);
    ASSERT_TRUE(be) << be.error().to_string();
    auto r = (*be)->configure("precision", "fp8");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(r.error().message().find("has no fp8"), std::string::npos) << r.error().message();
  }
}

bool declares_fp8() {
  const auto& ps = CudaBackend::caps().precisions;
  return std::find(ps.begin(), ps.end(), Precision::kFp8) != ps.end();
}

TEST(CudaFp8, RefusedWhereTheDeviceOrCublasLtLacksIt) {
  if (declares_fp8()) GTEST_SKIP() << "this machine's device and cuBLASLt run FP8";
  CudaBackend be;
  auto r = be.configure("precision", "e4m3");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupportedHardware);
  const std::string m = r.error().message();
  EXPECT_NE(m.find("compute capability 8.9 or newer"), std::string::npos) << m;
  // What this machine has instead: no device, or the device's capability.
  auto d = Driver::get();
  const std::string has = d ? "has compute capability " + std::to_string((*d)->cc_major()) + "." +
                                  std::to_string((*d)->cc_minor())
                            : "no CUDA device";
  if (d && (*d)->cc_major() * 10 + (*d)->cc_minor() < 89) {
    EXPECT_NE(m.find(has), std::string::npos) << m;
    EXPECT_NE(fp8_why_not(**d).find((*d)->description()), std::string::npos);
  } else if (!d) {
    EXPECT_NE(m.find(has), std::string::npos) << m;
  }
}

/// Skips unless this machine runs FP8 products.
#define HONE_REQUIRE_FP8()                                                       \
  do {                                                                           \
    HONE_REQUIRE_CUDA();                                                         \
    if (!declares_fp8())                                                         \
      GTEST_SKIP() << CudaBackend::caps().precision_why_not.at(Precision::kFp8); \
  } while (0)

/// Relative L2 and max|diff| / RMS of `got` against `truth`.
std::pair<double, double> errors(const Tensor& got, const Tensor& truth) {
  double d2 = 0, t2 = 0, worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = static_cast<double>(got.data<float>()[i]) - truth.data<float>()[i];
    d2 += d * d;
    t2 += static_cast<double>(truth.data<float>()[i]) * truth.data<float>()[i];
    worst = std::max(worst, std::abs(d));
  }
  return {std::sqrt(d2 / t2), worst / std::sqrt(t2 / static_cast<double>(got.numel()))};
}

/// Builds `g` at `precision`, runs it three times (the later runs replay a
/// CUDA graph), expects the same bits each time and every output within
/// the precision's gate floors of the f64 truth; returns the plan's text
/// and the first output's relative L2.
std::pair<std::string, double> run_at(const Graph& g, const std::vector<Tensor>& in,
                                      const char* precision) {
  CudaBackend be;
  EXPECT_TRUE(be.configure("precision", precision));
  auto built = be.build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  if (!built) return {};
  EXPECT_TRUE(backend_test::all_nodes_on_backend(be, g));
  auto first = be.infer(in);
  EXPECT_TRUE(first) << first.error().to_string() << "\n" << plan_text(be);
  if (!first) return {};
  for (int i = 0; i < 2; ++i) {
    auto again = be.infer(in);
    EXPECT_TRUE(again && same_bits(*again, *first)) << "run " << i + 2;
  }
  EXPECT_EQ(be.fallback_runs(), 0u) << plan_text(be);
  const std::vector<Tensor> truth = f64_truth(g, in);
  const GateTolerance gate = GateTolerance::for_precision(be.precision());
  double first_rel = 0;
  for (size_t o = 0; o < truth.size() && o < first->size(); ++o) {
    const auto [rel, mx] = errors((*first)[o], truth[o]);
    std::printf("[   INFO   ] %s output %zu: rel L2 %.3g (floor %.3g), max|diff|/RMS %.3g\n",
                precision, o, rel, gate.floor_rel_l2, mx);
    EXPECT_LE(rel, gate.floor_rel_l2) << plan_text(be);
    EXPECT_LE(mx, gate.floor_max) << plan_text(be);
    if (o == 0) first_rel = rel;
  }
  return {plan_text(be), first_rel};
}

/// x [batch, 7, K] -> Linear(K, N) (MatMul + Add, or Gemm over a 2-D x with
/// its weight stored [N, K]) -> y.
Graph linear(int64_t K, int64_t N, bool gemm) {
  std::mt19937 rng(5);
  GraphBuilder b("linear");
  ValueId x = gemm ? b.input("x", DType::kF32, Shape{Dim::symbol("batch"), K})
                   : b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 7, K});
  ValueId bias = b.constant("b", uniform(rng, {N}, -0.2f, 0.2f));
  ValueId y = gemm ? b.op("Gemm", {x, b.constant("w", weights(rng, {N, K})), bias},
                          {{"transB", int64_t{1}}})
                   : b.add(b.matmul(x, b.constant("w", weights(rng, {K, N}))), bias);
  b.output(y, "y");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

TEST(CudaFp8, LinearRunsInFp8WithinItsBound) {
  HONE_REQUIRE_FP8();
  std::mt19937 rng(6);
  const std::vector<Tensor> in = {uniform(rng, {3, 7, 256}, -1.0f, 1.0f)};
  const auto [plan, rel] = run_at(linear(256, 128, false), in, "fp8");
  EXPECT_NE(plan.find("matmul.fp8.cuda.quantize+cublaslt+bias"), std::string::npos) << plan;
  // e4m3 rounding shows (bf16 would land near 3e-3): FP8 really ran.
  EXPECT_GT(rel, 5e-3) << plan;
}

TEST(CudaFp8, GemmWithItsWeightStoredNByKRunsInFp8) {
  HONE_REQUIRE_FP8();
  std::mt19937 rng(7);
  const std::vector<Tensor> in = {uniform(rng, {24, 64}, -1.0f, 1.0f)};
  const auto [plan, rel] = run_at(linear(64, 32, true), in, "fp8");
  // A Gemm, or the MatMul + Add the graph passes may make of it.
  EXPECT_NE(plan.find(".fp8.cuda.quantize+cublaslt+bias"), std::string::npos) << plan;
  EXPECT_GT(rel, 5e-3) << plan;
}

TEST(CudaFp8, MlpRunsBothProductsInFp8) {
  HONE_REQUIRE_FP8();
  std::mt19937 rng(8);
  GraphBuilder b("mlp");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 9, 64});
  ValueId h = b.add(b.matmul(x, b.constant("w1", weights(rng, {64, 256}))),
                    b.constant("b1", uniform(rng, {256}, -0.1f, 0.1f)));
  ValueId y = b.add(b.matmul(b.gelu(h), b.constant("w2", weights(rng, {256, 64}))),
                    b.constant("b2", uniform(rng, {64}, -0.1f, 0.1f)));
  b.output(y, "y");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  const auto [plan, rel] = run_at(g, {uniform(rng, {2, 9, 64}, -1.0f, 1.0f)}, "fp8");
  EXPECT_NE(plan.find("mlp.fp8.cuda.quantize+cublaslt+bias+nvrtc["), std::string::npos) << plan;
  EXPECT_GT(rel, 5e-3) << plan;
}

TEST(CudaFp8, AMatMulWithoutBiasRunsInFp8Too) {
  HONE_REQUIRE_FP8();
  std::mt19937 rng(10);
  GraphBuilder b("no_bias");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 5, 64});
  b.output(b.matmul(x, b.constant("w", weights(rng, {64, 48}))), "y");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  const auto [plan, rel] = run_at(g, {uniform(rng, {4, 5, 64}, -1.0f, 1.0f)}, "fp8");
  EXPECT_NE(plan.find("matmul.fp8.cuda.quantize+cublaslt]"), std::string::npos) << plan;
  EXPECT_GT(rel, 5e-3) << plan;
}

TEST(CudaFp8, AProductBreakingTheFp8RulesStaysBf16AndSaysWhy) {
  HONE_REQUIRE_FP8();
  std::mt19937 rng(9);
  const std::vector<Tensor> in = {uniform(rng, {2, 7, 64}, -1.0f, 1.0f)};
  const auto [plan, rel] = run_at(linear(64, 100, false), in, "fp8");
  EXPECT_EQ(plan.find(".fp8.cuda"), std::string::npos) << plan;
  EXPECT_NE(plan.find("matmul.bf16.cuda.cublaslt+bias half_io (not fp8: N = 100"),
            std::string::npos)
      << plan;
  // bf16's rounding only: within bf16's own bound.
  EXPECT_LE(rel, GateTolerance::for_precision(Precision::kBf16).floor_rel_l2) << plan;
}

/// A ViT-like pre-norm encoder layer over x [batch, 77, 128] (as
/// half_transformer_test.cpp's): attention with q/k/v and output projections
/// (MatMul + bias), then a GELU MLP 128 -> 512 -> 128, residual Adds.
Graph encoder_layer() {
  constexpr int64_t kS = 77, kE = 128, kHeads = 2, kD = 64, kHidden = 512;
  std::mt19937 rng(11);
  GraphBuilder b("encoder");
  auto w = [&](const char* name, int64_t k, int64_t n) {
    const float a = 1.7f / std::sqrt(static_cast<float>(k));
    return b.constant(name, uniform(rng, {k, n}, -a, a));
  };
  auto vec = [&](const std::string& name, int64_t n, float lo, float hi) {
    return b.constant(name, uniform(rng, {n}, lo, hi));
  };
  auto i64 = [&](std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return b.constant("", Tensor::from<int64_t>({n}, std::move(v)));
  };
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), kS, kE});
  ValueId h = b.layer_norm(x, vec("ln1_s", kE, 0.8f, 1.2f), vec("ln1_b", kE, -0.1f, 0.1f));
  auto heads = [&](const char* name, std::vector<int64_t> perm) {
    ValueId p = b.add(b.matmul(h, w(name, kE, kE)), vec(std::string(name) + "_b", kE, -0.1f, 0.1f));
    return b.transpose(b.op("Reshape", {p, i64({0, kS, kHeads, kD})}), std::move(perm));
  };
  ValueId q = heads("wq", {0, 2, 1, 3});
  ValueId kt = heads("wk", {0, 2, 3, 1});
  ValueId v = heads("wv", {0, 2, 1, 3});
  ValueId sc = b.div(b.matmul(q, kt), b.scalar_f32("", 8.0f));
  ValueId o = b.transpose(b.matmul(b.softmax(sc), v), {0, 2, 1, 3});
  ValueId merged = b.op("Reshape", {o, i64({0, kS, kE})});
  ValueId y = b.add(x, b.add(b.matmul(merged, w("wo", kE, kE)), vec("wo_b", kE, -0.1f, 0.1f)));
  ValueId h2 = b.layer_norm(y, vec("ln2_s", kE, 0.8f, 1.2f), vec("ln2_b", kE, -0.1f, 0.1f));
  ValueId up = b.add(b.matmul(h2, w("w1", kE, kHidden)), vec("b1", kHidden, -0.1f, 0.1f));
  ValueId down = b.add(b.matmul(b.gelu(up), w("w2", kHidden, kE)), vec("b2", kE, -0.1f, 0.1f));
  b.output(b.add(y, down), "out");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

TEST(CudaFp8, EncoderLayerRunsItsProjectionsAndMlpInFp8) {
  HONE_REQUIRE_FP8();
  std::mt19937 rng(12);
  const auto [plan, rel] =
      run_at(encoder_layer(), {uniform(rng, {3, 77, 128}, -1.0f, 1.0f)}, "fp8");
  EXPECT_NE(plan.find("matmul.fp8.cuda.quantize+cublaslt+bias"), std::string::npos) << plan;
  EXPECT_NE(plan.find("mlp.fp8.cuda."), std::string::npos) << plan;
  EXPECT_EQ(plan.find("not fp8"), std::string::npos) << plan;
  (void)rel;  // run_at checked it against fp8's floors
}

}  // namespace
}  // namespace hone::cuda
