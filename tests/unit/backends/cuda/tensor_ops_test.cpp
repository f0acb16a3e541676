// Resize, GridSample, RoiAlign, ArgMax, Tile, InstanceNormalization, the wider reductions and the
// bool ops (a Where whose condition is made at run time, the comparisons and
// logic that make it) on cuda. Resize's geometry and the support decisions
// are host-side and run without a device; the graphs after them skip
// without one, naming why.
#include "backends/cuda/resize_geometry.h"
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;
using Ints = std::vector<int64_t>;
using Str = std::string;

Tensor f32s(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<float>({n}, v);
}
Tensor i64s(Ints v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

/// A Resize node of `attrs` at `opset` (its inputs are not looked at).
Node resize_node(std::map<std::string, Attribute> attrs) {
  Node n;
  n.op_type = "Resize";
  n.name = "r";
  for (auto& [k, v] : attrs) n.attrs[k] = std::move(v);
  return n;
}

TEST(CudaResizeGeometry, ScalesGiveFlooredDimsAndTheLastTwoAxes) {
  const Node n = resize_node(
      {{"mode", Str("linear")}, {"coordinate_transformation_mode", Str("pytorch_half_pixel")}});
  const Tensor scales = f32s({1.0f, 1.0f, 2.5f, 0.6f});
  auto r = resize_geometry(n, 13, {2, 3, 5, 7}, &scales, nullptr);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->out, (Ints{2, 3, 12, 4}));  // floor(5 * 2.5), floor(7 * 0.6)
  EXPECT_EQ(r->outer, 6);
  EXPECT_EQ(r->h, 5);
  EXPECT_EQ(r->w, 7);
  EXPECT_EQ(r->oh, 12);
  EXPECT_EQ(r->ow, 4);
  EXPECT_DOUBLE_EQ(r->scale_h, 2.5);
  EXPECT_DOUBLE_EQ(r->scale_w, static_cast<double>(0.6f));  // the f32 value, as the reference
  EXPECT_EQ(r->mode, 1);
  EXPECT_EQ(r->transform, 2);
}

TEST(CudaResizeGeometry, SizesGiveTheirRatioAsScaleAndAxesPickTheResizedDims) {
  const Tensor sizes = i64s({9, 4});
  const Node n = resize_node({{"axes", Ints{-2, -1}},
                              {"nearest_mode", Str("floor")},
                              {"coordinate_transformation_mode", Str("asymmetric")}});
  auto r = resize_geometry(n, 18, {1, 2, 3, 8}, nullptr, &sizes);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->out, (Ints{1, 2, 9, 4}));
  EXPECT_DOUBLE_EQ(r->scale_h, 3.0);
  EXPECT_DOUBLE_EQ(r->scale_w, 0.5);
  EXPECT_EQ(r->mode, 0);
  EXPECT_EQ(r->nearest, 2);
  EXPECT_EQ(r->transform, 1);
  // Before opset 11 the nearest rounding is Resize-10's, the transform asymmetric.
  const Tensor scales = f32s({1, 1, 2, 2});
  auto old = resize_geometry(resize_node({}), 10, {1, 1, 2, 2}, &scales, nullptr);
  ASSERT_TRUE(old) << old.error().to_string();
  EXPECT_EQ(old->nearest, 4);
  EXPECT_EQ(old->transform, 1);
}

TEST(CudaResizeGeometry, RefusesWhatTheKernelDoesNotDo) {
  const Tensor channels = f32s({1, 2, 2, 2});
  auto r = resize_geometry(resize_node({}), 13, {1, 3, 4, 4}, &channels, nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("cuda resizes the last two axes"), std::string::npos);
  auto crop = resize_modes(
      resize_node({{"coordinate_transformation_mode", Str("tf_crop_and_resize")}}), 13);
  ASSERT_FALSE(crop);
  EXPECT_EQ(crop.error().code(), ErrorCode::kUnsupported);
  auto aa = resize_modes(resize_node({{"mode", Str("linear")}, {"antialias", int64_t{1}}}), 18);
  ASSERT_FALSE(aa);
  EXPECT_EQ(aa.error().code(), ErrorCode::kUnsupported);
  auto bad = resize_modes(resize_node({{"nearest_mode", Str("nearest")}}), 13);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  // Both or neither of scales and sizes.
  const Tensor sizes = i64s({1, 3, 8, 8});
  EXPECT_FALSE(resize_geometry(resize_node({}), 13, {1, 3, 4, 4}, &channels, &sizes));
  EXPECT_FALSE(resize_geometry(resize_node({}), 13, {1, 3, 4, 4}, nullptr, nullptr));
}

/// A segmentation head's upsampling as torchvision exports it (sizes from
/// Shape), a mask made from data (Greater, And with a bool input, Not) that a
/// Where reads, per-pixel ArgMax, Tile, InstanceNormalization, and the
/// reductions cuda gained.
Graph tensor_ops_graph() {
  GraphBuilder b("tensor_ops", 17);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 5, 6});
  ValueId keep = b.input("keep", DType::kBool, Shape{1, 1, 5, 1});
  ValueId img = b.input("img", DType::kF32, Shape{Dim::symbol("batch"), 3, 10, 12});
  ValueId grid = b.input("grid", DType::kF32, Shape{Dim::symbol("batch"), 4, 7, 2});
  ValueId rois = b.input("rois", DType::kF32, Shape{Dim::symbol("num"), 4});
  ValueId roi_batch = b.input("roi_batch", DType::kI64, Shape{Dim::symbol("num")});
  ValueId hw =
      b.op("Slice", {b.op("Shape", {img}), b.constant("", i64s({2})), b.constant("", i64s({4}))});
  ValueId nc =
      b.op("Slice", {b.op("Shape", {x}), b.constant("", i64s({0})), b.constant("", i64s({2}))});
  ValueId up =
      b.op("Resize",
           {b.relu(x), b.constant("", Tensor::from<float>({0}, {})),
            b.constant("", Tensor::from<float>({0}, {})), b.concat({nc, hw}, 0)},
           {{"mode", Str("linear")}, {"coordinate_transformation_mode", Str("half_pixel")}});
  b.output(up, "up");
  // GridSample as RAFT looks up its correlations, and with cubic taps and
  // reflection (the grid reaches past the edges: padding is exercised).
  b.output(b.op("GridSample", {x, grid},
                {{"mode", Str("bilinear")},
                 {"padding_mode", Str("zeros")},
                 {"align_corners", int64_t{1}}}),
           "sampled");
  b.output(b.op("GridSample", {b.tanh(x), grid},
                {{"mode", Str("bicubic")}, {"padding_mode", Str("reflection")}}),
           "sampled_cubic");
  // RoiAlign as torchvision's MultiScaleRoIAlign (aligned=False: output_half_pixel,
  // two points a bin), and max mode with adaptive sampling.
  b.output(b.op("RoiAlign", {x, rois, roi_batch},
                {{"coordinate_transformation_mode", Str("output_half_pixel")},
                 {"output_height", int64_t{3}},
                 {"output_width", int64_t{2}},
                 {"sampling_ratio", int64_t{2}},
                 {"spatial_scale", 0.5f}}),
           "pooled");
  b.output(
      b.op("RoiAlign", {b.relu(x), rois, roi_batch},
           {{"mode", Str("max")}, {"output_height", int64_t{2}}, {"output_width", int64_t{2}}}),
      "pooled_max");
  // (On x: shape propagation gives an ArgMax of a value of unknown shape, such
  // as the Resize's, an f32 output, which cuda refuses.)
  b.output(b.op("ArgMax", {b.relu(x)}, {{"axis", int64_t{1}}}), "labels");
  ValueId pos = b.op("Greater", {x, b.constant("", Tensor::scalar<float>(0.25f))});
  ValueId mask = b.op("Not", {b.op("And", {pos, keep})});
  b.output(b.op("Where", {mask, b.tanh(x), b.constant("", Tensor::scalar<float>(-1.0f))}), "w");
  b.output(b.op("Cast", {mask}, {{"to", int64_t{1}}}), "maskf");
  b.output(b.op("Tile", {x, b.constant("", i64s({1, 2, 1, 3}))}), "tiled");
  std::mt19937 rng(3);
  b.output(b.op("InstanceNormalization",
                {x, b.constant("s", uniform(rng, {3})), b.constant("b", uniform(rng, {3}))}),
           "inorm");
  for (const char* op :
       {"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"})
    b.output(b.op(op, {x}, {{"axes", Ints{2, 3}}, {"keepdims", int64_t{0}}}), op);
  return *std::move(b).build();
}

TEST(CudaTensorOps, ProposedWithoutADevice) {
  const Graph g = tensor_ops_graph();
  CudaBackend be;
  auto part = be.plan(g);
  ASSERT_TRUE(part) << part.error().to_string();
  std::string why;
  for (const auto& [id, reason] : part->fallbacks) why += reason + "\n";
  EXPECT_TRUE(part->fallbacks.empty()) << why;
}

TEST(CudaTensorOps, IntegerComparisonAndKnownBoolOperandAreProposed) {
  GraphBuilder b("mixed", 17);
  ValueId x = b.input("x", DType::kF32, Shape{2, 4});
  ValueId ids = b.input("ids", DType::kI64, Shape{2, 4});
  // An integer comparison (hone_compare_int), and a bool known when planned
  // (0/1 floats on the device) beside one made at run time (hone_logic's mask).
  ValueId eq = b.op("Equal", {ids, b.constant("", Tensor::scalar<int64_t>(0))});
  const std::vector<bool> fixed = {true, false, true, false};
  ValueId both = b.op("And", {b.op("Less", {x, b.constant("", Tensor::scalar<float>(0.0f))}),
                              b.constant("", Tensor::from<bool>({4}, fixed))});
  b.output(b.op("Where", {eq, x, b.relu(x)}), "y");
  b.output(both, "z");
  const Graph g = *std::move(b).build();
  CudaBackend be;
  const std::vector<NodeSupport> p = be.propose(g);
  ASSERT_EQ(p.size(), 5u);  // Equal, Less, And, Relu, Where
  for (const NodeSupport& s : p) EXPECT_TRUE(s.supported) << s.reason;
}

/// `num` boxes (x0, y0, x1, y1) over and past a 5 x 6 map's edges, some
/// smaller than a pixel.
Tensor boxes(std::mt19937& rng, int64_t num) {
  std::uniform_real_distribution<float> at(-1.5f, 6.0f), size(0.3f, 4.0f);
  std::vector<float> v;
  for (int64_t i = 0; i < num; ++i) {
    const float x0 = at(rng), y0 = at(rng) * 0.8f;
    v.insert(v.end(), {x0, y0, x0 + size(rng), y0 + size(rng)});
  }
  return Tensor::from<float>({num, 4}, v);
}

TEST(CudaTensorOps, MatchTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(11);
  const Graph g = tensor_ops_graph();
  for (int64_t batch : {1, 2}) {
    Tensor keep = Tensor::from<bool>({1, 1, 5, 1}, {true, false, true, true, false});
    expect_matches_reference(g, {uniform(rng, {batch, 3, 5, 6}, -1.0f, 1.0f), keep,
                                 uniform(rng, {batch, 3, 10, 12}, -1.0f, 1.0f),
                                 uniform(rng, {batch, 4, 7, 2}, -1.3f, 1.3f), boxes(rng, 5),
                                 Tensor::from<int64_t>({5}, {0, batch - 1, 0, batch - 1, 0})});
  }
}

}  // namespace
}  // namespace hone::cuda
