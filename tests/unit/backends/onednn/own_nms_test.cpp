// NonMaxSuppression as onednn's own step (own_nms.cpp, ops/nms_select.h):
// torchvision's batched NMS and the Gather of the boxes it keeps. The step
// ends its block, the block after it is planned with the count it selected
// (none included), and the selection equals the reference's exactly, with no
// block on the reference. Thresholds that are not constants are refused.
#include "backends/nms_graphs.h"
#include "backends/nonzero_graphs.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;

TEST(OnednnOwnNms, DetectorSelectionEndsItsBlockAndEqualsTheReference) {
  const Graph g = backend_test::nms_detector_graph(Dim::symbol("boxes"));
  auto be = build_onednn(g);
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(be->partition(), planned, "NonMaxSuppression"));
  for (const auto& in : backend_test::nms_detector_inputs()) {
    SCOPED_TRACE(in[0].describe());
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    const uint64_t fallbacks = be->fallback_runs();
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    const Tensor &sel = (*got)[0], &ref = (*want)[0];
    ASSERT_EQ(sel.shape(), ref.shape());
    ASSERT_EQ(sel.dtype(), DType::kI64);
    for (int64_t i = 0; i < ref.numel(); ++i)
      ASSERT_EQ(sel.data<int64_t>()[i], ref.data<int64_t>()[i]) << "element " << i;
    EXPECT_TRUE(backend_test::close((*got)[1], (*want)[1])) << "kept boxes";
    EXPECT_EQ(be->fallback_runs(), fallbacks);
  }
  // The scattered boxes keep many, and suppress some; the copies keep one.
  const auto in = backend_test::nms_detector_inputs();
  auto many = be->infer(in[0]);
  ASSERT_TRUE(many) << many.error().to_string();
  EXPECT_GT((*many)[0].dim(0), 64);
  EXPECT_LT((*many)[0].dim(0), 300);
  auto one = be->infer(in[1]);
  ASSERT_TRUE(one) << one.error().to_string();
  EXPECT_EQ((*one)[0].shape(), (std::vector<int64_t>{1, 3}));
}

// An IoU threshold computed at run time: the node is not claimed, and the
// reason says what the step needs.
TEST(OnednnOwnNms, ARunTimeThresholdIsRefused) {
  GraphBuilder b("nms_run_time_iou", 13);
  const ValueId boxes = b.input("boxes", DType::kF32, Shape{1, 8, 4});
  const ValueId scores = b.input("scores", DType::kF32, Shape{1, 1, 8});
  const ValueId iou = b.input("iou", DType::kF32, Shape{1});
  b.output(
      b.op("NonMaxSuppression", {b.relu(boxes), b.relu(scores),
                                 b.constant("", Tensor::from<int64_t>({1}, {3})), b.relu(iou)}),
      "selected");
  const Graph g = *std::move(b).build();
  const Graph* planned = &g;
  auto be = build_onednn(g);
  if (be->partition().graph) planned = &*be->partition().graph;
  bool on_backend = false;
  for (const Block& blk : be->partition().blocks)
    for (NodeId id : blk.nodes)
      on_backend |= blk.on_backend && planned->node(id).op_type == "NonMaxSuppression";
  EXPECT_FALSE(on_backend) << be->partition().describe(*planned);
  EXPECT_NE(be->partition().describe(*planned).find("must be constants"), std::string::npos)
      << be->partition().describe(*planned);
}

}  // namespace
}  // namespace hone::onednn
