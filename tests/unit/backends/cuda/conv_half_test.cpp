// The bf16/f16 NHWC cuDNN conv (ops_conv.cpp: input converted to half NHWC,
// cudnnConvolutionForward, epilogue back to f32 NCHW with bias, residual and
// Relu) against the reference interpreter, on the GPU: forced with
// conv_select=cudnn_nhwc, and offered to the timed selection, whose record
// replays untimed. Every test skips, with the reason, on a machine without a
// CUDA device or without cuDNN.
#include <cmath>
#include <cstdio>
#include <tuple>

#include "backends/cuda/cudnn_api.h"
#include "cuda_test_util.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::same_bits;
using testing_util::uniform;
using testing_util::weights;

using Ints = std::vector<int64_t>;
using Settings = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kN = 3;
constexpr int kConvs = 6;  // conv units in model(), each group 1 with symmetric pads

/// Six convs, one unit each: the index paths of the conversion kernels (tiled
/// for 16 channels or more, else element by element; channel and position
/// counts that leave tiles partial), the epilogue's parts, and weights that
/// are constants (converted at plan time) or an input (converted per run).
Graph model() {
  std::mt19937 rng(41);
  GraphBuilder b("nhwc");
  ValueId x = b.input("x", DType::kF32, Shape{kN, 16, 10, 9});  // 90 positions: 3 tiles, 1 partial
  auto bias = [&](const char* name, int64_t m) {
    return b.constant(name, uniform(rng, {m}, -0.5f, 0.5f));
  };
  // 3x3 pad 1, bias, Relu; 40 outputs: one full channel tile and one of 8.
  ValueId h = b.relu(b.conv(x, b.constant("w1", weights(rng, {40, 16, 3, 3})), bias("b1", 40),
                            {.pads = {1, 1, 1, 1}}));
  // 3x3 pad 1, bias, the residual Add of x, Relu.
  ValueId r = b.relu(b.add(b.conv(h, b.constant("w2", weights(rng, {16, 40, 3, 3})), bias("b2", 16),
                                  {.pads = {1, 1, 1, 1}}),
                           x));
  b.output(r, "block");
  // 1x1 stride 2, bias, no Relu.
  b.output(b.conv(r, b.constant("w3", weights(rng, {32, 16, 1, 1})), bias("b3", 32),
                  {.strides = {2, 2}}),
           "strided");
  // 3 input channels (an image), no bias, Relu: the element-wise input conversion.
  ValueId img = b.input("img", DType::kF32, Shape{kN, 3, 15, 14});
  b.output(b.relu(b.conv(img, b.constant("w4", weights(rng, {8, 3, 3, 3})), kNoValue,
                         {.pads = {1, 1, 1, 1}})),
           "rgb");
  // 5 outputs, 1x1 stride 2, bias: the element-wise epilogue.
  b.output(
      b.conv(x, b.constant("w5", weights(rng, {5, 16, 1, 1})), bias("b5", 5), {.strides = {2, 2}}),
      "five");
  // Weights that are an input: converted to KRSC on every run, in the workspace.
  ValueId wi = b.input("wi", DType::kF32, Shape{24, 16, 3, 3});
  b.output(b.conv(x, wi, bias("b6", 24), {.pads = {1, 1, 1, 1}}), "input_weights");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);  // as model loading does: the residual Add's shapes are known
  return g;
}

std::vector<Tensor> inputs() {
  std::mt19937 rng(42);
  return {uniform(rng, {kN, 16, 10, 9}), uniform(rng, {kN, 3, 15, 14}),
          weights(rng, {24, 16, 3, 3})};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CudaConvHalf, ForcedNhwcConvsMatchTheReferenceInBf16AndFp16) {
  HONE_REQUIRE_CUDNN();
  const Graph g = model();
  // bf16 keeps 8 bits (2^-9 relative), f16 11: each conv rounds its operands
  // and its output; a wrong index or a lost bias is off by whole units.
  const std::tuple<const char*, const char*, double> cases[] = {{"bf16", "bf16", 5e-2},
                                                                {"fp16", "f16", 1e-2}};
  for (const auto& [precision, type, tol] : cases) {
    SCOPED_TRACE(precision);
    auto be = expect_matches_reference(g, inputs(), tol, tol,
                                       {{"precision", precision}, {"conv_select", "cudnn_nhwc"}});
    const std::string plan = plan_text(*be);
    const std::string kernel = std::string("conv2d.") + type + ".cuda.cudnn_nhwc[algo ";
    // Every conv on the NHWC kernel, odd channel counts included; nothing on
    // im2col or on the f32 cuDNN conv.
    EXPECT_EQ(count(plan, kernel), static_cast<size_t>(kConvs)) << plan;
    EXPECT_EQ(plan.find("im2col"), std::string::npos) << plan;
    EXPECT_EQ(plan.find(".cuda.cudnn[algo "), std::string::npos) << plan;
    // The residual Add and the Relu inside the unit: one unit per conv.
    EXPECT_NE(plan.find("]+add+relu]"), std::string::npos) << plan;
    EXPECT_EQ(be->kernel_executions(), static_cast<uint64_t>(kConvs)) << plan;
    // Each geometry's algorithm was searched (or replayed) under its own entry.
    const std::string choices = be->config().get<std::string>("kernel_choices", "");
    EXPECT_EQ(count(choices, " cudnn-find-nhwc|"), static_cast<size_t>(kConvs)) << choices;
    EXPECT_EQ(count(choices, "=cudnn_nhwc[algo "), static_cast<size_t>(kConvs)) << choices;
  }
}

TEST(CudaConvHalf, TimedSelectionOffersNhwcAndItsRecordReplaysUntimed) {
  HONE_REQUIRE_CUDNN();
  const Graph g = model();
  const Settings settings = {
      {"precision", "bf16"}, {"conv_select", "time"}, {"activations", "f32"}};
  // Whichever candidate wins a geometry (f32 cuDNN, im2col + bf16 GEMM, NHWC
  // bf16 cuDNN), the results are within bf16's tolerance.
  auto timed = expect_matches_reference(g, inputs(), 5e-2, 5e-2, settings);
  const std::string choices = timed->config().get<std::string>("kernel_choices", "");
  // The NHWC candidate was planned for every conv (its algorithm recorded) and
  // so took part in the timing; f32 and half records stay apart.
  EXPECT_EQ(count(choices, " cudnn-find-nhwc|"), static_cast<size_t>(kConvs)) << choices;
  EXPECT_EQ(count(choices, " cudnn-find|"), static_cast<size_t>(kConvs)) << choices;
  EXPECT_EQ(count(choices, "=cudnn_nhwc[algo "), static_cast<size_t>(kConvs)) << choices;
  auto entries = KernelChoices::parse(choices);
  ASSERT_TRUE(entries) << entries.error().to_string();
  for (const auto& [key, e] : *entries) {
    if (e.label.ends_with(" cudnn-find-nhwc"))
      EXPECT_TRUE(e.kernel.starts_with("cudnn_nhwc[algo ")) << key << " -> " << e.kernel;
    else if (e.label.ends_with(" cudnn-find"))
      EXPECT_TRUE(e.kernel.starts_with("cudnn[algo ")) << key << " -> " << e.kernel;
  }
  std::printf("[   INFO   ] timed under bf16:\n%s\n", plan_text(*timed).c_str());
  auto want = timed->infer(inputs());
  ASSERT_TRUE(want) << want.error().to_string();

  // A second backend given the record times nothing and plans the same kernels.
  auto replay = std::make_unique<CudaBackend>();
  for (const auto& [k, v] : settings) ASSERT_TRUE(replay->configure(k, v));
  ASSERT_TRUE(replay->configure("kernel_choices", choices));
  auto built = replay->build(g);
  ASSERT_TRUE(built) << built.error().to_string();
  auto got = replay->infer(inputs());
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ(replay->selections().timed, 0u);
  EXPECT_EQ(replay->selections().reused, 0u);
  EXPECT_EQ(replay->selections().replayed, entries->size());
  EXPECT_EQ(replay->describe_kernels(), timed->describe_kernels());
  EXPECT_TRUE(same_bits(*got, *want)) << "replayed choices computed other bits";
}

TEST(CudaConvHalf, NhwcIsNotOfferedUnderTf32OrToGroupedConvs) {
  HONE_REQUIRE_CUDNN();
  std::mt19937 rng(43);
  GraphBuilder b("grouped");
  ValueId x = b.input("x", DType::kF32, Shape{2, 16, 8, 8});
  b.output(b.relu(b.conv(x, b.constant("wg", weights(rng, {16, 4, 3, 3})),
                         b.constant("bg", uniform(rng, {16})), {.pads = {1, 1, 1, 1}, .group = 4})),
           "grouped");
  b.output(
      b.conv(x, b.constant("w", weights(rng, {8, 16, 1, 1})), b.constant("b", uniform(rng, {8}))),
      "plain");
  Graph g = *std::move(b).build();
  // Forced: the grouped conv keeps the f32 cuDNN conv, the plain one goes NHWC.
  auto forced = expect_matches_reference(g, {uniform(rng, {2, 16, 8, 8})}, 5e-2, 5e-2,
                                         {{"precision", "bf16"}, {"conv_select", "cudnn_nhwc"}});
  const std::string plan = plan_text(*forced);
  EXPECT_EQ(count(plan, ".cuda.cudnn_nhwc[algo "), 1u) << plan;
  EXPECT_EQ(count(plan, "conv2d.f32.cuda.cudnn[algo "), 1u) << plan;
  // tf32: no half candidate at all, so no half record.
  auto tf32 = expect_matches_reference(g, {uniform(rng, {2, 16, 8, 8})}, 5e-3, 5e-3,
                                       {{"precision", "tf32"}});
  EXPECT_EQ(tf32->config().get<std::string>("kernel_choices", "").find("cudnn-find-nhwc"),
            std::string::npos);
}

}  // namespace
}  // namespace hone::cuda
