// Conv kernels chosen by timing in an nChw16c plan (lower_conv): a 3x3
// stride-1 conv over channels in 16s may run by Winograd, with its ReLU and
// residual sum fused (blocks with such convs are planned in both layouts),
// and a conv left to the direct kernel may run on nhwc. The results stay
// within f32 rounding of the reference whichever kernel runs.
#include <cmath>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::close;
using testing_util::uniform;

/// A residual block in small: x0 = relu(conv1x1(x)), y = relu(conv3x3(relu(
/// conv3x3(x0))) + x0), then a stride-2 3x3 conv (no Winograd kernel) and a
/// 1x1 conv.
Graph residual_block(std::mt19937& rng, int64_t c, int64_t hw) {
  GraphBuilder b("res");
  ValueId x = b.input("x", DType::kF32, Shape{1, c, hw, hw});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t k, int64_t stride) {
    const int64_t p = k / 2;
    const float s = 1.0f / std::sqrt(static_cast<float>(cin * k * k));  // values stay O(1)
    return b.conv(in, b.constant("", uniform(rng, {cout, cin, k, k}, -s, s)),
                  b.constant("", uniform(rng, {cout}, -0.1f, 0.1f)),
                  {.strides = {stride, stride}, .pads = {p, p, p, p}});
  };
  ValueId x0 = b.relu(conv(x, c, c, 1, 1));
  ValueId h = b.relu(conv(x0, c, c, 3, 1));
  ValueId y = b.relu(b.add(conv(h, c, c, 3, 1), x0));
  ValueId down = b.relu(conv(y, c, c, 3, 2));
  b.output(conv(down, c, 16, 1, 1), "y");
  return *std::move(b).build();
}

size_t count_wino(const Plan& p) {
  size_t n = 0;
  for (const Step& s : p.steps) n += s.kind.starts_with("conv[wino]");
  return n;
}

/// Winograd rounds differently from the direct kernel (2-5x its error
/// against exact sums, relative L2 ~5e-7 per conv): well inside this bound,
/// while a wrong tile or a lost post-op is off by whole units.
::testing::AssertionResult near(const Tensor& a, const Tensor& e) {
  return close(a, e, 1e-3, 1e-4);
}

TEST(OnednnWinograd, TheBlockIsPlannedOnNChw16cTooAndMatchesTheReference) {
  std::mt19937 rng(3);
  Graph g = residual_block(rng, 64, 28);
  std::vector<Tensor> in{uniform(rng, {1, 64, 28, 28})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  for (bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "nChw16c" : "oneDNN's pick");
    PlanBuilder builder(g);
    EXPECT_TRUE(builder.has_winograd_conv());
    builder.set_prefer_blocked16(blocked);
    auto plan = builder.build({{1, 64, 28, 28}});
    ASSERT_TRUE(plan) << plan.error().to_string();
    // Only nChw16c has the kernel; the stride-2 and 1x1 convs never take it.
    if (!blocked) EXPECT_EQ(count_wino(**plan), 0u) << (*plan)->describe();
    EXPECT_LE(count_wino(**plan), 2u) << (*plan)->describe();
    std::atomic<uint64_t> executions{0};
    auto got = (*plan)->run(in, &executions);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(near((*got)[0], (*want)[0])) << (*plan)->describe();
  }
}

TEST(OnednnWinograd, AWideConvRunsByWinogradWithItsPostOpsFused) {
  // 128 channels at 56x56 (Winograd takes about half the direct kernel's
  // time at one thread here), Winograd forced so that what is checked does
  // not depend on a timing.
  std::mt19937 rng(4);
  Graph g = residual_block(rng, 128, 56);
  std::vector<Tensor> in{uniform(rng, {1, 128, 56, 56})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  for (bool wino : {true, false}) {
    SCOPED_TRACE(wino ? "Winograd forced" : "Winograd off");
    PlanBuilder builder(g);
    builder.set_prefer_blocked16(true);
    builder.set_winograd(wino);
    auto plan = builder.build({{1, 128, 56, 56}});
    ASSERT_TRUE(plan) << plan.error().to_string();
    const std::string steps = (*plan)->describe();
    if (wino)
      EXPECT_GE(count_wino(**plan), 1u) << steps;
    else
      EXPECT_EQ(count_wino(**plan), 0u) << steps;
    // Each conv's Relu and the residual Add are fused, whichever kernel runs.
    for (const Step& s : (*plan)->steps)
      EXPECT_TRUE(s.kind.starts_with("conv") || s.kind == "reorder") << steps;
    std::atomic<uint64_t> executions{0};
    auto got = (*plan)->run(in, &executions);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(near((*got)[0], (*want)[0])) << steps;
  }
}

TEST(OnednnWinograd, AnInceptionBranchMatchesTheReferenceWhicheverLayoutItsConvsTake) {
  // 1x1 -> 1x7 -> 7x1 and a 1x1 branch joined along channels: the 1x7 and
  // 7x1 convs are timed on nhwc too (charged with the reorders into it and
  // back), the last one writing into the Concat or reordered into it.
  std::mt19937 rng(6);
  GraphBuilder b("branch");
  ValueId x = b.input("x", DType::kF32, Shape{1, 64, 17, 17});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t kh, int64_t kw) {
    const float s = 1.0f / std::sqrt(static_cast<float>(cin * kh * kw));
    return b.relu(b.conv(in, b.constant("", uniform(rng, {cout, cin, kh, kw}, -s, s)),
                         b.constant("", uniform(rng, {cout}, -0.1f, 0.1f)),
                         {.pads = {kh / 2, kw / 2, kh / 2, kw / 2}}));
  };
  ValueId chain = conv(conv(conv(x, 64, 48, 1, 1), 48, 48, 1, 7), 48, 64, 7, 1);
  b.output(b.op("Concat", {conv(x, 64, 32, 1, 1), chain}, {{"axis", int64_t{1}}}), "y");
  Graph g = *std::move(b).build();
  std::vector<Tensor> in{uniform(rng, {1, 64, 17, 17})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  PlanBuilder builder(g);
  builder.set_prefer_blocked16(true);
  auto plan = builder.build({{1, 64, 17, 17}});
  ASSERT_TRUE(plan) << plan.error().to_string();
  std::atomic<uint64_t> executions{0};
  for (int run = 0; run < 2; ++run) {  // the second run reuses the arena
    auto got = (*plan)->run(in, &executions);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(near((*got)[0], (*want)[0])) << (*plan)->describe();
  }
}

TEST(OnednnWinograd, ConvsWithoutAWinogradKernelDoNotAskForTheSecondPlan) {
  std::mt19937 rng(5);
  GraphBuilder b("plain");
  ValueId x = b.input("x", DType::kF32, Shape{1, 24, 8, 8});  // channels not in 16s
  ValueId y = b.conv(x, b.constant("w", uniform(rng, {24, 24, 3, 3})),
                     b.constant("b", uniform(rng, {24})), {.pads = {1, 1, 1, 1}});
  ValueId z = b.conv(y, b.constant("w2", uniform(rng, {32, 24, 3, 3})),
                     b.constant("b2", uniform(rng, {32})), {.strides = {2, 2}});
  b.output(z, "y");
  Graph g = *std::move(b).build();
  EXPECT_FALSE(PlanBuilder(g).has_winograd_conv());
  // Through the backend: the one plan it builds matches the reference.
  auto be = build_onednn(g);
  std::vector<Tensor> in{uniform(rng, {1, 24, 8, 8})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(close((*got)[0], (*want)[0]));
}

}  // namespace
}  // namespace hone::onednn
