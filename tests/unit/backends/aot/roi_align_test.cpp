// RoiAlign in aot's code (roi_align.cpp), by the reference's points
// (ops/roi_align_points.h): torchvision's box-head form and ONNX's max mode,
// a roi count known only at run time, rois partly outside the map, and a
// batch index out of range refused by the code with the reference's words.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::uniform;

Graph roi_graph() {
  GraphBuilder b("roi_align", 16);
  const Dim rois = Dim::symbol("rois");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 10, 9});
  const ValueId r = b.input("r", DType::kF32, Shape{rois, 4});
  const ValueId bi = b.input("bi", DType::kI64, Shape{rois});
  const ValueId feat = b.relu(x);
  b.output(b.op("RoiAlign", {feat, r, bi},
                {{"coordinate_transformation_mode", std::string("output_half_pixel")},
                 {"output_height", int64_t{3}},
                 {"output_width", int64_t{2}},
                 {"sampling_ratio", int64_t{2}},
                 {"spatial_scale", 0.25f}}),
           "avg");
  b.output(b.op("RoiAlign", {feat, r, bi},
                {{"mode", std::string("max")},
                 {"output_height", int64_t{2}},
                 {"output_width", int64_t{4}},
                 {"spatial_scale", 0.5f}}),
           "max");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return g ? std::move(*g) : Graph();
}

std::vector<Tensor> roi_inputs(std::mt19937& rng, int64_t batch, std::vector<float> boxes,
                               std::vector<int64_t> index) {
  const auto n = static_cast<int64_t>(index.size());
  return {uniform(rng, {batch, 3, 10, 9}), Tensor::from<float>({n, 4}, std::move(boxes)),
          testing_util::i64s({n}, index)};
}

TEST(AotRoiAlign, AverageAndMaxOverARunTimeRoiCount) {
  std::mt19937 rng(31);
  const Graph g = roi_graph();
  auto be = testing_util::build_aot(g, {{"dim_bounds", "batch=2,rois=6"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  // Boxes inside, partly outside, degenerate, and one past the map.
  testing_util::expect_runs_match_reference(
      *be, g,
      {roi_inputs(rng, 2,
                  {0, 0, 30, 30, 8, 4, 36, 20, -10, 12, 20, 50, 11, 11, 11, 12, 40, 40, 60, 60},
                  {0, 1, 1, 0, 1}),
       roi_inputs(rng, 1, {4, 4, 12, 16}, {0})});
}

TEST(AotRoiAlign, ABatchIndexOutOfRangeIsRefused) {
  std::mt19937 rng(32);
  const Graph g = roi_graph();
  auto be = testing_util::build_aot(g, {{"dim_bounds", "batch=2,rois=6"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  testing_util::expect_run_fails(*be, roi_inputs(rng, 2, {0, 0, 8, 8, 1, 1, 6, 6}, {0, 2}),
                                 {"RoiAlign batch index 2 of roi 1 is outside [0, 2)"});
}

}  // namespace
}  // namespace hone::aot
