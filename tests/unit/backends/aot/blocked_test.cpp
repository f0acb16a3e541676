// Blocked (nChw16c) conv regions on aot (blocked.cpp, emit_blocked.cpp): which
// nets take the layout, as the kernel plan names it, and outputs against the
// reference for convs, post-ops, element-wise chains and pools over it.
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

GraphBuilder::ConvOptions pointwise() {
  return {.strides = {1, 1}, .pads = {0, 0, 0, 0}, .dilations = {1, 1}, .group = 1};
}

/// relu(conv(h)) with `c_out` channels: depthwise when `dw` (3x3), else 1x1.
ValueId conv_relu(GraphBuilder& b, std::mt19937& rng, ValueId h, int64_t c_in, int64_t c_out,
                  bool dw, int64_t stride, const std::string& name) {
  const Tensor w = dw ? uniform(rng, {c_out, 1, 3, 3}) : uniform(rng, {c_out, c_in, 1, 1});
  const auto o = dw ? pad1(stride, c_out) : pointwise();
  return b.relu(
      b.conv(h, b.constant("w" + name, w), b.constant("b" + name, uniform(rng, {c_out})), o));
}

/// A small mobilenet: an image conv, then depthwise/pointwise pairs over
/// `widths` channels, GlobalAveragePool, Flatten and a Gemm.
Graph dw_stack(std::mt19937& rng, const std::vector<int64_t>& widths) {
  GraphBuilder b("dw_stack");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 20, 20});
  ValueId h = b.relu(b.conv(x, b.constant("w0", uniform(rng, {widths[0], 3, 3, 3})),
                            b.constant("b0", uniform(rng, {widths[0]})), pad1(2)));
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    h = conv_relu(b, rng, h, widths[i], widths[i], true, i == 1 ? 2 : 1, std::to_string(2 * i + 1));
    h = conv_relu(b, rng, h, widths[i], widths[i + 1], false, 1, std::to_string(2 * i + 2));
  }
  const int64_t c = widths.back();
  const ValueId f = b.flatten(b.global_average_pool(h));
  b.output(b.gemm(f, b.constant("wf", uniform(rng, {c, 5})), b.constant("bf", uniform(rng, {5}))),
           "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

TEST(AotBlocked, DepthwisePointwiseStackRunsBlocked) {
  std::mt19937 rng(11);
  const Graph g = dw_stack(rng, {16, 32, 64, 64});
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  // The image conv reads NCHW and writes nChw16c itself; 3 pairs of
  // depthwise and pointwise convs follow, all blocked.
  EXPECT_EQ(count_lines(*be, "Conv+Relu [conv.f32.aot.dnnl_nchw_to_nChw16c+post_ops]"), 1)
      << plan_text(*be);
  EXPECT_EQ(count_lines(*be, "Conv+Relu [conv.f32.aot.dnnl_nChw16c+post_ops]"), 6)
      << plan_text(*be);
  EXPECT_EQ(count_lines(*be, "GlobalAveragePool [pool.f32.aot.GlobalAveragePool_nChw16c]"), 1)
      << plan_text(*be);
  EXPECT_EQ(plan_text(*be).find("nhwc"), std::string::npos) << plan_text(*be);
  expect_matches_reference(g, {{uniform(rng, {1, 3, 20, 20})},
                               {uniform(rng, {3, 3, 20, 20})},
                               {uniform(rng, {8, 3, 20, 20})}});
}

TEST(AotBlocked, ChannelsNotAMultipleOf16StayNhwc) {
  // 24 channels: nChw16c would pad; the whole region stays channels-last.
  std::mt19937 rng(12);
  const Graph g = dw_stack(rng, {16, 24, 32});
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  const std::string plan = plan_text(*be);
  EXPECT_EQ(plan.find("nChw16c]"), std::string::npos) << plan;
  EXPECT_EQ(count_lines(*be, "Conv+Relu [conv.f32.aot.dnnl_nhwc+post_ops]"), 4) << plan;
  expect_matches_reference(g, {{uniform(rng, {1, 3, 20, 20})}, {uniform(rng, {4, 3, 20, 20})}});
}

TEST(AotBlocked, DenseConvNetsStayNhwc) {
  // No depthwise conv: NHWC is faster for dense 3x3 convs (see nhwc.h).
  std::mt19937 rng(13);
  GraphBuilder b("dense");
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 12, 12});
  ValueId h = b.relu(b.conv(x, b.constant("w1", uniform(rng, {16, 3, 3, 3})), kNoValue, pad1()));
  h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {32, 16, 3, 3})), kNoValue, pad1()));
  b.output(b.flatten(b.global_average_pool(h)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  EXPECT_EQ(count_lines(*be, "Conv+Relu [conv.f32.aot.dnnl_nhwc+post_ops]"), 1) << plan_text(*be);
  EXPECT_EQ(plan_text(*be).find("nChw16c]"), std::string::npos) << plan_text(*be);
}

TEST(AotBlocked, ResidualAddChainsAndBroadcastOperands) {
  std::mt19937 rng(14);
  GraphBuilder b("residual");
  // A 16-channel graph input: copied into nChw16c by the first conv.
  const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 16, 9, 9});
  // A one-channel mask broadcast over every channel (stays NCHW).
  const ValueId mask = b.input("mask", DType::kF32, Shape{kBatch, 1, 9, 9});
  const ValueId a =
      b.relu(b.conv(x, b.constant("w1", uniform(rng, {16, 16, 1, 1})), kNoValue, pointwise()));
  const ValueId d = b.conv(a, b.constant("w2", uniform(rng, {16, 1, 3, 3})),
                           b.constant("b2", uniform(rng, {16})), pad1(1, 16));
  const ValueId r = b.relu(b.add(d, a));  // residual: a binary post-op over nChw16c
  // Not post-op material: a per-channel Mul, a masked Mul and a Sigmoid, run as a loop.
  ValueId h = b.conv(r, b.constant("w3", uniform(rng, {16, 16, 1, 1})), kNoValue, pointwise());
  h = b.mul(h, b.constant("scale", uniform(rng, {16, 1, 1})));
  h = b.sigmoid(b.mul(h, mask));
  h = b.conv(h, b.constant("w4", uniform(rng, {32, 16, 1, 1})), kNoValue, pointwise());
  h = b.add(h, b.constant("shift", uniform(rng, {1, 32, 1, 1})));
  b.output(b.flatten(b.global_average_pool(h)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  const std::string plan = plan_text(*be);
  EXPECT_EQ(count_lines(*be,
                        "Conv+Relu [layout.f32.aot.nchw_to_nChw16c+conv.f32.aot.dnnl_"
                        "nChw16c+post_ops]"),
            1)
      << plan;
  EXPECT_EQ(count_lines(*be, "Conv+Add+Relu [conv.f32.aot.dnnl_nChw16c+post_ops]"), 1) << plan;
  EXPECT_EQ(
      count_lines(*be, "Conv+Mul+Mul+Sigmoid [conv.f32.aot.dnnl_nChw16c+fused_eltwise_nChw16c]"), 1)
      << plan;
  std::vector<std::vector<Tensor>> sets;
  for (int64_t n : {1, 3, 8})
    sets.push_back({uniform(rng, {n, 16, 9, 9}), uniform(rng, {n, 1, 9, 9})});
  expect_matches_reference(*g, sets);
}

TEST(AotBlocked, MaxAndAveragePoolsOverBlockedValues) {
  std::mt19937 rng(15);
  const auto pools = testing_util::pool_windows();
  for (size_t i = 0; i < pools.size(); ++i) {
    const auto& [op, attrs] = pools[i];
    SCOPED_TRACE(op + " #" + std::to_string(i));
    GraphBuilder b("pools");
    const ValueId x = b.input("x", DType::kF32, Shape{kBatch, 3, 11, 11});
    ValueId h = b.relu(b.conv(x, b.constant("w1", uniform(rng, {32, 3, 3, 3})), kNoValue, pad1()));
    h = b.op(op, {h}, attrs);
    h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {32, 1, 3, 3})), kNoValue, pad1(1, 32)));
    b.output(b.flatten(b.global_average_pool(h)), "y");
    auto g = std::move(b).build();
    ASSERT_TRUE(g) << g.error().to_string();
    auto be = build_aot(*g);
    ASSERT_TRUE(be);
    EXPECT_EQ(count_lines(*be, op + " [pool.f32.aot." + op + "_nChw16c]"), 1) << op << "\n"
                                                                              << plan_text(*be);
    expect_matches_reference(*g, {{uniform(rng, {1, 3, 11, 11})}, {uniform(rng, {5, 3, 11, 11})}});
  }
}

TEST(AotBlocked, EveryBatchUpToTheBound) {
  std::mt19937 rng(16);
  const Graph g = dw_stack(rng, {16, 32});
  auto be = build_aot(g, {{"dim_bounds", "batch=6"}});
  ASSERT_TRUE(be);
  EXPECT_EQ(count_lines(*be, "Conv+Relu [conv.f32.aot.dnnl_nChw16c+post_ops]"), 2)
      << plan_text(*be);
  std::vector<std::vector<Tensor>> sets;
  // Down again at the end: primitives cached per batch size are reused.
  for (int64_t n : {1, 2, 3, 4, 5, 6, 2}) sets.push_back({uniform(rng, {n, 3, 20, 20})});
  expect_matches_reference(g, sets, {{"dim_bounds", "batch=6"}});
  auto over = be->infer({uniform(rng, {7, 3, 20, 20})});
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message().find("outside the compiled bounds [0, 6]"), std::string::npos)
      << over.error().to_string();
}

}  // namespace
}  // namespace hone::aot
