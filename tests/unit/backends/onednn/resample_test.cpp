// Resize (oneDNN resampling) and ConvTranspose (oneDNN deconvolution) against
// the reference interpreter, and the modes refused with their reasons.
#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::uniform;

struct ResizeCase {
  std::string mode, ctm, nearest_mode;
  std::vector<int64_t> in;
  std::vector<float> scales;   // empty: sizes
  std::vector<int64_t> sizes;  // empty: scales
};

Graph resize_graph(const ResizeCase& c, std::map<std::string, Attribute> extra = {}) {
  GraphBuilder b("resize");
  ValueId x = b.input("x", DType::kF32, Shape::of(c.in));
  std::map<std::string, Attribute> attrs{{"mode", c.mode},
                                         {"coordinate_transformation_mode", c.ctm}};
  if (!c.nearest_mode.empty()) attrs["nearest_mode"] = c.nearest_mode;
  for (auto& [k, v] : extra) attrs[k] = v;
  ValueId roi = b.constant("roi", Tensor::zeros(DType::kF32, {0}));
  ValueId scales = b.constant(
      "scales", c.scales.empty()
                    ? Tensor::zeros(DType::kF32, {0})
                    : Tensor::from<float>({static_cast<int64_t>(c.scales.size())}, c.scales));
  std::vector<ValueId> ins{x, roi, scales};
  if (!c.sizes.empty())
    ins.push_back(b.constant(
        "sizes", Tensor::from<int64_t>({static_cast<int64_t>(c.sizes.size())}, c.sizes)));
  b.output(b.op("Resize", ins, attrs), "y");
  Graph g = *std::move(b).build();
  g.opsets()[""] = 13;
  return g;
}

std::string refusal(const Graph& g) {
  for (const Node& n : g.nodes())
    if (n.op_type == "Resize" || n.op_type == "ConvTranspose") return supports_node(g, n).reason;
  return "no node";
}

TEST(OnednnResample, NearestIntegerFactorsRunOnOnednn) {
  std::mt19937 rng(11);
  // Integer upsampling: every accepted coordinate mode / rounding pairing.
  const std::vector<std::pair<std::string, std::string>> modes = {
      {"asymmetric", "floor"},
      {"half_pixel", "round_prefer_floor"},
      {"half_pixel", "round_prefer_ceil"},
      {"pytorch_half_pixel", "round_prefer_floor"},
      {"pytorch_half_pixel", "round_prefer_ceil"}};
  const std::vector<ResizeCase> shapes = {
      {"", "", "", {1, 3, 5, 7}, {1, 1, 2, 2}, {}},  // PaddleOCR's x2 (odd sizes)
      {"", "", "", {2, 2, 3, 5}, {1, 1, 3, 1}, {}},
      {"", "", "", {1, 2, 3, 3}, {}, {1, 2, 12, 9}},        // sizes: x4 and x3
      {"", "", "", {1, 4, 5}, {1, 1, 3}, {}},               // 1 spatial dim
      {"", "", "", {1, 2, 3, 2, 3}, {1, 1, 2, 2, 2}, {}}};  // 3 spatial dims
  for (const auto& [ctm, nm] : modes)
    for (ResizeCase c : shapes) {
      c.mode = "nearest";
      c.ctm = ctm;
      c.nearest_mode = nm;
      SCOPED_TRACE(ctm + " " + nm + " " + shape_to_string(c.in));
      expect_matches_reference(resize_graph(c), {uniform(rng, c.in)});
    }
}

TEST(OnednnResample, LinearHalfPixelRunsOnOnednn) {
  std::mt19937 rng(12);
  const std::vector<ResizeCase> cases = {
      {"linear", "half_pixel", "", {1, 3, 5, 7}, {1, 1, 2, 2}, {}},
      {"linear", "half_pixel", "", {2, 2, 8, 6}, {1, 1, 0.5f, 0.5f}, {}},  // downsampling
      {"linear", "half_pixel", "", {1, 2, 5, 7}, {}, {1, 2, 8, 11}},       // non-integer ratios
      {"linear", "pytorch_half_pixel", "", {1, 3, 4, 5}, {1, 1, 3, 2}, {}},
      {"linear", "half_pixel", "", {1, 2, 6}, {1, 1, 2.5f}, {}}};  // 6 * 2.5 is whole
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(c.ctm + " " + shape_to_string(c.in));
    expect_matches_reference(resize_graph(c), {uniform(rng, c.in)});
  }
}

/// Runs `g` on onednn and the reference: the same answer, the block whole on
/// onednn (no run on the reference), and `own` of its steps hone's own.
void expect_whole_on_onednn(const Graph& g, const std::vector<Tensor>& in) {
  EXPECT_EQ(refusal(g), "");
  auto be = build_onednn(g);
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE(close((*got)[0], (*want)[0]));
  EXPECT_GT(be->kernel_executions(), 0u);
  EXPECT_EQ(be->fallback_runs(), 0u);
}

TEST(OnednnResample, ScalesOnednnCannotMatchRunAsAnOwnStep) {
  std::mt19937 rng(13);
  // 5 * 1.7 = 8.5 -> 8 rows: ONNX maps with 1.7, oneDNN with 8/5, so the
  // resampling primitive would differ: hone's own step samples with 1.7.
  for (const std::string mode : {"nearest", "linear"}) {
    SCOPED_TRACE(mode);
    ResizeCase c{mode, "half_pixel", "", {1, 2, 5, 6}, {1, 1, 1.7f, 1.7f}, {}};
    expect_whole_on_onednn(resize_graph(c), {uniform(rng, c.in)});
  }
}

TEST(OnednnResample, SegformersBilinearUpsamplingMatchesTheReference) {
  // SegFormer's decoder: each stage's features, bilinear to the first stage's
  // size. oneDNN 2.6 gives this its reference resampling (100 to 300 ms a run
  // at 256 channels to 64x64), so it runs as hone's own step: the same answer.
  std::mt19937 rng(21);
  for (const std::vector<int64_t>& in : {std::vector<int64_t>{1, 32, 4, 4}, {1, 16, 8, 8}}) {
    ResizeCase c{"linear", "half_pixel", "", in, {}, {1, in[1], 16, 16}};
    expect_whole_on_onednn(resize_graph(c), {uniform(rng, c.in)});
  }
}

TEST(OnednnResample, NearestNonIntegerRatiosLowerOnlyWhereIndicesAgree) {
  std::mt19937 rng(16);
  // 3 -> 5 and 5 -> 8 rows: half-pixel rounding picks the same rows in ONNX
  // and oneDNN (no coordinate near a tie), so the primitive runs.
  for (const std::string nm : {"round_prefer_floor", "round_prefer_ceil"}) {
    SCOPED_TRACE(nm);
    ResizeCase c{"nearest", "half_pixel", nm, {1, 2, 3, 5}, {}, {1, 2, 5, 8}};
    expect_matches_reference(resize_graph(c), {uniform(rng, c.in)});
  }
  // asymmetric floor reads row 1 for output 3 (floor(3 * 3 / 5)); oneDNN
  // reads row 2, so the own step runs it.
  ResizeCase c{"nearest", "asymmetric", "floor", {1, 2, 3, 5}, {}, {1, 2, 5, 5}};
  expect_whole_on_onednn(resize_graph(c), {uniform(rng, c.in)});
}

TEST(OnednnResample, MappingsOnednnLacksRunAsAnOwnStep) {
  // What oneDNN's resampling has no mapping for: the UNet's bilinear
  // align_corners (also over one spatial axis), cubic, antialias,
  // exclude_outside, the other coordinate transformations and roundings,
  // and a resized channel axis.
  std::mt19937 rng(17);
  const std::vector<int64_t> in{1, 2, 4, 5};
  const std::vector<float> x2{1, 1, 2, 2}, half{1, 1, 0.5f, 0.5f};
  const std::vector<ResizeCase> cases = {
      {"linear", "align_corners", "", in, x2, {}},
      {"linear", "align_corners", "", {2, 3, 9}, {}, {2, 3, 20}},
      {"cubic", "half_pixel", "", in, {}, {1, 2, 9, 7}},
      {"nearest", "tf_half_pixel_for_nn", "", in, x2, {}},
      {"linear", "asymmetric", "", in, x2, {}},
      {"linear", "half_pixel_symmetric", "", in, {}, {1, 2, 7, 8}},
      {"nearest", "asymmetric", "round_prefer_floor", in, x2, {}},
      {"nearest", "half_pixel", "floor", in, x2, {}},
      {"nearest", "align_corners", "ceil", in, x2, {}},
      {"linear", "half_pixel", "", in, {1, 2, 1, 1}, {}},
  };
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(c.mode + " " + c.ctm + " " + c.nearest_mode + " " + shape_to_string(c.in));
    expect_whole_on_onednn(resize_graph(c), {uniform(rng, c.in)});
  }
  const ResizeCase lin{"linear", "half_pixel", "", {1, 2, 8, 8}, half, {}};
  for (const char* attr : {"antialias", "exclude_outside"}) {
    SCOPED_TRACE(attr);
    expect_whole_on_onednn(resize_graph(lin, {{attr, int64_t{1}}}), {uniform(rng, lin.in)});
  }
}

TEST(OnednnResample, OwnResizeBetweenConvsMatchesTheReference) {
  // The UNet's decoder: conv -> bilinear align_corners x2 -> 1x1 conv. The
  // own step resizes the convs' layout where it lies (channels-last when
  // oneDNN picks it), else on the plain layout; cubic has four taps an axis.
  std::mt19937 rng(18);
  for (const char* mode : {"linear", "cubic", "nearest"}) {
    SCOPED_TRACE(mode);
    GraphBuilder b("conv_resize_conv");
    ValueId x = b.input("x", DType::kF32, Shape{1, 16, 12, 10});
    using V = std::vector<int64_t>;
    ValueId c1 = b.op(
        "Conv",
        {x, b.constant("w1", uniform(rng, {16, 16, 3, 3})), b.constant("b1", uniform(rng, {16}))},
        {{"pads", V{1, 1, 1, 1}}});
    ValueId r = b.op("Resize",
                     {c1, b.constant("roi", Tensor::zeros(DType::kF32, {0})),
                      b.constant("scales", Tensor::from<float>({4}, {1, 1, 2, 2}))},
                     {{"mode", std::string(mode)},
                      {"coordinate_transformation_mode", std::string("align_corners")}});
    b.output(b.op("Conv", {r, b.constant("w2", uniform(rng, {8, 16, 1, 1}))}), "y");
    Graph g = *std::move(b).build();
    g.opsets()[""] = 13;
    expect_matches_reference(g, {uniform(rng, {1, 16, 12, 10})});
  }
  // Three resized axes: the intermediate results alternate between two
  // scratch buffers.
  const ResizeCase c{"linear", "half_pixel", "", {1, 2, 4, 5}, {}, {1, 3, 7, 9}};
  expect_whole_on_onednn(resize_graph(c), {uniform(rng, c.in)});
}

TEST(OnednnResample, ResizeRefusalsNameTheReason) {
  const std::vector<int64_t> in{1, 2, 4, 4};
  const std::vector<float> x2{1, 1, 2, 2};
  EXPECT_NE(refusal(resize_graph({"nearest", "tf_crop_and_resize", "", in, x2, {}}))
                .find("'tf_crop_and_resize'"),
            std::string::npos);
  const ResizeCase lin{"linear", "half_pixel", "", in, x2, {}};
  EXPECT_NE(refusal(resize_graph(lin, {{"axes", std::vector<int64_t>{2, 3}}})).find("axes"),
            std::string::npos);
  EXPECT_NE(refusal(resize_graph(lin, {{"keep_aspect_ratio_policy", std::string("not_larger")}}))
                .find("keep_aspect_ratio_policy"),
            std::string::npos);
  Graph opset10 = resize_graph(lin);
  opset10.opsets()[""] = 10;
  EXPECT_NE(refusal(opset10).find("opset-10"), std::string::npos);
}

struct DeconvCase {
  std::vector<int64_t> in, w;  // w: (C_in, C_out / group, kh, kw)
  std::map<std::string, Attribute> attrs;
  bool bias = true;
};

Graph deconv_graph(std::mt19937& rng, const DeconvCase& c, bool const_w = true) {
  GraphBuilder b("deconv");
  ValueId x = b.input("x", DType::kF32, Shape::of(c.in));
  ValueId w =
      const_w ? b.constant("w", uniform(rng, c.w)) : b.input("w", DType::kF32, Shape::of(c.w));
  std::vector<ValueId> ins{x, w};
  const int64_t group = c.attrs.count("group") ? std::get<int64_t>(c.attrs.at("group")) : 1;
  if (c.bias) ins.push_back(b.constant("b", uniform(rng, {c.w[1] * group})));
  b.output(b.op("ConvTranspose", ins, c.attrs), "y");
  Graph g = *std::move(b).build();
  g.opsets()[""] = 13;
  return g;
}

TEST(OnednnResample, ConvTransposeRunsOnOnednn) {
  std::mt19937 rng(14);
  using V = std::vector<int64_t>;
  const std::vector<DeconvCase> cases = {
      {{1, 8, 5, 7}, {8, 4, 2, 2}, {{"strides", V{2, 2}}}},  // PaddleOCR's head
      {{2, 3, 6, 5},
       {3, 5, 3, 3},
       {{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"output_padding", V{1, 1}}}},
      {{1, 4, 5, 5},
       {4, 3, 3, 2},
       {{"group", int64_t{2}},
        {"dilations", V{2, 1}},
        {"strides", V{1, 3}},
        {"pads", V{0, 1, 2, 0}}},
       false},
      {{1, 6, 3, 4},
       {6, 1, 3, 3},
       {{"group", int64_t{6}}, {"strides", V{2, 2}}, {"auto_pad", std::string("VALID")}}},
      {{1, 3, 4, 5}, {3, 2, 3, 3}, {{"strides", V{2, 3}}, {"output_padding", V{1, 2}}}},
      {{1, 2, 4, 3}, {2, 3, 1, 1}, {}}};
  for (const DeconvCase& c : cases) {
    SCOPED_TRACE(shape_to_string(c.in) + " w " + shape_to_string(c.w));
    expect_matches_reference(deconv_graph(rng, c), {uniform(rng, c.in)});
  }
}

TEST(OnednnResample, AUNetDecoderOnNChw16cNeedsNoReorderInside) {
  // deconv 32 -> 16 (2x2, stride 2), joined with a 16-channel skip, a 3x3
  // conv, bilinear align_corners x2, a 1x1 conv. On nChw16c (its layout
  // trials off: the deconv's nhwc kernel is otherwise timed against its
  // nChw16c one) the deconv and the own resize read and write that layout,
  // so the only reorders are the two inputs' and the output's; both plans
  // match the reference.
  std::mt19937 rng(19);
  using V = std::vector<int64_t>;
  GraphBuilder b("decoder");
  ValueId x = b.input("x", DType::kF32, Shape{1, 32, 6, 5});
  ValueId skip = b.input("skip", DType::kF32, Shape{1, 16, 12, 10});
  ValueId up = b.op(
      "ConvTranspose",
      {x, b.constant("wt", uniform(rng, {32, 16, 2, 2})), b.constant("bt", uniform(rng, {16}))},
      {{"strides", V{2, 2}}});
  ValueId s = b.relu(b.conv(skip, b.constant("ws", uniform(rng, {16, 16, 1, 1})),
                            b.constant("bs", uniform(rng, {16}))));
  ValueId joined = b.op("Concat", {s, up}, {{"axis", int64_t{1}}});
  ValueId c = b.relu(b.conv(joined, b.constant("wc", uniform(rng, {32, 32, 3, 3}, -0.2f, 0.2f)),
                            b.constant("bc", uniform(rng, {32})), {.pads = {1, 1, 1, 1}}));
  ValueId r = b.op("Resize",
                   {c, b.constant("roi", Tensor::zeros(DType::kF32, {0})),
                    b.constant("scales", Tensor::from<float>({4}, {1, 1, 2, 2}))},
                   {{"mode", std::string("linear")},
                    {"coordinate_transformation_mode", std::string("align_corners")}});
  b.output(b.conv(r, b.constant("wo", uniform(rng, {16, 32, 1, 1})),
                  b.constant("bo", uniform(rng, {16}))),
           "y");
  Graph g = *std::move(b).build();
  g.opsets()[""] = 13;
  std::vector<Tensor> in{uniform(rng, {1, 32, 6, 5}), uniform(rng, {1, 16, 12, 10})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  for (bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "nChw16c" : "oneDNN's pick");
    PlanBuilder builder(g);
    builder.set_prefer_blocked16(blocked);
    builder.set_layout_trials(false);  // the reorders are counted: no timed layout choice
    auto plan = builder.build({{1, 32, 6, 5}, {1, 16, 12, 10}});
    ASSERT_TRUE(plan) << plan.error().to_string();
    size_t reorders = 0;
    for (const Step& st : (*plan)->steps) reorders += st.kind == "reorder";
    if (blocked) EXPECT_LE(reorders, 3u) << (*plan)->describe();
    std::atomic<uint64_t> executions{0};
    auto got = (*plan)->run(in, &executions);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-3, 1e-4)) << (*plan)->describe();
  }
}

TEST(OnednnResample, ConvTransposeRefusalsNameTheReason) {
  std::mt19937 rng(15);
  using V = std::vector<int64_t>;
  EXPECT_NE(refusal(deconv_graph(rng, {{1, 2, 4, 4}, {2, 2, 3, 3}, {}}, false))
                .find("weights must be a constant"),
            std::string::npos);
  EXPECT_NE(refusal(deconv_graph(rng, {{1, 2, 4}, {2, 2, 3}, {}})).find("only 2-D"),
            std::string::npos);
  EXPECT_NE(
      refusal(deconv_graph(rng,
                           {{1, 2, 4, 4}, {2, 2, 3, 3}, {{"auto_pad", std::string("SAME_UPPER")}}}))
          .find("SAME_UPPER"),
      std::string::npos);
  EXPECT_NE(refusal(deconv_graph(rng, {{1, 2, 4, 4}, {2, 2, 3, 3}, {{"output_shape", V{9, 9}}}}))
                .find("output_shape"),
            std::string::npos);
}

}  // namespace
}  // namespace hone::onednn
