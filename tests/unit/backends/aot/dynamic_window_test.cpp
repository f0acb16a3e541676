// Convolutions and pools over a spatial dim known only at run time (an audio
// model's time axis), against the reference: 1-D convs padded, strided,
// dilated, grouped and depthwise with a chain after them, pools, a 2-D conv
// whose width is dynamic, InstanceNormalization over such planes, the clear error of an input
// shorter than the window, and the static path's code unchanged by it.
#include "aot_test_util.h"
#include "backends/aot/program.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_matches_reference;
using testing_util::uniform;

TEST(AotDynamicWindow, OneDimensionalConvsAndPoolsOverARunTimeLength) {
  std::mt19937 rng(11);
  GraphBuilder b("audio");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 5, Dim::symbol("seq")});
  // Whisper's stem: k3 pad 1, then k3 stride 2 pad 1, each with an activation.
  ValueId h =
      b.conv(x, b.constant("w1", uniform(rng, {8, 5, 3})), b.constant("b1", uniform(rng, {8})),
             {.strides = {1}, .pads = {1, 1}, .dilations = {1}, .group = 1});
  h = b.op("Tanh", {h});
  h = b.conv(h, b.constant("w2", uniform(rng, {8, 8, 3})), kNoValue,
             {.strides = {2}, .pads = {1, 1}, .dilations = {1}, .group = 1});
  h = b.relu(h);
  // wav2vec2's positional conv: grouped, wide, padded; a dilated one; depthwise.
  h = b.conv(h, b.constant("w3", uniform(rng, {8, 2, 6})), b.constant("b3", uniform(rng, {8})),
             {.strides = {1}, .pads = {3, 3}, .dilations = {1}, .group = 4});
  h = b.conv(h, b.constant("w4", uniform(rng, {8, 8, 2})), kNoValue,
             {.strides = {1}, .pads = {2, 0}, .dilations = {2}, .group = 1});
  h = b.conv(h, b.constant("w5", uniform(rng, {8, 1, 3})), b.constant("b5", uniform(rng, {8})),
             {.strides = {1}, .pads = {1, 1}, .dilations = {1}, .group = 8});
  const ValueId pw = b.conv(h, b.constant("w6", uniform(rng, {3, 8, 1})), kNoValue,
                            {.strides = {1}, .pads = {0, 0}, .dilations = {1}, .group = 1});
  const ValueId mp = b.op("MaxPool", {h},
                          {{"kernel_shape", std::vector<int64_t>{3}},
                           {"strides", std::vector<int64_t>{2}},
                           {"pads", std::vector<int64_t>{1, 1}}});
  const ValueId ap = b.op("AveragePool", {h},
                          {{"kernel_shape", std::vector<int64_t>{2}},
                           {"pads", std::vector<int64_t>{1, 0}},
                           {"count_include_pad", int64_t{1}}});
  b.output(pw, "pointwise");
  b.output(mp, "max");
  b.output(ap, "avg");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> sets;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {2, 7}, {1, 40}, {3, 13}})
    sets.push_back({uniform(rng, {batch, 5, seq})});
  expect_matches_reference(*g, sets, {{"dim_bounds", "batch=3,seq=40"}});
  // Output extents as expressions of seq: a stride-1 "same" conv keeps seq
  // itself (so it meets other values of dim seq), the stride-2 one halves it.
  auto p = lower(*g, {.bounds = {{"batch", 3}, {"seq", 40}}});
  ASSERT_TRUE(p) << p.error().to_string();
  const Graph& lg = *p->graph;
  EXPECT_EQ(to_string(p->values[static_cast<size_t>(lg.nodes()[0].outputs[0])].dims),
            "[batch,8,seq]");
  EXPECT_EQ(to_string(p->values[static_cast<size_t>(lg.nodes()[2].outputs[0])].dims),
            "[batch,8,(((seq-1)/2)+1)]");
}

TEST(AotDynamicWindow, TwoDimensionalConvWithARunTimeWidth) {
  std::mt19937 rng(12);
  GraphBuilder b("spectrogram");
  const ValueId x = b.input("x", DType::kF32, Shape{1, 3, 6, Dim::symbol("frames")});
  ValueId h =
      b.conv(x, b.constant("w1", uniform(rng, {4, 3, 3, 3})), b.constant("b1", uniform(rng, {4})),
             {.strides = {2, 2}, .pads = {1, 1, 1, 1}, .dilations = {1, 1}, .group = 1});
  h = b.conv(h, b.constant("w2", uniform(rng, {4, 1, 3, 3})), kNoValue,
             {.strides = {1, 1}, .pads = {1, 1, 1, 1}, .dilations = {1, 1}, .group = 4});
  h = b.op("MaxPool", {h},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{1, 2}}});
  b.output(h, "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> sets;
  for (int64_t frames : {3, 16, 9}) sets.push_back({uniform(rng, {1, 3, 6, frames})});
  expect_matches_reference(*g, sets, {{"dim_bounds", "frames=16"}});
}

TEST(AotDynamicWindow, InstanceNormalizationOverRunTimeAndStaticPlanes) {
  // wav2vec2's first norm over [batch, C, frames], and GroupNorm as exported:
  // Reshape to [N, groups, -1], InstanceNormalization, Reshape back, Mul, Add.
  std::mt19937 rng(16);
  GraphBuilder b("norms");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, Dim::symbol("seq")});
  const ValueId a = b.op(
      "InstanceNormalization",
      {x, b.constant("s1", uniform(rng, {4}, 0.5f, 1.5f)), b.constant("b1", uniform(rng, {4}))},
      {{"epsilon", 1e-3f}});
  b.output(b.op("Gelu", {a}), "audio");
  const ValueId img = b.input("img", DType::kF32, Shape{2, 6, 5, 3});
  const ValueId shape = b.constant("group_shape", Tensor::from<int64_t>({3}, {2, 3, -1}));
  ValueId h = b.op("Reshape", {img, shape});
  h = b.op("InstanceNormalization", {h, b.constant("ones", Tensor::from<float>({3}, {1, 1, 1})),
                                     b.constant("zeros", Tensor::from<float>({3}, {0, 0, 0}))});
  h = b.op("Reshape", {h, b.constant("back", Tensor::from<int64_t>({4}, {2, 6, 5, 3}))});
  h = b.add(b.mul(h, b.constant("gamma", uniform(rng, {6, 1, 1}))),
            b.constant("beta", uniform(rng, {6, 1, 1})));
  b.output(h, "grouped");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> sets;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {2, 33}, {3, 200}})
    sets.push_back({uniform(rng, {batch, 4, seq}), uniform(rng, {2, 6, 5, 3})});
  expect_matches_reference(*g, sets, {{"dim_bounds", "batch=3,seq=200"}});
}

TEST(AotDynamicWindow, AnInputShorterThanTheWindowFailsWithAMessage) {
  std::mt19937 rng(13);
  GraphBuilder b("strided");
  const ValueId x = b.input("x", DType::kF32, Shape{1, 1, Dim::symbol("seq")});
  // wav2vec2's first conv: kernel 10, stride 5, no padding.
  b.output(b.conv(x, b.constant("w", uniform(rng, {4, 1, 10})), kNoValue,
                  {.strides = {5}, .pads = {0, 0}, .dilations = {1}, .group = 1}),
           "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {1, 1, 10})}, {uniform(rng, {1, 1, 64})}});
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  auto got = be->infer({uniform(rng, {1, 1, 9})});
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("Conv: a spatial dim of 9 is smaller than its window (10"),
            std::string::npos)
      << got.error().to_string();
  // Bounds no input could run at are refused when lowering (the node falls back).
  auto p = lower(*g, {.bounds = {{"seq", 9}}});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(p.error().to_string().find("at its bounds (9) is smaller than the window (10"),
            std::string::npos)
      << p.error().to_string();
}

TEST(AotDynamicWindow, SameAutoPadOverARunTimeDimIsNotLowered) {
  std::mt19937 rng(14);
  GraphBuilder b("same");
  const ValueId x = b.input("x", DType::kF32, Shape{1, 2, Dim::symbol("seq")});
  const ValueId w = b.constant("w", uniform(rng, {2, 2, 3}));
  b.output(b.op("Conv", {x, w}, {{"auto_pad", std::string("SAME_UPPER")}}), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto p = lower(*g, {});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(p.error().to_string().find("auto_pad SAME"), std::string::npos)
      << p.error().to_string();
}

TEST(AotDynamicWindow, StaticConvCodeHasNoRunTimeExtents) {
  std::mt19937 rng(15);
  GraphBuilder b("static");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 10});
  b.output(b.conv(x, b.constant("w", uniform(rng, {4, 2, 3})), kNoValue,
                  {.strides = {2}, .pads = {1, 1}, .dilations = {1}, .group = 2}),
           "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto p = lower(*g, {});
  ASSERT_TRUE(p) << p.error().to_string();
  const std::string src = emit_c(*p, {});
  // The extents stay numbers: the only run-time dim the step reads is the batch.
  EXPECT_NE(src.find("for (int64_t ow = 0; ow < 5; ++ow)"), std::string::npos) << src;
  EXPECT_EQ(src.find("smaller than its window"), std::string::npos);
}

}  // namespace
}  // namespace hone::aot
