// Each op family aot generates code for, against the reference: random data,
// odd sizes and broadcasting (3-D convs too). Ops share graphs to keep compile
// time down.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;

TEST(AotOps, ElementwiseChainWithBroadcasting) {
  std::mt19937 rng(1);
  GraphBuilder b("eltwise");
  const ValueId x = b.input("x", DType::kF32, Shape{3, 5, 7});
  const ValueId row = b.input("row", DType::kF32, Shape{5, 1});
  const ValueId col = b.constant("col", uniform(rng, {7}));
  const ValueId scalar = b.scalar_f32("two", 2.0f);
  ValueId h = b.add(x, row);     // [3,5,7] + [5,1]
  h = b.mul(h, col);             // * [7]
  h = b.op("Pow", {h, scalar});  // squared, literal exponent
  h = b.op("Sqrt", {b.op("Add", {h, b.scalar_f32("one", 1.0f)})});
  h = b.sub(b.op("Tanh", {h}), b.sigmoid(x));
  h = b.op("LeakyRelu", {h}, {{"alpha", 0.1f}});
  h = b.div(h, b.op("Exp", {row}));  // a broadcast operand made by a loop of its own
  const ValueId e = b.op("Erf", {h});
  b.output(b.op("Clip", {e, b.scalar_f32("lo", -0.5f), b.scalar_f32("hi", 0.25f)}), "clipped");
  b.output(b.op("HardSwish", {h}), "hs");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {3, 5, 7}), uniform(rng, {5, 1})}});
}

TEST(AotOps, ConvolutionsPoolsAndBatchNorm) {
  std::mt19937 rng(2);
  GraphBuilder b("convs");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 9, 11});
  // Padded, strided 3x3; grouped; depthwise; pointwise; then BN, pools.
  ValueId h =
      b.conv(x, b.constant("w1", uniform(rng, {6, 4, 3, 3})), b.constant("b1", uniform(rng, {6})),
             {.strides = {2, 1}, .pads = {1, 0, 1, 2}, .dilations = {1, 1}, .group = 1});
  h = b.relu(h);
  h = b.conv(h, b.constant("w2", uniform(rng, {6, 3, 2, 2})), kNoValue,
             {.strides = {1, 1}, .pads = {0, 0, 0, 0}, .dilations = {1, 2}, .group = 2});
  h = b.conv(h, b.constant("w3", uniform(rng, {6, 1, 3, 3})), b.constant("b3", uniform(rng, {6})),
             {.strides = {1, 1}, .pads = {1, 1, 1, 1}, .dilations = {1, 1}, .group = 6});
  h = b.conv(h, b.constant("w4", uniform(rng, {5, 6, 1, 1})), b.constant("b4", uniform(rng, {5})));
  h = b.op("BatchNormalization",
           {h, b.constant("s", uniform(rng, {5}, 0.5f, 1.5f)), b.constant("t", uniform(rng, {5})),
            b.constant("m", uniform(rng, {5})), b.constant("v", uniform(rng, {5}, 0.5f, 2.0f))});
  const ValueId mp = b.op("MaxPool", {h},
                          {{"kernel_shape", std::vector<int64_t>{3, 2}},
                           {"strides", std::vector<int64_t>{2, 2}},
                           {"pads", std::vector<int64_t>{1, 0, 1, 1}},
                           {"ceil_mode", int64_t{1}}});
  const ValueId ap = b.op("AveragePool", {h},
                          {{"kernel_shape", std::vector<int64_t>{2, 3}},
                           {"pads", std::vector<int64_t>{1, 1, 0, 1}},
                           {"count_include_pad", int64_t{1}}});
  b.output(mp, "max");
  b.output(ap, "avg");
  b.output(b.global_average_pool(h), "gap");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {1, 4, 9, 11})}, {uniform(rng, {3, 4, 9, 11})}});
}

TEST(AotOps, DepthwiseConvsWithStridesDilationsPadsAndWideKernels) {
  // The depthwise loop splits each row into inner columns (every tap in one
  // pass) and border columns; kernels wider than 7 take one pass per tap.
  std::mt19937 rng(5);
  GraphBuilder b("dw");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6, 12, 17});
  ValueId h =
      b.conv(x, b.constant("w1", uniform(rng, {6, 1, 3, 5})), b.constant("b1", uniform(rng, {6})),
             {.strides = {2, 3}, .pads = {1, 2, 0, 1}, .dilations = {1, 2}, .group = 6});
  h = b.conv(h, b.constant("w2", uniform(rng, {6, 1, 1, 9})), kNoValue,
             {.strides = {1, 1}, .pads = {0, 4, 0, 4}, .dilations = {1, 1}, .group = 6});
  h = b.conv(h, b.constant("w3", uniform(rng, {6, 1, 3, 3})), kNoValue,
             {.strides = {1, 1}, .pads = {2, 2, 2, 2}, .dilations = {2, 2}, .group = 6});
  b.output(h, "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {1, 6, 12, 17})}, {uniform(rng, {2, 6, 12, 17})}});
}

TEST(AotOps, OneDimensionalConvAndPool) {
  std::mt19937 rng(3);
  GraphBuilder b("conv1d");
  const ValueId x = b.input("x", DType::kF32, Shape{2, 3, 13});
  ValueId h = b.op(
      "Conv", {x, b.constant("w", uniform(rng, {4, 3, 3})), b.constant("bias", uniform(rng, {4}))},
      {{"pads", std::vector<int64_t>{1, 1}}, {"strides", std::vector<int64_t>{2}}});
  h = b.op("AveragePool", {h}, {{"kernel_shape", std::vector<int64_t>{2}}});
  b.output(h, "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {2, 3, 13})}});
}

TEST(AotOps, GemmAndMatMul) {
  std::mt19937 rng(4);
  GraphBuilder b("linalg");
  const ValueId a = b.input("a", DType::kF32, Shape{Dim::symbol("batch"), 7});
  const ValueId y1 =
      b.gemm(a, b.constant("w", uniform(rng, {5, 7})), b.constant("c", uniform(rng, {5})),
             {.trans_a = false, .trans_b = true, .alpha = 0.5f, .beta = 2.0f});
  const ValueId y2 =
      b.gemm(b.transpose(a, {1, 0}), b.constant("w2", uniform(rng, {7, 6})),
             b.constant("c2", uniform(rng, {1, 6})), {.trans_a = true, .trans_b = false});
  b.output(b.relu(y1), "gemm_relu");
  b.output(y2, "gemm_ta");
  const ValueId p = b.input("p", DType::kF32, Shape{2, 1, 3, 4});
  const ValueId q = b.input("q", DType::kF32, Shape{3, 4, 5});
  b.output(b.matmul(p, q), "batched");                                       // [2,3,3,5]
  b.output(b.matmul(q, b.constant("k", uniform(rng, {5, 2}))), "shared_b");  // [3,4,2]
  b.output(b.matmul(b.constant("v", uniform(rng, {4})), q), "vec_mat");      // [3,5]
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(
      *g, {{uniform(rng, {3, 7}), uniform(rng, {2, 1, 3, 4}), uniform(rng, {3, 4, 5})}});
}

TEST(AotOps, NormalizationsAndReductions) {
  std::mt19937 rng(5);
  GraphBuilder b("norms", 18);
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 6});
  b.output(b.softmax(x, -1), "softmax_last");
  b.output(b.op("Softmax", {x}, {{"axis", int64_t{1}}}), "softmax_mid");
  b.output(b.op("LogSoftmax", {x}, {{"axis", int64_t{-1}}}), "logsoftmax");
  b.output(b.layer_norm(x, b.constant("g", uniform(rng, {6})), b.constant("be", uniform(rng, {6}))),
           "ln");
  b.output(b.op("ReduceMean", {x, b.constant("ax", Tensor::from<int64_t>({1}, {-1}))}),
           "mean_last");
  b.output(b.op("ReduceSum", {x, b.constant("ax2", Tensor::from<int64_t>({2}, {0, 2}))},
                {{"keepdims", int64_t{0}}}),
           "sum_outer");
  b.output(b.op("ReduceMax", {x, b.constant("ax3", Tensor::from<int64_t>({1}, {1}))}), "max_mid");
  // F.normalize's norm (ReduceL2 over the features), and L1 and SumSquare.
  b.output(b.div(x, b.op("ReduceL2", {x, b.constant("ax4", Tensor::from<int64_t>({1}, {-1}))})),
           "normalized");
  b.output(b.op("ReduceL1", {x, b.constant("ax5", Tensor::from<int64_t>({2}, {1, 2}))},
                {{"keepdims", int64_t{0}}}),
           "l1");
  b.output(b.op("ReduceSumSquare", {x, b.constant("ax6", Tensor::from<int64_t>({1}, {0}))}),
           "sumsquare_batch");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {2, 3, 6})}, {uniform(rng, {5, 3, 6})}});
}

TEST(AotOps, LayoutOps) {
  std::mt19937 rng(6);
  GraphBuilder b("layout");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2, 3, 4});
  const ValueId t = b.transpose(x, {0, 3, 1, 2});                   // [b,4,2,3]
  const ValueId f = b.flatten(t, 2);                                // [b*4, 6]
  const ValueId r = b.reshape(x, {0, -1, 4});                       // [b, 6, 4]
  const ValueId c = b.concat({r, b.relu(r), b.op("Neg", {r})}, 1);  // [b, 18, 4]
  const ValueId u = b.op("Unsqueeze", {c, b.constant("ua", Tensor::from<int64_t>({1}, {1}))});
  const ValueId s = b.op("Squeeze", {u, b.constant("sa", Tensor::from<int64_t>({1}, {1}))});
  b.output(f, "flat");
  b.output(b.transpose(s, {2, 1, 0}), "back");
  b.output(x, "passthrough");
  b.output(r, "view_out");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {3, 2, 3, 4})}});
}

TEST(AotOps, ReflectEdgeAndWrapPadsOverStaticAxes) {
  // Style transfer's ReflectionPad2d before a conv, the other two modes, and a
  // crop beside a pad; the batch stays a run-time dim (not padded).
  std::mt19937 rng(11);
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    GraphBuilder b("pads", 19);
    const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 5, 6});
    const ValueId pads = b.constant("p", Tensor::from<int64_t>({8}, {0, 0, 2, 3, 0, 0, 4, -1}));
    const ValueId p = b.op("Pad", {x, pads}, {{"mode", std::string(mode)}});
    b.output(b.relu(b.conv(p, b.constant("w", uniform(rng, {4, 3, 3, 3})),
                           b.constant("c", uniform(rng, {4})), {})),
             "y");
    auto g = std::move(b).build();
    ASSERT_TRUE(g) << g.error().to_string();
    expect_matches_reference(*g, {{uniform(rng, {1, 3, 5, 6})}, {uniform(rng, {3, 3, 5, 6})}});
  }
}

TEST(AotOps, ResizeNearestLinearAndCubic) {
  // UNet's bilinear align_corners upsampling by constant scales, an FPN's
  // nearest resize to sizes, a cubic downscale, a 1-D linear one.
  std::mt19937 rng(10);
  GraphBuilder b("resize");
  const ValueId x = b.input("x", DType::kF32, Shape{1, 3, 5, 7});
  const ValueId none = kNoValue;
  auto resize = [&](ValueId in, const char* mode, const char* ctm, ValueId scales, ValueId sizes) {
    return b.op("Resize", {in, none, scales, sizes},
                {{"mode", std::string(mode)},
                 {"coordinate_transformation_mode", std::string(ctm)},
                 {"nearest_mode", std::string("floor")}});
  };
  const ValueId up = resize(x, "linear", "align_corners",
                            b.constant("s2", Tensor::from<float>({4}, {1, 1, 2, 2})), none);
  const ValueId near =
      resize(x, "nearest", "asymmetric", b.constant("e", Tensor::zeros(DType::kF32, {0})),
             b.constant("sz", Tensor::from<int64_t>({4}, {1, 3, 11, 9})));
  const ValueId cubic =
      resize(x, "cubic", "half_pixel",
             b.constant("s3", Tensor::from<float>({4}, {1, 1, 0.6f, 0.75f})), none);
  const ValueId seq = b.input("seq", DType::kF32, Shape{2, 4, 6});
  const ValueId line1 = resize(seq, "linear", "pytorch_half_pixel",
                               b.constant("s1", Tensor::from<float>({3}, {1, 1, 1.5f})), none);
  b.output(up, "up");
  b.output(near, "near");
  b.output(cubic, "cubic");
  b.output(line1, "line");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {1, 3, 5, 7}), uniform(rng, {2, 4, 6})}});
}

TEST(AotOps, ConvTransposeStridedPaddedGroupedAndOneDimensional) {
  // UNet's 2x2 stride-2 upsampling; a padded, dilated one with
  // output_padding; a grouped one without bias; a 1-D one.
  std::mt19937 rng(17);
  GraphBuilder b("deconv");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 5, 6});
  // `bias`: the number of output channels, or 0 for none.
  auto ct = [&](ValueId in, const char* name, std::vector<int64_t> w, int64_t bias,
                std::map<std::string, Attribute> attrs) {
    std::vector<ValueId> ins{in, b.constant(name, uniform(rng, w))};
    if (bias) ins.push_back(b.constant(std::string(name) + "_b", uniform(rng, {bias})));
    return b.op("ConvTranspose", ins, attrs);
  };
  const ValueId up = ct(x, "w1", {4, 3, 2, 2}, 0, {{"strides", std::vector<int64_t>{2, 2}}});
  const ValueId odd = ct(x, "w2", {4, 3, 3, 3}, 0,
                         {{"strides", std::vector<int64_t>{2, 3}},
                          {"pads", std::vector<int64_t>{1, 0, 1, 2}},
                          {"dilations", std::vector<int64_t>{1, 2}},
                          {"output_padding", std::vector<int64_t>{1, 0}}});
  const ValueId grouped = ct(x, "w3", {4, 2, 3, 2}, 4,
                             {{"group", int64_t{2}}, {"strides", std::vector<int64_t>{1, 2}}});
  const ValueId seq = b.input("seq", DType::kF32, Shape{2, 3, 7});
  const ValueId one =
      ct(seq, "w4", {3, 2, 4}, 2,
         {{"strides", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{1, 1}}});
  b.output(b.relu(up), "up");
  b.output(odd, "odd");
  b.output(grouped, "grouped");
  b.output(one, "one");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g,
                           {{uniform(rng, {1, 4, 5, 6}), uniform(rng, {2, 3, 7})},
                            {uniform(rng, {3, 4, 5, 6}), uniform(rng, {2, 3, 7})}},
                           {{"dim_bounds", "batch=3"}});
}

TEST(AotOps, ThreeDimensionalConvs) {
  // R(2+1)D's factorized convs: (1,3,3) strided over space, (3,1,1) over
  // time, a strided 1x1x1 shortcut; then grouped, depthwise, dilated and
  // pointwise ones, each with a chain.
  std::mt19937 rng(9);
  GraphBuilder b("video");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 5, 9, 8});
  auto conv3 = [&](ValueId in, const char* name, std::vector<int64_t> w, bool bias,
                   GraphBuilder::ConvOptions o) {
    return b.conv(in, b.constant(name, uniform(rng, w)),
                  bias ? b.constant(std::string(name) + "_b", uniform(rng, {w[0]})) : kNoValue, o);
  };
  ValueId h = b.relu(conv3(
      x, "w1", {6, 3, 1, 3, 3}, true,
      {.strides = {1, 2, 2}, .pads = {0, 1, 1, 0, 1, 1}, .dilations = {1, 1, 1}, .group = 1}));
  h = conv3(h, "w2", {4, 6, 3, 1, 1}, false,
            {.strides = {1, 1, 1}, .pads = {1, 0, 0, 1, 0, 0}, .dilations = {1, 1, 1}, .group = 1});
  const ValueId shortcut =
      conv3(x, "w3", {4, 3, 1, 1, 1}, true,
            {.strides = {1, 2, 2}, .pads = {0, 0, 0, 0, 0, 0}, .dilations = {1, 1, 1}, .group = 1});
  h = b.relu(b.add(h, shortcut));
  h = conv3(h, "w4", {4, 2, 2, 2, 2}, true,
            {.strides = {2, 1, 1}, .pads = {1, 0, 1, 0, 1, 0}, .dilations = {1, 2, 1}, .group = 2});
  h = b.tanh(conv3(
      h, "w5", {4, 1, 3, 3, 3}, false,
      {.strides = {1, 1, 1}, .pads = {1, 1, 1, 1, 1, 1}, .dilations = {1, 1, 1}, .group = 4}));
  h = conv3(h, "w6", {5, 4, 1, 1, 1}, true,
            {.strides = {1, 1, 1}, .pads = {0, 0, 0, 0, 0, 0}, .dilations = {1, 1, 1}, .group = 1});
  b.output(b.op("GlobalAveragePool", {h}), "pooled");
  b.output(h, "features");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g, {{uniform(rng, {1, 3, 5, 9, 8})}, {uniform(rng, {2, 3, 5, 9, 8})}},
                           {{"dim_bounds", "batch=2"}});
}

TEST(AotOps, ThreeDimensionalPools) {
  // MViT's MaxPool3d on the skip path (3x3x3, stride 1 in time, padded) after
  // a 3-D conv, and averages with ceil_mode, dilation and count_include_pad,
  // all compiled whole (no lowering fallback).
  std::mt19937 rng(10);
  GraphBuilder b("video_pools", 19);  // AveragePool's dilations
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 4, 7, 6});
  const ValueId h = b.conv(
      x, b.constant("w", uniform(rng, {4, 3, 1, 3, 3})), b.constant("wb", uniform(rng, {4})),
      {.strides = {1, 1, 1}, .pads = {0, 1, 1, 0, 1, 1}, .dilations = {1, 1, 1}, .group = 1});
  using Ints = std::vector<int64_t>;
  b.output(b.op("MaxPool", {h},
                {{"kernel_shape", Ints{3, 3, 3}},
                 {"strides", Ints{1, 2, 2}},
                 {"pads", Ints{1, 1, 1, 1, 1, 1}}}),
           "max");
  b.output(b.op("AveragePool", {h},
                {{"kernel_shape", Ints{2, 3, 2}},
                 {"strides", Ints{2, 2, 2}},
                 {"pads", Ints{0, 1, 1, 1, 0, 0}},
                 {"ceil_mode", int64_t{1}}}),
           "avg_ceil");
  b.output(b.op("AveragePool", {h},
                {{"kernel_shape", Ints{3, 2, 3}},
                 {"strides", Ints{1, 2, 1}},
                 {"pads", Ints{1, 0, 1, 1, 1, 1}},
                 {"dilations", Ints{1, 2, 1}},
                 {"count_include_pad", int64_t{1}}}),
           "avg_include_pad");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = testing_util::build_aot(*g, {{"dim_bounds", "batch=2"}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, *g));
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  testing_util::expect_runs_match_reference(
      *be, *g, {{uniform(rng, {1, 3, 4, 7, 6})}, {uniform(rng, {2, 3, 4, 7, 6})}});
}

}  // namespace
}  // namespace hone::aot
