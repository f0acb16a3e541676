// lower_embedding_bag on what PyTorch's TorchScript exporter writes for an
// nn.EmbeddingBag over 2-D ids (tests/unit/graph/data, made by
// make_embedding_bag.py): the Loop becomes Gather and a reduction over axis 1,
// with the reference's answer at several batch sizes, in sum, mean and max.
#include <gtest/gtest.h>

#include "hone/onnx.h"
#include "hone/optimize.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;

Graph exported(const std::string& mode) {
  auto g =
      onnx::load_model(HONE_SOURCE_DIR "/tests/unit/graph/data/embedding_bag_" + mode + ".onnx");
  EXPECT_TRUE(g) << g.error().to_string();
  return g ? *std::move(g) : Graph();
}

/// Seeded ids [batch, length] into a table of 20 rows.
Tensor ids(int64_t batch, uint32_t seed, int64_t length = 5) {
  std::mt19937 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(batch * length));
  for (int64_t& x : v) x = static_cast<int64_t>(rng() % 20);
  return Tensor::from<int64_t>({batch, length}, v);
}

TEST(PassesEmbeddingBag, TheExportersLoopBecomesGatherAndReduce) {
  for (const char* mode : {"sum", "mean", "max"}) {
    SCOPED_TRACE(mode);
    const Graph g = exported(mode);
    ASSERT_EQ(count_op(g, "Loop"), 1u);
    PassStats st;
    auto out = lower_embedding_bag(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(st.rewritten, 1);
    EXPECT_EQ(count_op(*out, "Loop"), 0u);
    const std::string reduce = std::string(mode) == "sum"    ? "ReduceSum"
                               : std::string(mode) == "mean" ? "ReduceMean"
                                                             : "ReduceMax";
    EXPECT_EQ(count_op(*out, reduce), 1u);
    for (int64_t batch : {1, 3, 8})
      EXPECT_TRUE(same_outputs(g, *out, {ids(batch, static_cast<uint32_t>(batch))}))
          << "batch " << batch;
    // Through the whole pipeline too: nothing of the offsets' arithmetic is left.
    Graph opt = g;
    auto report = optimize(opt);
    ASSERT_TRUE(report) << report.error().to_string();
    EXPECT_EQ(count_op(opt, "Loop"), 0u);
    EXPECT_EQ(count_op(opt, "Range"), 0u);
    EXPECT_TRUE(same_outputs(g, opt, {ids(4, 9)}));
  }
}

TEST(PassesEmbeddingBag, ALoopOfAnotherFormStays) {
  // The same export with the trip count replaced by a constant 2: the loop
  // no longer covers every bag, and the rewrite would change the answer.
  Graph g = exported("sum");
  ASSERT_EQ(count_op(g, "Loop"), 1u);
  const ValueId two = g.add_initializer("two", Tensor::scalar(int64_t{2}));
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.node(static_cast<NodeId>(i)).op_type == "Loop")
      g.node(static_cast<NodeId>(i)).inputs[0] = two;
  PassStats st;
  auto out = lower_embedding_bag(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
  EXPECT_EQ(count_op(*out, "Loop"), 1u);
}

// The dynamo exporter's form (make_embedding_bag_dynamo.py): a Loop with no trip
// count carrying a sequence and an index, an If for empty bags, ConcatFromSequence.
Graph dynamo(const std::string& mode) {
  auto g = onnx::load_model(HONE_SOURCE_DIR "/tests/unit/graph/data/embedding_bag_dynamo_" + mode +
                            ".onnx");
  EXPECT_TRUE(g) << g.error().to_string();
  return g ? *std::move(g) : Graph();
}

std::vector<Tensor> dynamo_inputs(int64_t batch, uint32_t seed) {
  return {
      Tensor::from<int64_t>({batch, 2}, std::vector<int64_t>(static_cast<size_t>(batch * 2), 0)),
      ids(batch, seed, 3)};
}

TEST(PassesEmbeddingBag, TheDynamoExportersLoopBecomesReshapeAndReduce) {
  for (const char* mode : {"sum", "mean", "max"}) {
    SCOPED_TRACE(mode);
    const Graph g = dynamo(mode);
    ASSERT_EQ(count_op(g, "Loop"), 1u);
    PassStats st;
    auto out = lower_embedding_bag(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(st.rewritten, 1);
    EXPECT_EQ(count_op(*out, "Loop"), 0u);
    EXPECT_EQ(count_op(*out, "ConcatFromSequence"), 0u);
    for (int64_t batch : {1, 3, 8})
      EXPECT_TRUE(same_outputs(g, *out, dynamo_inputs(batch, static_cast<uint32_t>(batch))))
          << "batch " << batch;
    Graph opt = g;
    auto report = optimize(opt);
    ASSERT_TRUE(report) << report.error().to_string();
    EXPECT_EQ(count_op(opt, "Loop"), 0u);
    EXPECT_EQ(count_op(opt, "SequenceEmpty"), 0u);
    EXPECT_TRUE(same_outputs(g, opt, dynamo_inputs(4, 9)));
  }
}

TEST(PassesEmbeddingBag, ADynamoLoopWhoseOffsetsAreNotTheIdsCountStays) {
  // The bag offsets' total made a constant 6: with 3 ids a bag that is not
  // every batch's count, so nothing proves the bags cover the rows evenly.
  Graph g = dynamo("sum");
  const ValueId six = g.add_initializer("six", Tensor::from<int64_t>({1}, {6}));
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (Node& n = g.node(static_cast<NodeId>(i)); n.op_type == "Concat") n.inputs[1] = six;
  PassStats st;
  auto out = lower_embedding_bag(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
  EXPECT_EQ(count_op(*out, "Loop"), 1u);
}

TEST(PassesEmbeddingBag, ADynamoLoopThatStepsByTwoStays) {
  // The body's index steps by 2: every other bag, which Reduce(Reshape) is not.
  Graph g = dynamo("sum");
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    Node& n = g.node(static_cast<NodeId>(i));
    if (n.op_type != "Loop") continue;
    auto body =
        std::make_shared<Graph>(*std::get<std::shared_ptr<const Graph>>(n.attrs.at("body")));
    const ValueId two = body->add_initializer("step_two", Tensor::scalar(int64_t{2}));
    for (size_t k = 0; k < body->nodes().size(); ++k)
      if (Node& b = body->node(static_cast<NodeId>(k));
          b.op_type == "Add" && b.outputs[0] == body->outputs()[2])
        b.inputs[1] = two;
    n.attrs["body"] = std::shared_ptr<const Graph>(body);
  }
  PassStats st;
  auto out = lower_embedding_bag(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
}

}  // namespace
}  // namespace hone
