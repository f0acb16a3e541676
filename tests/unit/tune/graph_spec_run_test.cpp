// End to end: samples -> GraphSpec -> flat inputs -> the reference backend ->
// the output tree, at every batch size (and sequence length) within the bounds.
#include <gtest/gtest.h>

#include "hone/graph_spec.h"
#include "hone/registry.h"
#include "spec_test_models.h"

namespace hone {
namespace {

using namespace spec_test;

std::unique_ptr<Backend> reference_for(const Graph& g) {
  auto be = default_registry().create("reference");
  EXPECT_TRUE(be) << be.error().to_string();
  auto built = (*be)->build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  return std::move(*be);
}

TEST(GraphSpecRun, NestedTreeRunsAtEveryBatchSize) {
  const Graph g = nested_model();
  auto spec = GraphSpec::learn(g, {nested_sample(1), nested_sample(2)},
                               {*parse_dim_declaration("batch=1:4:6")});
  ASSERT_TRUE(spec) << spec.error().to_string();
  auto be = reference_for(g);
  const Sample base = nested_sample(2, 1.5f);
  for (int64_t batch = spec->bounds.at("batch").min; batch <= spec->bounds.at("batch").max;
       ++batch) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    auto sample = spec->rebatch(base, batch);
    ASSERT_TRUE(sample) << sample.error().to_string();
    auto flat = spec->flatten(*sample);
    ASSERT_TRUE(flat) << flat.error().to_string();
    auto outs = be->infer(*flat);
    ASSERT_TRUE(outs) << outs.error().to_string();
    auto tree = spec->unflatten_outputs(std::move(*outs));
    ASSERT_TRUE(tree) << tree.error().to_string();
    const std::string b = std::to_string(batch);
    EXPECT_EQ(tree->describe(),
              "{boxes: {wh: f32[" + b + ",4], xy: f32[" + b + ",4]}, logits: f32[" + b + ",4]}");
    const float* image = sample->find("image")->tensor().data<float>();
    const float* m0 = sample->find("meta.masks[0]")->tensor().data<float>();
    const float* m1 = sample->find("meta.masks[1]")->tensor().data<float>();
    const float* xy = tree->find("boxes.xy")->tensor().data<float>();
    const float* wh = tree->find("boxes.wh")->tensor().data<float>();
    const float* logits = tree->find("logits")->tensor().data<float>();
    for (int64_t i = 0; i < batch * 4; ++i) {
      EXPECT_FLOAT_EQ(xy[i], image[i] * 1.5f + m0[i]) << i;
      EXPECT_FLOAT_EQ(wh[i], m1[i] * 1.5f) << i;
      EXPECT_FLOAT_EQ(logits[i], image[i] + m1[i]) << i;
    }
  }
}

TEST(GraphSpecRun, DynamicBatchAndSequenceRunAtEveryPairInBounds) {
  for (bool symbolic : {true, false}) {
    SCOPED_TRACE(symbolic ? "symbolic dims" : "dims learned from data");
    const Graph g = seq_model(symbolic);
    const std::string seq_name = symbolic ? "seq" : "dim0";
    auto spec = GraphSpec::learn(
        g, seq_samples(),
        {*parse_dim_declaration("batch=1:2:5"), *parse_dim_declaration(seq_name + "=1:4:8")});
    ASSERT_TRUE(spec) << spec.error().to_string();
    auto be = reference_for(g);
    for (int64_t batch = 1; batch <= 5; ++batch) {
      for (int64_t seq = 1; seq <= 8; ++seq) {
        SCOPED_TRACE(std::to_string(batch) + "x" + std::to_string(seq));
        auto sample = spec->random_sample({{"batch", batch}, {seq_name, seq}},
                                          static_cast<uint64_t>(batch * 100 + seq));
        ASSERT_TRUE(sample) << sample.error().to_string();
        auto flat = spec->flatten(*sample);
        ASSERT_TRUE(flat) << flat.error().to_string();
        auto outs = be->infer(*flat);
        ASSERT_TRUE(outs) << outs.error().to_string();
        auto tree = spec->unflatten_outputs(std::move(*outs));
        ASSERT_TRUE(tree) << tree.error().to_string();
        const Tensor& tokens = sample->find("tokens")->tensor();
        const Tensor& y = tree->find("y")->tensor();
        ASSERT_EQ(y.shape(), tokens.shape());
        for (int64_t i = 0; i < y.numel(); ++i)
          ASSERT_EQ(y.data<float>()[i], 2 * tokens.data<float>()[i]);
        const Tensor& mask = sample->find("mask")->tensor();
        const Tensor& m = tree->find("m")->tensor();
        ASSERT_EQ(m.shape(), (std::vector<int64_t>{batch, seq}));
        for (int64_t i = 0; i < m.numel(); ++i)
          ASSERT_EQ(m.data<float>()[i], mask.data<float>()[i] * mask.data<float>()[i]);
      }
    }
    // One past the bounds is refused before the backend sees it.
    auto over = spec->rebatch(seq_sample(2, 3), 6);
    ASSERT_TRUE(over);
    EXPECT_FALSE(spec->flatten(*over));
  }
}

}  // namespace
}  // namespace hone
