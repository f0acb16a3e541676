// NonMaxSuppression on cuda (kernels/nms.cu, ops_nms.cpp): torchvision's
// batched NMS and the Gather of the boxes it keeps, and thousands of random
// boxes over several batches and classes (a score threshold, a cap on the
// boxes kept, both box formats), each selection equal to the reference's
// row for row. Its block ends with it and the count comes back to plan the
// next. The proposals run without a device; the comparisons skip without
// one, naming why.
#include <optional>
#include <random>

#include "backends/nms_graphs.h"
#include "backends/nonzero_graphs.h"
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::fallbacks_of;
using testing_util::plan_text;

/// NonMaxSuppression alone: boxes [batches, n, 4] and scores [batches,
/// classes, n] (Relu'd scores, so the node reads computed values), at most
/// `max_out` a class, IoU 0.5, score threshold `thr` when given.
Graph nms_graph(int64_t batches, int64_t classes, int64_t n, int64_t max_out, int center,
                std::optional<float> thr) {
  GraphBuilder b("nms_random", 13);
  const ValueId boxes = b.input("boxes", DType::kF32, Shape{batches, n, 4});
  const ValueId scores = b.relu(b.input("scores", DType::kF32, Shape{batches, classes, n}));
  std::vector<ValueId> in = {boxes, scores, b.constant("", Tensor::from<int64_t>({1}, {max_out})),
                             b.constant("", Tensor::from<float>({1}, {0.5f}))};
  if (thr) in.push_back(b.constant("", Tensor::from<float>({1}, {*thr})));
  b.output(b.op("NonMaxSuppression", in, {{"center_point_box", int64_t{center}}}), "selected");
  return *std::move(b).build();
}

/// `n` boxes a batch over a 200 x 200 image, sides 4 to 30 (corners in
/// either order, or centers and sizes), scores in 64 steps (many ties).
std::vector<Tensor> random_inputs(int64_t batches, int64_t classes, int64_t n, int center,
                                  uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> at(0.0f, 200.0f), side(4.0f, 30.0f);
  std::vector<float> boxes, scores;
  for (int64_t i = 0; i < batches * n; ++i) {
    const float y = at(rng), x = at(rng), h = side(rng), w = side(rng);
    if (center)
      boxes.insert(boxes.end(), {x, y, w, h});
    else if (rng() % 2)
      boxes.insert(boxes.end(), {y, x, y + h, x + w});
    else
      boxes.insert(boxes.end(), {y + h, x + w, y, x});
  }
  for (int64_t i = 0; i < batches * classes * n; ++i)
    scores.push_back(static_cast<float>(rng() % 64) / 64.0f - 0.1f);
  return {Tensor::from<float>({batches, n, 4}, boxes),
          Tensor::from<float>({batches, classes, n}, scores)};
}

TEST(CudaNms, ProposedAndEndsItsBlock) {
  const Graph g = backend_test::nms_detector_graph(Dim::symbol("boxes"));
  EXPECT_EQ(fallbacks_of(g), "");
  CudaBackend be;
  auto part = be.plan(g);
  ASSERT_TRUE(part) << part.error().to_string();
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(*part, part->graph ? *part->graph : g,
                                                "NonMaxSuppression"));
}

// An IoU threshold computed at run time: left to the reference, saying why.
TEST(CudaNms, ARunTimeThresholdIsRefused) {
  GraphBuilder b("nms_run_time_iou", 13);
  const ValueId boxes = b.input("boxes", DType::kF32, Shape{1, 8, 4});
  const ValueId scores = b.input("scores", DType::kF32, Shape{1, 1, 8});
  const ValueId iou = b.input("iou", DType::kF32, Shape{1});
  b.output(b.op("NonMaxSuppression",
                {boxes, scores, b.constant("", Tensor::from<int64_t>({1}, {3})), b.relu(iou)}),
           "selected");
  const std::string why = fallbacks_of(*std::move(b).build());
  EXPECT_NE(why.find("input 3 (iou_threshold) is neither a constant"), std::string::npos) << why;
}

TEST(CudaNms, DetectorMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  const Graph g = backend_test::nms_detector_graph(Dim::symbol("boxes"));
  const auto sets = backend_test::nms_detector_inputs();
  auto be = expect_matches_reference(g, sets[0], 0.0, 0.0);
  EXPECT_NE(plan_text(*be).find("nms.f32.cuda"), std::string::npos) << plan_text(*be);
  auto many = be->infer(sets[0]);
  ASSERT_TRUE(many) << many.error().to_string();
  EXPECT_GT((*many)[0].dim(0), 64);
  EXPECT_LT((*many)[0].dim(0), 300);
  expect_matches_reference(g, sets[1], 0.0, 0.0);
  // None: [0, 3] selected, and the block after it reads an empty [0, 4],
  // which cuda leaves to the reference; the selection is still cuda's.
  auto want = eval::Interpreter().run_tensors(g, sets[2]);
  ASSERT_TRUE(want) << want.error().to_string();
  auto got = be->infer(sets[2]);
  ASSERT_TRUE(got) << got.error().to_string();
  ASSERT_EQ((*got)[0].shape(), (std::vector<int64_t>{0, 3}));
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(backend_test::close((*got)[i], (*want)[i])) << "output " << i;
}

// 3000 boxes, 2 batches, 3 classes: the rows equal the reference's exactly,
// with and without a score threshold and a cap, in both box formats.
TEST(CudaNms, ThousandsOfBoxesEqualTheReference) {
  HONE_REQUIRE_CUDA();
  struct Case {
    int64_t max_out;
    int center;
    std::optional<float> thr;
  };
  const Case cases[] = {{100000, 0, std::nullopt}, {50, 0, 0.3f}, {7, 1, 0.0f}, {100000, 1, 0.5f}};
  uint32_t seed = 11;
  for (const Case& c : cases) {
    SCOPED_TRACE("max_out " + std::to_string(c.max_out) + " center " + std::to_string(c.center) +
                 (c.thr ? " threshold " + std::to_string(*c.thr) : " no threshold"));
    const Graph g = nms_graph(2, 3, 3000, c.max_out, c.center, c.thr);
    const std::vector<Tensor> in = random_inputs(2, 3, 3000, c.center, seed++);
    auto be = expect_matches_reference(g, in, 0.0, 0.0, {{"min_block_size", "1"}});
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    const Tensor& sel = (*got)[0];
    // Several pairs keep boxes, and the rows are not all of one pair.
    ASSERT_GT(sel.dim(0), 6);
    EXPECT_NE(sel.data<int64_t>()[0], sel.data<int64_t>()[3 * (sel.dim(0) - 1)]) << "one batch";
  }
}

}  // namespace
}  // namespace hone::cuda
