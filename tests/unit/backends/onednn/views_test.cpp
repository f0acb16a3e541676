// Layout views on oneDNN (views.cpp, lower_transpose): a Transpose or
// Reshape of a value is its bytes seen through other dims, in whatever
// layout the value lives, and Slice/Split copy parts of a channels-last
// value into channels-last. Every case runs in both conv layouts (oneDNN's
// pick and nChw16c) and is checked against the reference.
#include <functional>

#include "backends/onednn/impl_name.h"
#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::uniform;

size_t count_steps(const Plan& p, const std::string& kind) {
  size_t n = 0;
  for (const Step& s : p.steps) n += s.kind == kind;
  return n;
}

/// Builds `g` for `dims` in both conv layouts, runs `in` and compares every
/// output with the reference; `check` sees each plan.
void expect_both_layouts_match(const Graph& g, const std::vector<Tensor>& in,
                               const std::function<void(const Plan&, bool)>& check = {}) {
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  std::vector<dims_t> dims;
  for (const Tensor& t : in) dims.push_back(t.shape());
  for (bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "nChw16c" : "oneDNN's pick");
    PlanBuilder builder(g);
    builder.set_prefer_blocked16(blocked);
    auto plan = builder.build(dims);
    ASSERT_TRUE(plan) << plan.error().to_string();
    std::atomic<uint64_t> executions{0};
    auto got = (*plan)->run(in, &executions);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(close((*got)[i], (*want)[i])) << "output " << i << ": " << (*plan)->describe();
    if (check) check(**plan, blocked);
  }
}

ValueId conv3x3(GraphBuilder& b, std::mt19937& rng, ValueId x, int64_t cin, int64_t cout) {
  return b.relu(b.conv(x, b.constant("", uniform(rng, {cout, cin, 3, 3})),
                       b.constant("", uniform(rng, {cout})), {.pads = {1, 1, 1, 1}}));
}

TEST(OnednnViews, ConvNextBlockTransposesWithoutCopies) {
  // Conv -> NHWC -> LayerNorm -> MatMul -> NCHW -> residual Add, as
  // ConvNeXt writes its blocks: the Transposes are views of the values.
  std::mt19937 rng(1);
  GraphBuilder b("convnext");
  ValueId x = b.input("x", DType::kF32, Shape{1, 32, 10, 10});
  ValueId c = conv3x3(b, rng, x, 32, 32);
  ValueId nhwc = b.transpose(c, {0, 2, 3, 1});
  ValueId ln =
      b.layer_norm(nhwc, b.constant("", uniform(rng, {32})), b.constant("", uniform(rng, {32})));
  ValueId mm = b.matmul(ln, b.constant("", uniform(rng, {32, 32})));
  ValueId back = b.transpose(mm, {0, 3, 1, 2});
  b.output(b.add(back, c), "y");
  Graph g = *std::move(b).build();
  expect_both_layouts_match(g, {uniform(rng, {1, 32, 10, 10})}, [](const Plan& p, bool blocked) {
    // The input into the conv's layout and the output to plain; on nChw16c
    // also the conv's output to NHWC and the residual into the transposed
    // layout. Copying the Transposes' sources to plain first took 3 more.
    EXPECT_LE(count_steps(p, "reorder"), blocked ? 4u : 2u) << p.describe();
  });
}

TEST(OnednnViews, TransposeOfAChannelsLastConvIsPlainNhwc) {
  std::mt19937 rng(2);
  GraphBuilder b("nhwc");
  ValueId x = b.input("x", DType::kF32, Shape{1, 24, 8, 8});
  ValueId c = conv3x3(b, rng, x, 24, 24);
  b.output(b.sigmoid(b.transpose(c, {0, 2, 3, 1})), "y");
  Graph g = *std::move(b).build();
  std::vector<Tensor> in{uniform(rng, {1, 24, 8, 8})};
  expect_both_layouts_match(g, in);
  PlanBuilder builder(g);
  auto plan = builder.build({{1, 24, 8, 8}});
  ASSERT_TRUE(plan) << plan.error().to_string();
  md_t conv_dst;
  for (const auto& [arg, ref] : (*plan)->steps[0].args)
    if (arg == DNNL_ARG_DST) conv_dst = ref.md;
  if (!(conv_dst ==
        md_t({1, 24, 8, 8}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::acdb)))
    GTEST_SKIP() << "oneDNN picked another conv layout here: " << (*plan)->describe();
  // The input into channels-last, the conv, then the Sigmoid straight on
  // its bytes (plain NHWC): no reorder after the conv.
  EXPECT_EQ(count_steps(**plan, "reorder"), 1u) << (*plan)->describe();
  EXPECT_EQ((*plan)->steps.back().kind, "eltwise") << (*plan)->describe();
}

TEST(OnednnViews, ChannelShuffleAndChunksMatchInEveryLayout) {
  // ShuffleNetV2's unit: two halves joined, shuffled (Reshape, Transpose,
  // Reshape), then split again by Slice and by Split.
  std::mt19937 rng(3);
  GraphBuilder b("shuffle");
  ValueId x = b.input("x", DType::kF32, Shape{1, 16, 6, 6});
  ValueId joined = b.concat({conv3x3(b, rng, x, 16, 16), conv3x3(b, rng, x, 16, 16)}, 1);
  ValueId shuffled =
      b.reshape(b.transpose(b.reshape(joined, {1, 2, 16, 6, 6}), {0, 2, 1, 3, 4}), {1, 32, 6, 6});
  auto slice = [&](int64_t from, int64_t to) {
    return b.op("Slice", {shuffled, b.constant("", Tensor::from<int64_t>({1}, {from})),
                          b.constant("", Tensor::from<int64_t>({1}, {to})),
                          b.constant("", Tensor::from<int64_t>({1}, {1}))});
  };
  std::vector<ValueId> halves = b.op_n("Split", {shuffled}, 2, {{"axis", int64_t{1}}});
  b.output(conv3x3(b, rng, slice(0, 16), 16, 16), "a");
  b.output(b.add(slice(16, 32), halves[0]), "b");
  b.output(b.sigmoid(halves[1]), "c");
  b.output(b.reshape(b.transpose(shuffled, {0, 2, 3, 1}), {1, 36, 32}), "d");
  Graph g = *std::move(b).build();
  expect_both_layouts_match(g, {uniform(rng, {1, 16, 6, 6})});
}

TEST(OnednnViews, ReshapesOfBlockInputsAndConvOutputsMatch) {
  // Flatten, Squeeze/Unsqueeze and Reshapes that split and merge axes, of
  // plain, channels-last and blocked values; and a pool and a batch norm
  // reading transposed values.
  std::mt19937 rng(4);
  GraphBuilder b("reshapes");
  ValueId x = b.input("x", DType::kF32, Shape{2, 16, 4, 6});
  ValueId c = conv3x3(b, rng, x, 16, 32);
  b.output(b.flatten(c), "flat");
  b.output(b.relu(b.reshape(c, {2, 32, 24})), "merged");
  b.output(b.relu(b.reshape(c, {2, 4, 8, 4, 6})), "split");
  b.output(b.op("Unsqueeze",
                {b.transpose(c, {1, 0, 3, 2}), b.constant("", Tensor::from<int64_t>({1}, {2}))}),
           "unsqueezed");
  ValueId t = b.transpose(c, {0, 1, 3, 2});
  b.output(b.max_pool(t, {2, 2}, {2, 2}, {0, 0, 0, 0}), "pooled");
  b.output(b.op("BatchNormalization",
                {b.transpose(x, {0, 1, 3, 2}), b.constant("", uniform(rng, {16})),
                 b.constant("", uniform(rng, {16})), b.constant("", uniform(rng, {16})),
                 b.constant("", Tensor::from<float>({16}, std::vector<float>(16, 1.5f)))}),
           "normed");
  Graph g = *std::move(b).build();
  expect_both_layouts_match(g, {uniform(rng, {2, 16, 4, 6})});
}

TEST(OnednnViews, TransposeMovingSizeOneAxesFeedsABroadcastMul) {
  // A decoder's query at one new token, [b, s, heads, d] = [1, 1, 8, 16]
  // transposed to [1, 8, 1, 16], times the rotary cos [1, 1, 1, 16]: the view
  // kept the size-1 axes' old strides and oneDNN's broadcasting binary read
  // the wrong elements (all but the first head's were off).
  std::mt19937 rng(5);
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{1, 1, 8, 16}, std::vector<int64_t>{2, 1, 8, 16},
        std::vector<int64_t>{1, 3, 8, 16}}) {
    SCOPED_TRACE(testing::PrintToString(dims));
    GraphBuilder b("rotary_step");
    ValueId x = b.input("x", DType::kF32, Shape::of(dims));
    ValueId cos = b.input("cos", DType::kF32, Shape{dims[0], 1, dims[1], 16});
    b.output(b.mul(b.transpose(x, {0, 2, 1, 3}), cos), "y");
    Graph g = *std::move(b).build();
    expect_both_layouts_match(g, {uniform(rng, dims), uniform(rng, {dims[0], 1, dims[1], 16})});
  }
}

TEST(OnednnViews, SameBytesAcrossBlockedAndPlainLayoutsOfPooledValues) {
  using tag = dnnl::memory::format_tag;
  auto md = [](const dims_t& d, tag t) { return md_t(d, dnnl::memory::data_type::f32, t); };
  // [N,C,1,1] with C in whole blocks: every layout puts channel c at n*C + c.
  EXPECT_TRUE(same_bytes(md({1, 32, 1, 1}, tag::nChw16c), md({1, 32, 1, 1}, tag::nchw)));
  EXPECT_TRUE(same_bytes(md({1, 32, 1, 1}, tag::nChw8c), md({1, 32, 1, 1}, tag::nChw16c)));
  EXPECT_TRUE(same_bytes(md({2, 32, 1, 1}, tag::nchw), md({2, 32, 1, 1}, tag::nChw16c)));
  EXPECT_TRUE(same_bytes(md({1, 32, 1, 1}, tag::nhwc), md({1, 32, 1, 1}, tag::nchw)));
  // A spatial dim above 1, channels padded to a block, other dims: not so.
  EXPECT_FALSE(same_bytes(md({1, 32, 2, 1}, tag::nChw16c), md({1, 32, 2, 1}, tag::nchw)));
  EXPECT_FALSE(same_bytes(md({1, 24, 1, 1}, tag::nChw16c), md({1, 24, 1, 1}, tag::nchw)));
  EXPECT_FALSE(same_bytes(md({1, 32, 1, 1}, tag::nChw16c), md({1, 16, 2, 1}, tag::nchw)));
  EXPECT_FALSE(same_bytes(md({1, 16, 4, 4}, tag::nhwc), md({1, 16, 4, 4}, tag::nchw)));
}

TEST(OnednnViews, SqueezeExcitationOnBlockedConvsNeedsNoReorderOfItsScales) {
  // An EfficientNet/MobileNetV3 block: depthwise conv + SiLU, then
  // GlobalAveragePool -> 1x1 conv + SiLU -> 1x1 conv -> Sigmoid scaling the
  // conv's output per channel, then the projecting 1x1 conv. On nChw16c the
  // pooled [1,32,1,1] values and the scales are the same bytes in every
  // layout oneDNN gives them: seen through the one a step reads, no reorder.
  std::mt19937 rng(6);
  GraphBuilder b("squeeze_excitation");
  ValueId x = b.input("x", DType::kF32, Shape{1, 32, 8, 8});
  auto silu = [&](ValueId v) { return b.mul(v, b.sigmoid(v)); };
  auto conv1x1 = [&](ValueId v, int64_t cin, int64_t cout) {
    return b.conv(v, b.constant("", uniform(rng, {cout, cin, 1, 1})),
                  b.constant("", uniform(rng, {cout})));
  };
  ValueId dw =
      silu(b.conv(x, b.constant("", uniform(rng, {32, 1, 3, 3})),
                  b.constant("", uniform(rng, {32})), {.pads = {1, 1, 1, 1}, .group = 32}));
  ValueId squeezed = silu(conv1x1(b.global_average_pool(dw), 32, 8));
  ValueId scale = b.sigmoid(conv1x1(squeezed, 8, 32));
  b.output(conv1x1(b.mul(dw, scale), 32, 16), "y");
  Graph g = *std::move(b).build();
  expect_both_layouts_match(g, {uniform(rng, {1, 32, 8, 8})}, [](const Plan& p, bool blocked) {
    size_t pooled_reorders = 0;
    for (const Step& s : p.steps)
      for (const auto& [arg, ref] : s.args)
        if (s.kind == "reorder" && arg == DNNL_ARG_TO && ref.md.dims().size() == 4 &&
            ref.md.dims()[2] == 1 && ref.md.dims()[3] == 1)
          ++pooled_reorders;
    if (blocked) EXPECT_EQ(pooled_reorders, 0u) << p.describe();
  });
}

TEST(OnednnViews, PermutedViewOfBatchOnePoolsOnAFastKernel) {
  // MViT's skip path: tokens [T, H, W, 1, C] seen as [1, C, T, H, W], a view
  // whose batch axis (size 1) keeps the stride it had (C). oneDNN's `==`
  // calls that ndhwc, yet its pooling took the reference kernel for it
  // (3.3 ms of MViT-V2's 45 for one 192-channel MaxPool3d): the view is
  // handed over as ndhwc itself (canonical_layout).
  std::mt19937 rng(7);
  GraphBuilder b("mvit_skip");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8, 8, 1, 16});
  ValueId v = b.transpose(b.relu(x), {3, 4, 0, 1, 2});
  b.output(b.op("MaxPool", {v},
                {{"kernel_shape", std::vector<int64_t>{1, 3, 3}},
                 {"strides", std::vector<int64_t>{1, 2, 2}},
                 {"pads", std::vector<int64_t>{0, 1, 1, 0, 1, 1}}}),
           "y");
  Graph g = *std::move(b).build();
  expect_both_layouts_match(g, {uniform(rng, {2, 8, 8, 1, 16})}, [](const Plan& p, bool) {
    size_t pools = 0;
    for (const Step& s : p.steps) {
      if (s.own || s.kind != "pooling") continue;
      ++pools;
      const char* info = nullptr;
      dnnl_primitive_desc_query(s.prim.get_primitive_desc(), dnnl_query_impl_info_str, 0,
                                static_cast<void*>(&info));
      EXPECT_FALSE(is_ref_impl_name(info != nullptr ? info : "ref")) << info;
    }
    EXPECT_EQ(pools, 1u) << p.describe();
  });
}

}  // namespace
}  // namespace hone::onednn
