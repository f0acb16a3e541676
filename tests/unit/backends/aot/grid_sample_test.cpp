// GridSample in aot's code (grid_sample.cpp), by the reference's taps
// (ops/grid_sample_taps.h): RAFT's lookup with a symbolic batch, then a
// Reshape whose dims shape inference gives from GridSample's output; every
// mode and padding, points outside the input, and a 3-D sample. Each graph
// compiles whole and matches the reference.
#include <tuple>

#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::uniform;

/// Builds `g` with the batch bound at 3, checks nothing fell back, runs each
/// input set against the reference.
void expect_whole(const Graph& g, const std::vector<std::vector<Tensor>>& input_sets) {
  auto be = testing_util::build_aot(g, {{"dim_bounds", "batch=3"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  testing_util::expect_runs_match_reference(*be, g, input_sets);
}

TEST(AotGridSample, EveryModeAndPaddingThenAReshapeOfItsOutput) {
  std::mt19937 rng(21);
  GraphBuilder b("grid_sample", 16);
  const Dim batch = Dim::symbol("batch");
  const ValueId x = b.input("x", DType::kF32, Shape{batch, 2, 6, 7});
  const ValueId grid = b.input("grid", DType::kF32, Shape{batch, 3, 4, 2});
  const std::vector<std::tuple<const char*, const char*, int64_t>> forms = {
      {"bilinear", "zeros", 1},     {"bilinear", "zeros", 0},     {"nearest", "border", 0},
      {"nearest", "zeros", 1},      {"bicubic", "reflection", 1}, {"bicubic", "border", 0},
      {"bilinear", "reflection", 0}};
  int k = 0;
  for (const auto& [mode, pad, align] : forms) {
    const ValueId y = b.op("GridSample", {b.relu(x), grid},
                           {{"mode", std::string(mode)},
                            {"padding_mode", std::string(pad)},
                            {"align_corners", align}});
    // [batch, 2, 3, 4] -> [batch, 24]: a constant shape over GridSample's dims.
    b.output(b.reshape(y, {-1, 24}), "y" + std::to_string(k));
    ++k;
  }
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  // Points up to 1.6 out: every padding reaches past the edge.
  expect_whole(*g, {{uniform(rng, {1, 2, 6, 7}), uniform(rng, {1, 3, 4, 2}, -1.6f, 1.6f)},
                    {uniform(rng, {3, 2, 6, 7}), uniform(rng, {3, 3, 4, 2}, -1.6f, 1.6f)}});
}

TEST(AotGridSample, ThreeSpatialDims) {
  std::mt19937 rng(22);
  GraphBuilder b("grid_sample_3d", 20);
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2, 3, 4, 5});
  const ValueId grid = b.input("grid", DType::kF32, Shape{Dim::symbol("batch"), 2, 2, 3, 3});
  b.output(b.op("GridSample", {x, grid},
                {{"mode", std::string("linear")},
                 {"padding_mode", std::string("reflection")},
                 {"align_corners", int64_t{0}}}),
           "linear");
  b.output(b.op("GridSample", {x, grid},
                {{"mode", std::string("nearest")}, {"padding_mode", std::string("border")}}),
           "nearest");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_whole(*g, {{uniform(rng, {2, 2, 3, 4, 5}), uniform(rng, {2, 2, 2, 3, 3}, -1.4f, 1.4f)}});
}

}  // namespace
}  // namespace hone::aot
