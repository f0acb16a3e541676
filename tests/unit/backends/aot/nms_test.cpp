// NonMaxSuppression in aot's code (nms.cpp), by the reference's selection
// (ops/nms_select.h, embedded into the library): its block ends with it, its
// count is a symbol the run sets, at most the scores' element count, and the
// block after it binds that count from its input, 0 included. Every node
// runs compiled and the selection equals the reference's.
#include "aot_test_util.h"
#include "backends/nms_graphs.h"
#include "backends/nonzero_graphs.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_matches_reference;

TEST(AotNms, DetectorSelectionRunsCompiledWithEveryCountItFinds) {
  const Graph g = backend_test::nms_detector_graph(Dim::symbol("boxes"));
  const std::vector<std::pair<std::string, std::string>> config = {{"dim_bounds", "boxes=300"},
                                                                   {"min_block_size", "1"}};
  expect_matches_reference(g, backend_test::nms_detector_inputs(), config);
  auto be = build_aot(g, config);
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(be->partition(), planned, "NonMaxSuppression"));
  EXPECT_NE(testing_util::plan_text(*be).find("NonMaxSuppression"), std::string::npos)
      << testing_util::plan_text(*be);
  // The many scattered boxes: more kept than the linear scan takes (the grid).
  auto got = be->infer(backend_test::nms_detector_inputs()[0]);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_GT((*got)[0].dim(0), 64);
}

// More boxes than the library was compiled for are refused by the code with
// the bound, as for any symbol: no run writes past the selection's buffer.
TEST(AotNms, BoxesPastTheBoundAreRefusedNotOverrun) {
  const Graph g = backend_test::nms_detector_graph(Dim::symbol("boxes"));
  auto be = build_aot(g, {{"dim_bounds", "boxes=100"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  auto got = be->infer(backend_test::nms_detector_inputs()[0]);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("outside the compiled bounds [0, 100]"), std::string::npos)
      << got.error().to_string();
}

// center_point_box and a score threshold, several batches and classes, a
// max count: written into the code as constants.
TEST(AotNms, CentreBoxesClassesAndAScoreThreshold) {
  GraphBuilder b("nms_classes", 13);
  const ValueId boxes = b.input("boxes", DType::kF32, Shape{2, 40, 4});
  const ValueId scores = b.input("scores", DType::kF32, Shape{2, 3, 40});
  b.output(b.op("NonMaxSuppression",
                {b.relu(boxes), b.relu(scores), b.constant("", Tensor::from<int64_t>({1}, {6})),
                 b.constant("", Tensor::from<float>({1}, {0.4f})),
                 b.constant("", Tensor::from<float>({1}, {0.2f}))},
                {{"center_point_box", int64_t{1}}}),
           "selected");
  const Graph g = *std::move(b).build();
  std::mt19937 rng(11);
  auto be = testing_util::expect_compiled_whole(
      g, {{testing_util::uniform(rng, {2, 40, 4}), testing_util::uniform(rng, {2, 3, 40})}});
  ASSERT_TRUE(be);
}

}  // namespace
}  // namespace hone::aot
