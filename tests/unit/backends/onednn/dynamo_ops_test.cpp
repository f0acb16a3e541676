// The forms PyTorch's dynamo exporter (opset 18+) writes for three zoo
// patterns, each kept in one oneDNN block: CLIP's argmax-pooled token as a
// GatherND whose index tuples are a Concat of a batch Range and the ArgMax of
// the i64 ids (own_index.cpp), DGCNN's kNN features as a GatherND with
// batch_dims 1 of TopK's indices, and swin v2's cosine attention through
// ReduceL2 with its axes as an input (lower_reduce.cpp).
#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::uniform;

void expect_one_block_with(const OnednnBackend& be, const Graph& g,
                           const std::vector<std::string>& steps) {
  EXPECT_TRUE(backend_test::all_nodes_on_backend(be, g));
  const std::vector<std::string> plans = be.plan_descriptions();
  ASSERT_EQ(plans.size(), 1u);
  for (const std::string& step : steps)
    EXPECT_NE(plans[0].find(step), std::string::npos) << step << " in " << plans[0];
}

void expect_same(OnednnBackend& be, const Graph& g, const std::vector<Tensor>& in) {
  auto got = be.infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(testing_util::close((*got)[i], (*want)[i])) << "output " << i;
}

ValueId i64s(GraphBuilder& b, const std::string& name, std::vector<int64_t> shape,
             std::vector<int64_t> v) {
  return b.constant(name, Tensor::from<int64_t>(std::move(shape), std::move(v)));
}

TEST(OnednnDynamoOps, ClipPoolingByGatherNdOfConcatenatedTuples) {
  std::mt19937 rng(91);
  GraphBuilder b("clip_pool_dynamo", 18);
  ValueId x = b.input("x", DType::kF32, Shape{2, 5, 8});
  ValueId ids = b.input("ids", DType::kI64, Shape{2, 5});
  ValueId batch = b.op("Gather", {b.op("Shape", {x}), i64s(b, "zero", {}, {0})});
  ValueId rows = b.op("Range", {i64s(b, "start", {}, {0}), batch, i64s(b, "step", {}, {1})});
  ValueId at = b.op("ArgMax", {ids}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  ValueId one = i64s(b, "axis1", {1}, {1});
  ValueId tuples =
      b.concat({b.op("Unsqueeze", {rows, one}), b.op("Unsqueeze", {at, one})}, 1);  // [2, 2] i64
  ValueId pooled = b.op("GatherND", {b.relu(x), tuples});
  b.output(b.matmul(pooled, b.constant("proj", uniform(rng, {8, 3}))), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  const Tensor xv = uniform(rng, {2, 5, 8});
  for (const std::vector<int64_t>& v : {std::vector<int64_t>{3, 9, 9, 1, 0, 7, 2, 8, 8, 1},
                                        std::vector<int64_t>{0, 0, 0, 0, 0, 5, 4, 3, 2, 6}})
    expect_same(*be, g, {xv, Tensor::from<int64_t>({2, 5}, v)});
  expect_one_block_with(*be, g, {"argmax", "gather_nd"});
  EXPECT_EQ(be->fallback_runs(), 0u);
}

TEST(OnednnDynamoOps, KnnFeaturesByGatherNdWithBatchDims) {
  std::mt19937 rng(92);
  GraphBuilder b("knn_dynamo", 18);
  ValueId p = b.input("p", DType::kF32, Shape{2, 10, 3});
  ValueId d = b.matmul(p, b.transpose(p, {0, 2, 1}));  // [2, 10, 10]
  auto topk = b.op_n("TopK", {d, i64s(b, "k", {1}, {4})}, 2, {{"axis", int64_t{-1}}});
  ValueId idx = b.op("Unsqueeze", {topk[1], i64s(b, "last", {1}, {-1})});  // [2, 10, 4, 1]
  ValueId nb = b.op("GatherND", {p, idx}, {{"batch_dims", int64_t{1}}});   // [2, 10, 4, 3]
  b.output(b.op("ReduceMax", {nb, i64s(b, "axes", {1}, {2})}, {{"keepdims", int64_t{0}}}), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  expect_same(*be, g, {uniform(rng, {2, 10, 3})});
  expect_one_block_with(*be, g, {"topk", "gather_nd"});
  EXPECT_EQ(be->fallback_runs(), 0u);
}

TEST(OnednnDynamoOps, CosineAttentionThroughReduceL2) {
  std::mt19937 rng(93);
  GraphBuilder b("cosine_attention", 18);
  ValueId q = b.input("q", DType::kF32, Shape{1, 2, 6, 8});
  ValueId k = b.input("k", DType::kF32, Shape{1, 2, 6, 8});
  auto normed = [&](ValueId x, const std::string& name) {
    ValueId n = b.op("ReduceL2", {x, i64s(b, name + "_axes", {1}, {-1})});  // keepdims
    return b.div(x, b.op("Max", {n, b.scalar_f32(name + "_eps", 1e-12f)}));
  };
  ValueId scores = b.matmul(normed(q, "q"), b.transpose(normed(k, "k"), {0, 1, 3, 2}));
  b.output(b.softmax(scores), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  Tensor kv = uniform(rng, {1, 2, 6, 8});
  for (int64_t i = 0; i < 8; ++i) kv.data<float>()[i] = 0.0f;  // a zero row: its norm is 0
  expect_same(*be, g, {uniform(rng, {1, 2, 6, 8}), kv});
  expect_one_block_with(*be, g, {"reduction"});
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// The reductions oneDNN has no algorithm for, and axes of one element, are
// own steps in the block; noop_with_empty_axes passes the input through.
TEST(OnednnDynamoOps, ReductionsWithoutAPrimitiveStayInTheBlock) {
  std::mt19937 rng(94);
  GraphBuilder b("reductions", 18);
  ValueId x = b.input("x", DType::kF32, Shape{3, 4, 5});
  ValueId lse = b.op("ReduceLogSumExp", {x, i64s(b, "a1", {1}, {1})});  // [3, 1, 5]
  ValueId l1 = b.op("ReduceL1", {lse, i64s(b, "a2", {1}, {1})});        // |lse|, axis of 1
  ValueId same =
      b.op("ReduceL2", {l1, i64s(b, "none", {0}, {})}, {{"noop_with_empty_axes", int64_t{1}}});
  b.output(b.relu(same), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  expect_same(*be, g, {uniform(rng, {3, 4, 5})});
  expect_one_block_with(*be, g, {"reduce_LogSumExp", "reduce_L1"});
  EXPECT_EQ(be->fallback_runs(), 0u);
}

}  // namespace
}  // namespace hone::onednn
