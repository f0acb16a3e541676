// Kernel choices on the GPU: a build times its selections and records them in
// its config (kernel_choices); a second backend given that config times
// nothing, plans the same kernels and computes the same bits; a recorded
// choice reaches only the backend it was given to. Skips without a device.

#include "cuda_test_util.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::same_bits;
using testing_util::uniform;

constexpr double kBf16Tol = 5e-2;

/// A conv with Relu, a MatMul by a weight with its bias Add (one unit under
/// gemm_epilogue) and a plain MatMul: under bf16 each is a timed selection.
Graph model() {
  std::mt19937 rng(31);
  GraphBuilder b("choices");
  ValueId x = b.input("x", DType::kF32, Shape{2, 5, 19, 17});
  b.output(b.relu(b.conv(x, b.constant("wc", uniform(rng, {7, 5, 3, 3})),
                         b.constant("bc", uniform(rng, {7})), {.pads = {1, 1, 1, 1}})),
           "conv");
  ValueId t = b.input("t", DType::kF32, Shape{2, 23, 41});
  b.output(b.add(b.matmul(t, b.constant("wm", uniform(rng, {41, 57}))),
                 b.constant("bm", uniform(rng, {57}))),
           "dense");
  ValueId u = b.input("u", DType::kF32, Shape{3, 29, 41});
  b.output(b.matmul(u, b.constant("wp", uniform(rng, {41, 37}))), "plain");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

std::vector<Tensor> inputs() {
  std::mt19937 rng(32);
  return {uniform(rng, {2, 5, 19, 17}), uniform(rng, {2, 23, 41}), uniform(rng, {3, 29, 41})};
}

// activations=f32: these are the kernels' records (activations=auto's own
// record and replay: activations_auto_test.cpp).
const std::vector<std::pair<std::string, std::string>> kSettings = {
    {"precision", "bf16"}, {"gemm_epilogue", "true"}, {"activations", "f32"}};

std::unique_ptr<CudaBackend> built_with(const Graph& g, const std::string& choices) {
  auto be = std::make_unique<CudaBackend>();
  for (const auto& [k, v] : kSettings) EXPECT_TRUE(be->configure(k, v));
  EXPECT_TRUE(be->configure("kernel_choices", choices));
  auto built = be->build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  return be;
}

TEST(CudaKernelChoicesGpu, RecordedChoicesReplayWithoutTiming) {
  HONE_REQUIRE_CUDA();
  const Graph g = model();
  auto timed = expect_matches_reference(g, inputs(), kBf16Tol, kBf16Tol, kSettings);
  ASSERT_TRUE(timed);
  const std::string choices = timed->config().get<std::string>("kernel_choices", "");
  auto entries = KernelChoices::parse(choices);
  ASSERT_TRUE(entries) << entries.error().to_string();
  // At least the MatMul+bias unit and the plain MatMul (bf16 against TF32);
  // the conv too where cuDNN is found.
  ASSERT_GE(entries->size(), 2u) << choices;
  const ChoiceCounts first = timed->selections();
  EXPECT_EQ(first.replayed, 0u);
  EXPECT_EQ(first.timed + first.reused, entries->size()) << choices;
  const std::string plan = plan_text(*timed);
  for (const auto& [key, e] : *entries)
    EXPECT_NE(plan.find("choice: " + e.label + " " + e.shapes + " bf16 -> " + e.kernel),
              std::string::npos)
        << plan;
  auto want = timed->infer(inputs());
  ASSERT_TRUE(want) << want.error().to_string();

  auto replay = built_with(g, choices);
  auto got = replay->infer(inputs());
  ASSERT_TRUE(got) << got.error().to_string();
  const ChoiceCounts again = replay->selections();
  EXPECT_EQ(again.timed, 0u);
  EXPECT_EQ(again.reused, 0u);
  EXPECT_EQ(again.replayed, entries->size());
  EXPECT_EQ(replay->describe_kernels(), timed->describe_kernels());
  EXPECT_EQ(replay->config().get<std::string>("kernel_choices", ""), choices);
  EXPECT_TRUE(same_bits(*got, *want)) << "replayed choices computed other bits";
}

TEST(CudaKernelChoicesGpu, AChoiceReachesOnlyItsBackendAndAMissingKernelIsTimed) {
  HONE_REQUIRE_CUDA();
  const Graph g = model();
  auto timed = built_with(g, "");
  ASSERT_TRUE(timed->infer(inputs()));
  auto entries = KernelChoices::parse(timed->config().get<std::string>("kernel_choices", ""));
  ASSERT_TRUE(entries);
  // The plain MatMul: flip its choice between bf16 and TF32 SGEMM.
  const std::string bf16 = "matmul.bf16.cuda.gemm_ex", f32 = "matmul.f32.cuda.sgemm";
  std::string key;
  for (const auto& [k, e] : *entries)
    if (e.label.ends_with("(MatMul)") && (e.kernel == bf16 || e.kernel == f32)) key = k;
  ASSERT_FALSE(key.empty()) << KernelChoices::format(*entries);
  KernelChoices::Entries flipped = *entries;
  KernelChoices::Entry& e = flipped.at(key);
  e.kernel = e.kernel == bf16 ? f32 : bf16;
  auto other = built_with(g, KernelChoices::format(flipped));
  ASSERT_TRUE(other->infer(inputs()));
  EXPECT_EQ(other->selections().timed + other->selections().reused, 0u);
  EXPECT_NE(plan_text(*other).find(e.label + " [" + e.kernel + "]"), std::string::npos)
      << plan_text(*other);
  // The first backend, and a fresh one timing in this process, keep theirs.
  EXPECT_EQ(plan_text(*timed).find(e.label + " [" + e.kernel + "]"), std::string::npos)
      << plan_text(*timed);
  auto fresh = built_with(g, "");
  ASSERT_TRUE(fresh->infer(inputs()));
  EXPECT_EQ(fresh->config().get<std::string>("kernel_choices", ""),
            KernelChoices::format(*entries));

  // A recorded kernel this machine does not offer: that unit is timed again
  // (or takes this process's earlier timing) and the record is corrected.
  KernelChoices::Entries missing = *entries;
  missing.at(key).kernel = "matmul.bf16.cuda.no_such_kernel";
  auto fixed = built_with(g, KernelChoices::format(missing));
  ASSERT_TRUE(fixed->infer(inputs()));
  EXPECT_EQ(fixed->selections().timed + fixed->selections().reused, 1u);
  EXPECT_EQ(fixed->selections().replayed, entries->size() - 1);
  EXPECT_EQ(fixed->config().get<std::string>("kernel_choices", ""),
            KernelChoices::format(*entries));
}

}  // namespace
}  // namespace hone::cuda
