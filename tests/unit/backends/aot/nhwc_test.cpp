// Channels-last conv nets on aot (nhwc.cpp, emit_nhwc.cpp): the layout each
// step gets, as the kernel plan names it, and outputs against the reference
// where NHWC values meet NCHW readers (Flatten, graph outputs, graph inputs).
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::count_lines;
using testing_util::expect_matches_reference;
using testing_util::pad1;
using testing_util::plan_has;
using testing_util::plan_text;
using testing_util::uniform;

const Dim kBatch = Dim::symbol("batch");

TEST(AotNhwc, ResidualAddIsAPostOpAndDepthwiseStridesAndPads) {
  std::mt19937 rng(3);
  GraphBuilder b("residual");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 12, 10});
  const ValueId a = b.relu(b.conv(x, b.constant("w1", uniform(rng, {8, 3, 3, 3})),
                                  b.constant("b1", uniform(rng, {8})), pad1()));
  const ValueId c2 = b.conv(a, b.constant("w2", uniform(rng, {8, 8, 3, 3})),
                            b.constant("b2", uniform(rng, {8})), pad1());
  const ValueId r = b.relu(b.add(c2, a));  // residual: Conv+Add+Relu, one step
  // Depthwise, stride 2, padded, then Clip fused into it.
  ValueId h = b.conv(r, b.constant("w3", uniform(rng, {8, 1, 3, 3})),
                     b.constant("b3", uniform(rng, {8})), pad1(2, 8));
  h = b.op("Clip", {h, b.scalar_f32("lo", -0.2f), b.scalar_f32("hi", 0.6f)});
  h = b.op("MaxPool", {h},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  b.output(b.flatten(b.global_average_pool(h)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  EXPECT_TRUE(plan_has(*be, "Conv+Add+Relu [conv.f32.aot.dnnl_nhwc+post_ops]")) << plan_text(*be);
  EXPECT_TRUE(plan_has(*be, "Conv+Clip [conv.f32.aot.dnnl_nhwc+post_ops]")) << plan_text(*be);
  EXPECT_TRUE(plan_has(*be, "MaxPool [pool.f32.aot.MaxPool_nhwc]")) << plan_text(*be);
  expect_matches_reference(*g, {{uniform(rng, {1, 3, 12, 10})},
                                {uniform(rng, {3, 3, 12, 10})},
                                {uniform(rng, {8, 3, 12, 10})}});
}

TEST(AotNhwc, ImageConvReadsNchwThroughABlockedResult) {
  // 3 input channels and 16 output channels: oneDNN reads the NCHW input in
  // place into nChw16c scratch, then reorders it channels-last for the next
  // conv. 8 output channels (not a multiple of 16) keep the channels-last copy.
  std::mt19937 rng(7);
  for (const int64_t oc : {16, 8}) {
    GraphBuilder b("image");
    const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 11, 9});
    const ValueId a = b.relu(b.conv(x, b.constant("w1", uniform(rng, {oc, 3, 3, 3})),
                                    b.constant("b1", uniform(rng, {oc})), pad1(2)));
    const ValueId c2 = b.relu(b.conv(a, b.constant("w2", uniform(rng, {16, oc, 3, 3})),
                                     b.constant("b2", uniform(rng, {16})), pad1()));
    b.output(b.flatten(b.global_average_pool(c2)), "y");
    auto g = std::move(b).build();
    ASSERT_TRUE(g) << g.error().to_string();
    auto be = build_aot(*g);
    ASSERT_TRUE(be);
    const std::string first =
        oc == 16 ? "Conv+Relu "
                   "[conv.f32.aot.dnnl_nchw_to_nChw16c+post_ops+reorder.f32.aot.nChw16c_to_nhwc]"
                 : "Conv+Relu [layout.f32.aot.nchw_to_nhwc+conv.f32.aot.dnnl_nhwc+post_ops]";
    EXPECT_TRUE(plan_has(*be, first)) << plan_text(*be);
    expect_matches_reference(*g, {{uniform(rng, {1, 3, 11, 9})},
                                  {uniform(rng, {5, 3, 11, 9})},
                                  {uniform(rng, {2, 3, 11, 9})}});
  }
}

TEST(AotNhwc, NchwReadersKeepTheirProducerNchw) {
  std::mt19937 rng(4);
  GraphBuilder b("readers");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 4, 6, 6});
  const ValueId a = b.relu(b.conv(x, b.constant("w1", uniform(rng, {8, 4, 3, 3})),
                                  b.constant("b1", uniform(rng, {8})), pad1()));
  // `a` feeds a conv (NHWC-aware) and Flatten with H, W > 1 (not): it stays NCHW.
  const ValueId c2 = b.conv(a, b.constant("w2", uniform(rng, {6, 8, 3, 3})), kNoValue, pad1());
  const ValueId f = b.flatten(a);
  b.output(
      b.gemm(f, b.constant("wf", uniform(rng, {8 * 36, 5})), b.constant("bf", uniform(rng, {5}))),
      "fc");
  // A conv output that is a graph output stays NCHW.
  b.output(c2, "conv_out");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  for (const std::string& l : be->describe_kernels())
    EXPECT_EQ(l.find("nhwc"), std::string::npos) << plan_text(*be);
  expect_matches_reference(*g, {{uniform(rng, {1, 4, 6, 6})}, {uniform(rng, {3, 4, 6, 6})}});
}

TEST(AotNhwc, ChainsBetweenConvsRunChannelsLast) {
  std::mt19937 rng(5);
  GraphBuilder b("chains");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 5, 7, 7});
  const ValueId a = b.conv(x, b.constant("w1", uniform(rng, {6, 5, 3, 3})), kNoValue, pad1());
  // Not post-op material: a per-channel Mul and a Sigmoid, run as a loop over NHWC.
  ValueId h = b.mul(a, b.constant("scale", uniform(rng, {6, 1, 1})));
  h = b.sigmoid(h);
  // A stand-alone chain step with two NHWC operands.
  const ValueId c2 =
      b.conv(h, b.constant("w2", uniform(rng, {6, 6, 1, 1})), kNoValue,
             {.strides = {2, 2}, .pads = {0, 0, 0, 0}, .dilations = {1, 1}, .group = 1});
  const ValueId c3 = b.conv(h, b.constant("w3", uniform(rng, {6, 6, 3, 3})), kNoValue, pad1(2));
  const ValueId s = b.sub(c2, c3);
  b.output(b.global_average_pool(b.op("AveragePool", {s},
                                      {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                       {"pads", std::vector<int64_t>{1, 1, 1, 1}}})),
           "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  EXPECT_TRUE(plan_has(
      *be,
      "Conv+Mul+Sigmoid [layout.f32.aot.nchw_to_nhwc+conv.f32.aot.dnnl_nhwc+fused_eltwise_nhwc]"))
      << plan_text(*be);
  expect_matches_reference(*g, {{uniform(rng, {2, 5, 7, 7})}, {uniform(rng, {5, 5, 7, 7})}});
}

TEST(AotNhwc, EveryBatchUpToTheBoundAndBadInputs) {
  std::mt19937 rng(6);
  GraphBuilder b("bounds");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 8, 8});
  ValueId h = b.relu(b.conv(x, b.constant("w1", uniform(rng, {4, 3, 3, 3})), kNoValue, pad1()));
  h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {4, 4, 3, 3})), kNoValue, pad1()));
  b.output(b.global_average_pool(h), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> sets;
  for (int64_t n : {1, 2, 3, 4, 5, 1}) sets.push_back({uniform(rng, {n, 3, 8, 8})});
  expect_matches_reference(*g, sets, {{"dim_bounds", "batch=5"}});
  auto be = build_aot(*g, {{"dim_bounds", "batch=5"}});
  ASSERT_TRUE(be);
  auto over = be->infer({uniform(rng, {6, 3, 8, 8})});
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message().find("outside the compiled bounds [0, 5]"), std::string::npos)
      << over.error().to_string();
  auto wrong = be->infer({uniform(rng, {2, 4, 8, 8})});
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("axis 1 must be 3"), std::string::npos)
      << wrong.error().to_string();
}

}  // namespace
}  // namespace hone::aot

namespace hone::aot {
namespace {

TEST(AotNhwc, DepthwiseThenPointwiseWideChannels) {
  std::mt19937 rng(7);
  GraphBuilder b("dwpw");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 32, 32});
  ValueId h = b.relu(b.conv(x, b.constant("w1", uniform(rng, {16, 3, 3, 3})),
                            b.constant("b1", uniform(rng, {16})), pad1(2)));
  h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {16, 1, 3, 3})),
                    b.constant("b2", uniform(rng, {16})), pad1(1, 16)));
  h = b.relu(b.conv(h, b.constant("w3", uniform(rng, {32, 16, 1, 1})),
                    b.constant("b3", uniform(rng, {32})), {}));
  b.output(b.flatten(b.global_average_pool(h)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {1, 3, 32, 32})}, {uniform(rng, {3, 3, 32, 32})}});
}

TEST(AotNhwc, PoolsWithPaddingStridesAndCeilMode) {
  // The window's in-image taps are computed as ranges up front (tap_range):
  // the same windows as the blocked pools, here channels-last at 16 and 24
  // channels (a dense net: no depthwise conv, so the program stays NHWC).
  std::mt19937 rng(21);
  const auto pools = testing_util::pool_windows();
  for (const int64_t ch : {16, 24}) {
    for (size_t i = 0; i < pools.size(); ++i) {
      const auto& [op, attrs] = pools[i];
      SCOPED_TRACE(op + " #" + std::to_string(i) + " at " + std::to_string(ch) + " channels");
      GraphBuilder b("pools");
      const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 11, 11});
      ValueId h =
          b.relu(b.conv(x, b.constant("w1", uniform(rng, {ch, 3, 3, 3})), kNoValue, pad1()));
      h = b.op(op, {h}, attrs);
      h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {16, ch, 3, 3})), kNoValue, pad1()));
      b.output(b.flatten(b.global_average_pool(h)), "y");
      auto g = std::move(b).build();
      ASSERT_TRUE(g) << g.error().to_string();
      auto be = build_aot(*g);
      ASSERT_TRUE(be);
      EXPECT_TRUE(plan_has(*be, op + " [pool.f32.aot." + op + "_nhwc]")) << plan_text(*be);
      expect_matches_reference(*g,
                               {{uniform(rng, {1, 3, 11, 11})}, {uniform(rng, {5, 3, 11, 11})}});
    }
  }
}

}  // namespace
}  // namespace hone::aot
