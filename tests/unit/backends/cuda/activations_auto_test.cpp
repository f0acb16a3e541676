// activations=auto on the GPU (activations_choice.h): under bf16/fp16 each
// block builds its Program with half and with f32 activations, times both
// and keeps the faster. Which one wins is the device's business, so these
// tests assert what does not depend on it: the choice is recorded in
// kernel_choices as half or f32, the outputs are within the precision's
// bound either way, the kernel plan names the choice and both times, a
// record forcing either storage builds that plan untimed with the bits of
// the forced setting, and a block with no half value is not timed. Every
// test skips, with the reason, without a CUDA device or cuDNN.
#include <cmath>
#include <cstdio>

#include "backends/cuda/activations_choice.h"
#include "backends/cuda/cudnn_api.h"
#include "cuda_test_util.h"
#include "hone/correctness.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::close;
using testing_util::f64_truth;
using testing_util::plan_text;
using testing_util::same_bits;
using testing_util::uniform;
using testing_util::weights;

using Ints = std::vector<int64_t>;
using Settings = std::vector<std::pair<std::string, std::string>>;

/// A small ResNet-like net: stem conv, MaxPool, a residual block, a 1x1
/// conv, global pool, Flatten, Gemm. Half NHWC from the stem to the pool.
Graph conv_net() {
  std::mt19937 rng(21);
  GraphBuilder b("auto_convs");
  auto conv = [&](ValueId x, const char* w, Ints dims, GraphBuilder::ConvOptions o) {
    const std::string bias = std::string(w) + "_b";
    return b.conv(x, b.constant(w, weights(rng, dims)),
                  b.constant(bias, uniform(rng, {dims[0]}, -0.2f, 0.2f)), std::move(o));
  };
  ValueId x = b.input("x", DType::kF32, Shape{8, 3, 32, 32});
  ValueId stem =
      b.relu(conv(x, "w_stem", {32, 3, 3, 3}, {.strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  ValueId p = b.max_pool(stem, {3, 3}, {2, 2}, {1, 1, 1, 1});  // [8, 32, 8, 8]
  ValueId h = b.relu(conv(p, "w_a", {32, 32, 3, 3}, {.pads = {1, 1, 1, 1}}));
  ValueId r = b.relu(b.add(conv(h, "w_b", {32, 32, 3, 3}, {.pads = {1, 1, 1, 1}}), p));
  ValueId wide = b.relu(conv(r, "w_w", {64, 32, 1, 1}, {}));
  ValueId flat = b.flatten(b.global_average_pool(wide));
  b.output(b.gemm(flat, b.constant("w_fc", weights(rng, {10, 64})),
                  b.constant("b_fc", uniform(rng, {10}, -0.2f, 0.2f)), {.trans_b = true}),
           "logits");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

/// A conv whose output only readers without a half kernel read (Softmax,
/// and the block output): the half Program is the f32 one plus two
/// conversions, so it can at best tie; which wins is still the timing's.
Graph conversions_net() {
  std::mt19937 rng(22);
  GraphBuilder b("auto_conversions");
  ValueId x = b.input("x", DType::kF32, Shape{4, 16, 12, 12});
  ValueId y = b.conv(x, b.constant("w", weights(rng, {16, 16, 3, 3})),
                     b.constant("bias", uniform(rng, {16})), {.pads = {1, 1, 1, 1}});
  b.output(b.softmax(y, 1), "probs");
  b.output(y, "features");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  return g;
}

struct Net {
  const char* name;
  Graph (*make)();
  Ints input;
};
const Net kNets[] = {{"conv net", conv_net, {8, 3, 32, 32}},
                     {"conversions", conversions_net, {4, 16, 12, 12}}};

std::vector<Tensor> inputs_for(const Net& n) {
  std::mt19937 rng(23);
  return {uniform(rng, n.input)};
}

/// Builds `g` on cuda with `settings` and the given kernel_choices, runs
/// `in` and checks every output against the f64 truth within bf16's bound,
/// every node on cuda and no fallback.
std::unique_ptr<CudaBackend> run_checked(const Graph& g, const std::vector<Tensor>& in,
                                         const Settings& settings, const std::string& choices,
                                         std::vector<Tensor>* out = nullptr) {
  auto be = std::make_unique<CudaBackend>();
  EXPECT_TRUE(be->configure("precision", "bf16"));
  for (const auto& [k, v] : settings) EXPECT_TRUE(be->configure(k, v)) << k << "=" << v;
  EXPECT_TRUE(be->configure("kernel_choices", choices));
  auto built = be->build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  if (!built) return be;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  const std::vector<Tensor> want = f64_truth(g, in);
  auto got = be->infer(in);
  EXPECT_TRUE(got) << got.error().to_string() << "\n" << plan_text(*be);
  if (!got) return be;
  const Tolerance tol = Tolerance::for_precision(Precision::kBf16);
  EXPECT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size() && i < got->size(); ++i)
    EXPECT_TRUE(close((*got)[i], want[i], tol.rtol, tol.atol)) << "output " << i << "\n"
                                                               << plan_text(*be);
  EXPECT_EQ(be->fallback_runs(), 0u) << plan_text(*be);
  if (out != nullptr) *out = std::move(*got);
  return be;
}

/// The activations entries of a backend's record.
std::vector<KernelChoices::Entry> activations_entries(const CudaBackend& be) {
  auto entries = KernelChoices::parse(be.config().get<std::string>("kernel_choices", ""));
  EXPECT_TRUE(entries) << entries.error().to_string();
  std::vector<KernelChoices::Entry> out;
  if (entries)
    for (const auto& [key, e] : *entries)
      if (is_activations_label(e.label)) out.push_back(e);
  return out;
}

/// The kernel plan without the activations lines (which say how the
/// storage was settled, and so differ between a timed and a replayed build).
std::vector<std::string> plan_without_decision(const CudaBackend& be) {
  std::vector<std::string> out;
  for (const std::string& l : be.describe_kernels())
    if (!l.starts_with("block '") && !l.starts_with("choice: block '")) out.push_back(l);
  return out;
}

TEST(CudaActivationsAuto, EachNetRecordsItsChoiceAndMatchesEitherWay) {
  HONE_REQUIRE_CUDNN();
  for (const Net& n : kNets) {
    SCOPED_TRACE(n.name);
    const Graph g = n.make();
    auto be = run_checked(g, inputs_for(n), {}, "");  // activations: the default, auto
    ASSERT_EQ(be->config().get<std::string>("activations", ""), "auto");
    const std::string plan = plan_text(*be);
    std::printf("[   INFO   ] %s kernel plan:\n%s\n", n.name, plan.c_str());
    const auto acts = activations_entries(*be);
    ASSERT_EQ(acts.size(), 1u) << plan;
    const KernelChoices::Entry& e = acts[0];
    ASSERT_TRUE(e.kernel == "half" || e.kernel == "f32") << e.kernel;
    EXPECT_EQ(e.mode, "bf16");
    EXPECT_EQ(e.shapes, shapes_text({n.input}));
    // The plan names the choice and both times; its lines are the chosen
    // Program's: conversions and NHWC convs only when half won.
    const std::string decided = e.label + " " + e.shapes + ": " +
                                (e.kernel == "half" ? "half (bf16), timed" : "f32, timed");
    EXPECT_NE(plan.find(decided), std::string::npos) << plan;
    EXPECT_NE(plan.find(" ms, f32 "), std::string::npos) << plan;
    EXPECT_NE(plan.find("choice: " + e.label + " " + e.shapes + " bf16 -> " + e.kernel),
              std::string::npos)
        << plan;
    EXPECT_EQ(plan.find("convert '") != std::string::npos, e.kernel == "half") << plan;
    // Every entry is the kept Program's or the choice itself: the other
    // Program's selections were dropped with it.
    auto entries = KernelChoices::parse(be->config().get<std::string>("kernel_choices", ""));
    ASSERT_TRUE(entries);
    const ChoiceCounts c = be->selections();
    EXPECT_EQ(c.replayed, 0u);
    EXPECT_EQ(c.timed + c.reused, entries->size()) << KernelChoices::format(*entries);
  }
}

TEST(CudaActivationsAuto, ARecordedChoiceBuildsThatPlanUntimed) {
  HONE_REQUIRE_CUDNN();
  const Net& n = kNets[0];
  const Graph g = n.make();
  const auto in = inputs_for(n);
  auto timed = run_checked(g, in, {}, "");
  const auto acts = activations_entries(*timed);
  ASSERT_EQ(acts.size(), 1u) << plan_text(*timed);
  for (const char* storage : {"half", "f32"}) {
    SCOPED_TRACE(storage);
    // The forced setting's own record and bits; then that record with the
    // activations entry naming the same storage, under auto.
    std::vector<Tensor> want, got;
    auto forced = run_checked(g, in, {{"activations", storage}}, "", &want);
    EXPECT_TRUE(activations_entries(*forced).empty()) << "a forced storage records no choice";
    auto entries = KernelChoices::parse(forced->config().get<std::string>("kernel_choices", ""));
    ASSERT_TRUE(entries) << entries.error().to_string();
    KernelChoices::Entry e = acts[0];
    e.kernel = storage;
    (*entries)[KernelChoices::escape(e.label) + "|" + e.shapes + "|" + e.mode] = e;
    const std::string given = KernelChoices::format(*entries);
    auto replay = run_checked(g, in, {{"activations", "auto"}}, given, &got);
    const ChoiceCounts c = replay->selections();
    EXPECT_EQ(c.timed, 0u) << plan_text(*replay);
    EXPECT_EQ(c.reused, 0u) << plan_text(*replay);
    EXPECT_EQ(c.replayed, entries->size()) << plan_text(*replay);
    EXPECT_EQ(replay->config().get<std::string>("kernel_choices", ""), given);
    EXPECT_EQ(plan_without_decision(*replay), plan_without_decision(*forced));
    const std::string line = e.label + " " + e.shapes + ": " +
                             (std::string(storage) == "half" ? "half (bf16)" : "f32") +
                             ", from kernel_choices (not timed)";
    EXPECT_NE(plan_text(*replay).find(line), std::string::npos) << plan_text(*replay);
    EXPECT_TRUE(same_bits(got, want)) << "the replayed plan computed other bits than forced";
  }
  // An entry naming neither is refused at build, naming it.
  KernelChoices::Entry bad = acts[0];
  auto be = std::make_unique<CudaBackend>();
  ASSERT_TRUE(be->configure("precision", "bf16"));
  const std::string text = KernelChoices::escape(bad.label) + "|" + bad.shapes + "|bf16=x";
  ASSERT_TRUE(be->configure("kernel_choices", text));
  auto built = be->build(g);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(built.error().to_string().find("'" + text + "'"), std::string::npos)
      << built.error().to_string();
}

TEST(CudaActivationsAuto, ABlockWithNoHalfValueIsNotTimed) {
  HONE_REQUIRE_CUDA();
  // No producer here writes bf16 from f32 inputs (no conv, no pool, a chain
  // only over a half operand): the half plan is the f32 one, not timed.
  std::mt19937 rng(24);
  GraphBuilder b("auto_nothing_half");
  ValueId x = b.input("x", DType::kF32, Shape{4, 64});
  b.output(b.softmax(b.mul(b.relu(x), b.scalar_f32("two", 2.0f))), "y");
  const Graph g = *std::move(b).build();
  auto be = run_checked(g, {uniform(rng, {4, 64})}, {}, "");
  EXPECT_TRUE(activations_entries(*be).empty()) << plan_text(*be);
  EXPECT_NE(plan_text(*be).find(": f32, no value has a bf16 kernel here (not timed)"),
            std::string::npos)
      << plan_text(*be);
  EXPECT_EQ(plan_text(*be).find("convert '"), std::string::npos) << plan_text(*be);
}

}  // namespace
}  // namespace hone::cuda
