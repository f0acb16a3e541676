// The onednn backend builds from the optimized graph (CompilingBackend's
// `optimize` field): rewritten forms still reach oneDNN's fusions.
#include <filesystem>

#include "hone/onnx.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::uniform;

std::unique_ptr<OnednnBackend> build(const Graph& g, bool optimize) {
  auto be = std::make_unique<OnednnBackend>();
  EXPECT_TRUE(be->configure("optimize", optimize ? "true" : "false"));
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  return be;
}

bool has_step(const std::vector<std::string>& plans, const std::string& kind) {
  for (const std::string& p : plans)
    if (p.find(kind) != std::string::npos) return true;
  return false;
}

TEST(OnednnOptimize, BatchNormFusesTheReluThatAloneReadsIt) {
  // DenseNet's pre-activation BN -> ReLU: one pass (fuse_norm_relu). When
  // the normalized tensor is read elsewhere too, the ReLU stays a step.
  std::mt19937 rng(32);
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "BN result read twice" : "BN result read by the ReLU only");
    GraphBuilder b("bn_relu");
    ValueId x = b.input("x", DType::kF32, Shape{2, 8, 5, 6});
    ValueId bn = b.op(
        "BatchNormalization",
        {x, b.constant("s", uniform(rng, {8}, 0.5f, 1.5f)), b.constant("bb", uniform(rng, {8})),
         b.constant("m", uniform(rng, {8})), b.constant("v", uniform(rng, {8}, 0.5f, 1.5f))});
    ValueId y = b.relu(bn);
    b.output(shared ? b.op("Add", {y, bn}) : y, "y");
    Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, {2, 8, 5, 6})});
    const auto plans = build(g, false)->plan_descriptions();
    ASSERT_EQ(plans.size(), 1u);
    EXPECT_EQ(has_step(plans, "batchnorm+eltwise"), !shared) << plans[0];
  }
}

TEST(OnednnOptimize, FoldedBatchNormStillFusesConvAndRelu) {
  std::mt19937 rng(31);
  GraphBuilder b("conv_bn_relu");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 8, 8});
  ValueId c = b.conv(x, b.constant("w", uniform(rng, {8, 3, 3, 3})),
                     b.constant("b", uniform(rng, {8})), {.pads = {1, 1, 1, 1}});
  ValueId bn =
      b.op("BatchNormalization",
           {c, b.constant("s", uniform(rng, {8}, 0.5f, 1.5f)), b.constant("bb", uniform(rng, {8})),
            b.constant("m", uniform(rng, {8})), b.constant("v", uniform(rng, {8}, 0.5f, 1.5f))});
  b.output(b.relu(bn), "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 8, 8})});

  auto plain = build(g, false);
  EXPECT_TRUE(has_step(plain->plan_descriptions(), "batchnorm"));
  EXPECT_TRUE(plain->partition().notes.empty());
  auto opt = build(g, true);
  const auto plans = opt->plan_descriptions();
  EXPECT_FALSE(has_step(plans, "batchnorm"));
  EXPECT_TRUE(has_step(plans, "conv+eltwise")) << plans[0];
  ASSERT_NE(opt->partition().graph, nullptr);
  EXPECT_EQ(opt->partition().graph->nodes().size(), 2u);  // Conv, Relu
  EXPECT_NE(opt->partition().notes.find("fold_batch_norm 1"), std::string::npos)
      << opt->partition().notes;
}

TEST(OnednnOptimize, TransformerRunsWholeOnOneDnnAndFusesLayerNormWhenOptimized) {
  auto g =
      hone::onnx::load_model(std::filesystem::path(HONE_SOURCE_DIR) / "models/transformer.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  // Unoptimized, the spelled-out LayerNorm runs as its parts (ReduceMean as a
  // reduction primitive, Pow and Sqrt as eltwise); optimized, as one LayerNorm.
  std::mt19937 rng(32);
  const std::vector<Tensor> in{uniform(rng, {2, 7, 128}, -2.0f, 2.0f)};
  auto want = eval::Interpreter().run_tensors(*g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  auto plain = build(*g, false);
  EXPECT_TRUE(plain->partition().fallbacks.empty());
  auto plain_out = plain->infer(in);  // plans are made per input shape, at the first call
  ASSERT_TRUE(plain_out) << plain_out.error().to_string();
  EXPECT_TRUE(close((*plain_out)[0], (*want)[0], 1e-3, 1e-4));
  EXPECT_TRUE(has_step(plain->plan_descriptions(), "reduction"));
  auto be = build(*g, true);
  const Partition& p = be->partition();
  ASSERT_NE(p.graph, nullptr);
  EXPECT_TRUE(p.fallbacks.empty()) << p.describe(*p.graph);
  EXPECT_EQ(p.blocks.size(), 1u) << p.describe(*p.graph);
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-3, 1e-4));
  EXPECT_FALSE(has_step(be->plan_descriptions(), "reduction"));
  EXPECT_EQ(be->fallback_runs(), 0u);
  const auto plans = be->plan_descriptions();
  EXPECT_TRUE(has_step(plans, "layernorm")) << plans[0];
  EXPECT_TRUE(has_step(plans, "matmul+binary+eltwise")) << plans[0];  // fc1 + bias + GELU
}

}  // namespace
}  // namespace hone::onednn
