// Reduced precision on the onednn backend: with precision=bf16 on a CPU with
// native bf16, Conv/Gemm/MatMul read bf16 (plan lines say "[bf16]"), stay
// within bf16's declared tolerance and really differ from the f32 plan, but
// for the nodes named in fp32_nodes; at fp32 plans are f32, and a CPU
// without bf16 refuses precision=bf16 with the reason.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "hone/correctness.h"
#include "hone/registry.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::uniform;

/// x[2,16,12,12] -> Conv(+bias) -> Relu -> GlobalAveragePool -> Flatten
/// -> Gemm(+bias, transB); and x2[4,32] -> MatMul(const [32,24]) as a second
/// output. Weights are small so outputs are about 1, where bf16's atol and
/// rtol are meaningful.
Graph dense_graph(std::mt19937& rng) {
  GraphBuilder b("dense");
  ValueId x = b.input("x", DType::kF32, Shape{2, 16, 12, 12});
  ValueId x2 = b.input("x2", DType::kF32, Shape{4, 32});
  ValueId c = b.relu(b.conv(x, b.constant("w", uniform(rng, {16, 16, 3, 3}, -0.1f, 0.1f)),
                            b.constant("b", uniform(rng, {16})), {.pads = {1, 1, 1, 1}}));
  ValueId g = b.gemm(b.flatten(b.global_average_pool(c)),
                     b.constant("wf", uniform(rng, {10, 16}, -0.3f, 0.3f)),
                     b.constant("bf", uniform(rng, {10})), {.trans_b = true});
  ValueId m = b.matmul(x2, b.constant("wm", uniform(rng, {32, 24}, -0.2f, 0.2f)));
  b.output(g, "y");
  b.output(m, "z");
  return *std::move(b).build();
}

/// A Gemm with transposed A and a non-constant B, and a batched MatMul of two
/// inputs: the paths that convert activations (not packed weights) to bf16.
Graph activation_graph() {
  GraphBuilder b("act");
  ValueId a = b.input("a", DType::kF32, Shape{24, 8});
  ValueId w = b.input("w", DType::kF32, Shape{24, 12});
  ValueId p = b.input("p", DType::kF32, Shape{3, 8, 16});
  ValueId q = b.input("q", DType::kF32, Shape{3, 16, 5});
  b.output(b.gemm(a, w, kNoValue, {.trans_a = true, .alpha = 0.5f}), "y");
  b.output(b.matmul(p, q), "z");
  return *std::move(b).build();
}

std::unique_ptr<OnednnBackend> build(const Graph& g, bool reduced,
                                     const std::vector<std::string>& fp32_nodes = {}) {
  auto be = std::make_unique<OnednnBackend>();
  EXPECT_TRUE(be->configure("min_block_size", "1"));
  EXPECT_TRUE(be->configure("precision", reduced ? "bf16" : "f32"));
  EXPECT_TRUE(be->set_fp32_nodes(fp32_nodes));
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  return be;
}

std::string plans_of(const OnednnBackend& be) {
  std::string s;
  for (const std::string& p : be.plan_descriptions()) s += p + "\n";
  return s;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
}

/// Runs `g` with and without reduced precision and checks the bf16 run
/// against the reference with bf16's tolerance and against the f32 run.
void expect_bf16_differs_within_tolerance(const Graph& g, const std::vector<Tensor>& inputs,
                                          const std::vector<std::string>& kinds) {
  auto bf = build(g, true);
  auto f32 = build(g, false);
  const std::string bf_plans = plans_of(*bf), f32_plans = plans_of(*f32);
  for (const std::string& k : kinds) {
    EXPECT_NE(bf_plans.find(k + "[bf16]"), std::string::npos) << bf_plans;
    EXPECT_NE(f32_plans.find(k), std::string::npos) << f32_plans;
  }
  EXPECT_EQ(f32_plans.find("[bf16]"), std::string::npos) << f32_plans;

  auto want = eval::Interpreter().run_tensors(g, inputs);
  ASSERT_TRUE(want) << want.error().to_string();
  auto got = bf->infer(inputs);
  ASSERT_TRUE(got) << got.error().to_string();
  auto exact = f32->infer(inputs);
  ASSERT_TRUE(exact) << exact.error().to_string();
  ASSERT_EQ(got->size(), want->size());
  const Tolerance tol = Tolerance::for_precision(Precision::kBf16);
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*got)[i].dtype(), DType::kF32) << "output " << i;
    EXPECT_TRUE(close((*got)[i], (*want)[i], tol.rtol, tol.atol)) << "output " << i;
    EXPECT_TRUE(close((*exact)[i], (*want)[i])) << "output " << i;
    // bf16 keeps 8 bits of mantissa: identical results would mean it never ran.
    EXPECT_FALSE(bitwise_equal((*got)[i], (*exact)[i])) << "output " << i;
  }
  EXPECT_EQ(bf->fallback_runs(), 0u);
}

TEST(OnednnBf16, DetectionAgreesWithCpuinfo) {
  if (std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr || std::getenv("DNNL_MAX_CPU_ISA") != nullptr)
    GTEST_SKIP() << "oneDNN's ISA is capped by the environment, so it may differ from the CPU's";
  std::ifstream in("/proc/cpuinfo");
  if (!in) GTEST_SKIP() << "no /proc/cpuinfo to compare with";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(cpu_has_bf16(), text.find(" avx512_bf16") != std::string::npos);
}

TEST(OnednnBf16, CapabilitiesListBf16OnlyWhereTheCpuHasIt) {
  const auto& ps = OnednnBackend::caps().precisions;
  EXPECT_EQ(ps.front(), Precision::kFp32);
  EXPECT_EQ(std::find(ps.begin(), ps.end(), Precision::kBf16) != ps.end(), cpu_has_bf16());
  // Whether or not this machine has it, the capabilities say what it needs.
  EXPECT_NE(OnednnBackend::caps().precision_needs.at(Precision::kBf16).find("AVX-512 BF16"),
            std::string::npos);
  EXPECT_TRUE(OnednnBackend::caps().mixed_precision);
  const auto* e = default_registry().find("onednn");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->capabilities.precisions, ps);
  EXPECT_EQ(e->capabilities.dtypes, std::vector<DType>{DType::kF32});  // block I/O stays f32
}

TEST(OnednnBf16, ConvGemmMatMulRunBf16WithinItsTolerance) {
  if (!cpu_has_bf16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16 (oneDNN ISA below avx512_core_bf16)";
  std::mt19937 rng(7);
  Graph g = dense_graph(rng);
  expect_bf16_differs_within_tolerance(g, {uniform(rng, {2, 16, 12, 12}), uniform(rng, {4, 32})},
                                       {"conv", "gemm", "matmul"});
}

TEST(OnednnBf16, ActivationOperandsAreConvertedPerRun) {
  if (!cpu_has_bf16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16 (oneDNN ISA below avx512_core_bf16)";
  std::mt19937 rng(8);
  Graph g = activation_graph();
  std::vector<Tensor> in{uniform(rng, {24, 8}), uniform(rng, {24, 12}, -0.3f, 0.3f),
                         uniform(rng, {3, 8, 16}), uniform(rng, {3, 16, 5}, -0.3f, 0.3f)};
  expect_bf16_differs_within_tolerance(g, in, {"gemm", "matmul"});
  // Runs reuse the converted buffers: a second call gives the same answer.
  auto be = build(g, true);
  auto r1 = be->infer(in), r2 = be->infer(in);
  ASSERT_TRUE(r1 && r2);
  for (size_t i = 0; i < r1->size(); ++i) EXPECT_TRUE(bitwise_equal((*r1)[i], (*r2)[i]));
}

TEST(OnednnBf16, FlagOffKeepsF32Plans) {
  std::mt19937 rng(9);
  Graph g = dense_graph(rng);
  auto be = build(g, false);
  const std::string plans = plans_of(*be);
  EXPECT_NE(plans.find("conv"), std::string::npos) << plans;
  EXPECT_EQ(plans.find("[bf16]"), std::string::npos) << plans;
}

TEST(OnednnBf16, Bf16IsRefusedWithTheReasonWithoutCpuSupport) {
  if (cpu_has_bf16())
    GTEST_SKIP() << "this CPU has AVX-512 BF16; bf16 is honoured here (other tests cover it)";
  OnednnBackend be;
  auto r = be.configure("precision", "bf16");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupportedHardware);
  EXPECT_NE(r.error().message().find("AVX-512 BF16"), std::string::npos) << r.error().message();
  EXPECT_EQ(be.precision(), Precision::kFp32);
}

TEST(OnednnBf16, Fp32NodesKeepTheirProductsInF32) {
  if (!cpu_has_bf16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16 (oneDNN ISA below avx512_core_bf16)";
  std::mt19937 rng(11);
  Graph g = activation_graph();
  std::string matmul;
  for (const Node& n : g.nodes())
    if (n.op_type == "MatMul") matmul = n.name;
  ASSERT_FALSE(matmul.empty());
  auto be = build(g, true, {matmul});
  EXPECT_EQ(be->fp32_nodes(), std::vector<std::string>{matmul});
  EXPECT_NE(be->config().describe().find("fp32_nodes=" + matmul), std::string::npos);
  const std::string plans = plans_of(*be);
  EXPECT_NE(plans.find("gemm[bf16]"), std::string::npos) << plans;
  EXPECT_EQ(plans.find("matmul[bf16]"), std::string::npos) << plans;
  // The MatMul kept in fp32 gives the f32 plan's bits.
  std::vector<Tensor> in{uniform(rng, {24, 8}), uniform(rng, {24, 12}, -0.3f, 0.3f),
                         uniform(rng, {3, 8, 16}), uniform(rng, {3, 16, 5}, -0.3f, 0.3f)};
  auto f32 = build(g, false);
  auto mixed = be->infer(in), exact = f32->infer(in);
  ASSERT_TRUE(mixed && exact);
  EXPECT_TRUE(bitwise_equal((*mixed)[1], (*exact)[1]));
  EXPECT_FALSE(bitwise_equal((*mixed)[0], (*exact)[0]));
}

}  // namespace
}  // namespace hone::onednn
