// Mixed precision on cuda: the fp32_nodes field (units holding those nodes
// run on f32 tensors under bf16/fp16) and tune's bisection finding them.
// The models are tune/mixed_precision_models.h's: logits of magnitude ~500
// whose bf16 rounding moves the probabilities by ~10%, beside an MLP that
// bf16 computes well. gemm_select=reduced: every product runs in half
// precision (the default times SGEMM against it, and a TF32 pick would make
// the pure plan pass by chance).
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "hone/package.h"
#include "hone/registry.h"
#include "tune/mixed_precision_models.h"

namespace hone::cuda {
namespace {

namespace mt = mixed_test;

TuneOptions cuda_options(const std::string& activations) {
  TuneOptions o = mt::options();
  o.configs["cuda"]["gemm_select"] = "reduced";
  o.configs["cuda"]["activations"] = activations;
  return o;
}

std::string plan_of(const Backend& be) {
  std::string plan;
  for (const auto& l : be.describe_kernels()) plan += l + "\n";
  return plan;
}

/// Whether a line of the kernel plan names node `name` as a unit kept in fp32.
bool marked_fp32(const Backend& be, const std::string& name) {
  for (const auto& l : be.describe_kernels())
    if (l.rfind("'" + name + "'", 0) == 0 && l.find("[fp32]") != std::string::npos) return true;
  return false;
}

bool holds(const std::vector<std::string>& xs, const std::string& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

TEST(CudaMixedPrecision, BisectionKeepsTheLogitsMatMulInFp32) {
  HONE_REQUIRE_CUDA();
  const Graph g = mt::logits_model();
  for (const char* acts : {"f32", "half"}) {
    SCOPED_TRACE(acts);
    auto tuned = tune(g, {mt::sample(1, 1), mt::sample(4, 2)}, MaxThroughput({"cuda@bf16"}),
                      cuda_options(acts));
    ASSERT_TRUE(tuned) << tuned.error().to_string();
    const TuneReport& r = tuned->report();
    const CandidateResult* pure = mt::find(r, "cuda@bf16 (no fp32 nodes)");
    const CandidateResult* mixed = mt::find(r, "cuda@bf16");
    ASSERT_TRUE(pure && mixed) << r.table();
    EXPECT_FALSE(pure->correctness.passed) << r.table();
    EXPECT_NE(pure->correctness.message.find("'probs'"), std::string::npos)
        << pure->correctness.message;
    EXPECT_TRUE(mixed->usable()) << r.table();
    // The logits' MatMul is kept; with f32 activations nothing else needs
    // to be, with half ones a Softmax reading bf16 might; the MLP never.
    if (std::string(acts) == "f32")
      EXPECT_EQ(mixed->fp32_nodes, std::vector<std::string>{mt::logits_matmul(g)}) << r.table();
    EXPECT_TRUE(holds(mixed->fp32_nodes, mt::logits_matmul(g))) << r.table();
    EXPECT_FALSE(holds(mixed->fp32_nodes, mt::matmul_reading(g, "wa"))) << r.table();
    EXPECT_FALSE(holds(mixed->fp32_nodes, mt::matmul_reading(g, "wb"))) << r.table();
    ASSERT_EQ(tuned->decision().chosen(), "cuda@bf16") << r.table();
    // The kernel plan marks the kept unit; the MLP's products stay bf16.
    const std::string plan = plan_of(tuned->backend());
    EXPECT_TRUE(marked_fp32(tuned->backend(), mt::logits_matmul(g))) << plan;
    EXPECT_FALSE(marked_fp32(tuned->backend(), mt::matmul_reading(g, "wa"))) << plan;
    EXPECT_NE(plan.find(".bf16."), std::string::npos) << plan;
  }
}

TEST(CudaMixedPrecision, ThePackageReplaysTheFp32Nodes) {
  HONE_REQUIRE_CUDA();
  const Graph g = mt::logits_model();
  auto tuned = tune(g, {mt::sample(1, 1), mt::sample(4, 2)}, MaxThroughput({"cuda@bf16"}),
                    cuda_options("half"));
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const std::vector<std::string> kept = tuned->backend().fp32_nodes();
  ASSERT_TRUE(holds(kept, mt::logits_matmul(g))) << tuned->report().table();
  const auto file = std::filesystem::temp_directory_path() /
                    ("hone-cuda-mixed-" + std::to_string(::getpid()) + ".hone");
  ASSERT_TRUE(save(*tuned, file));
  auto loaded = load(file);
  std::filesystem::remove(file);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->backend().precision(), Precision::kBf16);
  EXPECT_EQ(loaded->backend().fp32_nodes(), kept);
  std::mt19937 rng(7);
  const std::vector<Tensor> x{mt::uniform(rng, {3, 256}, 0.0f, 1.0f)};
  auto a = tuned->infer_flat(x), b = loaded->infer_flat(x);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i)
    EXPECT_TRUE(std::equal((*a)[i].span<float>().begin(), (*a)[i].span<float>().end(),
                           (*b)[i].span<float>().begin()))
        << "output " << i;
}

/// x[batch, 256] -> MatMul (values near 4e5, past f16's 65504) -> MatMul
/// (back down near 1) -> "y": in fp16 the first product's output overflows
/// when the second reads it in f16 (f32 activations) or when it is stored in
/// f16 (half activations).
Graph overflow_model(std::string* mm1, std::string* mm2) {
  std::mt19937 rng(5);
  GraphBuilder b("fp16_overflow");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 256});
  ValueId h = b.matmul(x, b.constant("wup", mt::uniform(rng, {256, 64}, 2000.0f, 4000.0f)));
  b.output(b.matmul(h, b.constant("wdown", mt::uniform(rng, {64, 16}, -1e-5f, 1e-5f))), "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  *mm1 = mt::matmul_reading(*g, "wup");
  *mm2 = mt::matmul_reading(*g, "wdown");
  return std::move(*g);
}

TEST(CudaMixedPrecision, Fp16OverflowKeepsTheNodesThatCarryIt) {
  HONE_REQUIRE_CUDA();
  std::string mm1, mm2;
  const Graph g = overflow_model(&mm1, &mm2);
  // f32 activations: only the product reading the large values needs f32
  // operands; half activations: the one writing them may have to keep them
  // f32 too (where its half plan writes f16).
  for (const std::string acts : {"f32", "half"}) {
    SCOPED_TRACE(acts);
    auto tuned = tune(g, {mt::sample(1, 1), mt::sample(4, 2)}, MaxThroughput({"cuda@fp16"}),
                      cuda_options(acts));
    ASSERT_TRUE(tuned) << tuned.error().to_string();
    const CandidateResult* pure = mt::find(tuned->report(), "cuda@fp16 (no fp32 nodes)");
    const CandidateResult* mixed = mt::find(tuned->report(), "cuda@fp16");
    ASSERT_TRUE(pure && mixed) << tuned->report().table();
    EXPECT_FALSE(pure->correctness.passed);
    EXPECT_TRUE(mixed->usable()) << tuned->report().table();
    if (acts == "f32")
      EXPECT_EQ(mixed->fp32_nodes, std::vector<std::string>{mm2}) << tuned->report().table();
    EXPECT_TRUE(holds(mixed->fp32_nodes, mm2)) << tuned->report().table();
    EXPECT_LE(mixed->fp32_nodes.size(), 2u) << tuned->report().table();
  }
}

TEST(CudaMixedPrecision, Fp32NodesNamingNoNodeAreRefused) {
  HONE_REQUIRE_CUDA();
  auto be = default_registry().create("cuda");
  ASSERT_TRUE(be) << be.error().to_string();
  ASSERT_TRUE((*be)->capabilities().mixed_precision);
  ASSERT_TRUE((*be)->set_precision(Precision::kBf16));
  ASSERT_TRUE((*be)->set_fp32_nodes({"MatMul_typo"}));
  auto r = (*be)->build(mt::logits_model());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("'MatMul_typo', which is no node"), std::string::npos)
      << r.error().to_string();
}

}  // namespace
}  // namespace hone::cuda
