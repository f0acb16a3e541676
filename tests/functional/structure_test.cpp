// Structure on every backend: nested input and output trees round-trip with
// their paths, and a two-model pipeline where only one model is tuned.
#include <cmath>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/pipeline.h"

namespace hone::functional {
namespace {

class Structure : public BackendTest {};

Sample nested_sample(Seeded& s, int64_t batch, float scale) {
  SampleMap meta;
  meta.emplace("scale", SampleValue(static_cast<double>(scale)));
  meta.emplace("masks", SampleValue(SampleList{SampleValue(s.uniform({batch, 6})),
                                               SampleValue(s.uniform({batch, 6}))}));
  SampleMap root;
  root.emplace("image", SampleValue(s.uniform({batch, 6})));
  root.emplace("meta", SampleValue(std::move(meta)));
  return Sample(std::move(root));
}

HONE_MATRIX_TEST_P(Structure, NestedInputsAndOutputsRoundTrip, "io.nested-inputs",
                   "io.nested-outputs", "models.nested-io") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(51);
  Graph g = nested_io(s);
  auto tuned = tune(g, {nested_sample(s, 1, 0.5f), nested_sample(s, 3, 2.0f)}, *pinned_strategy(c),
                    quick_tune_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const Sample in = nested_sample(s, 2, 1.5f);
  EXPECT_TRUE(selected_backend(*tuned, c.key, in));
  auto out = tuned->infer(in);
  ASSERT_TRUE(out) << out.error().to_string();
  // The output tree has the paths the model's outputs name.
  const SampleValue* score = out->find("result.score");
  const SampleValue* p0 = out->find("result.parts[0]");
  const SampleValue* p1 = out->find("result.parts[1]");
  ASSERT_TRUE(score && p0 && p1) << out->describe();
  ASSERT_EQ(out->find("result.parts")->list().size(), 2u);
  EXPECT_EQ(score->tensor().shape(), (std::vector<int64_t>{2}));
  // Values: against the reference on the flattened inputs, and parts[1] by hand.
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref && (*ref)->build(g));
  auto flat = tuned->spec().flatten(in);
  ASSERT_TRUE(flat) << flat.error().to_string();
  auto expected = (*ref)->infer(*flat);
  ASSERT_TRUE(expected);
  EXPECT_TRUE(c.tolerance.assert_close(score->tensor(), (*expected)[0]));
  EXPECT_TRUE(c.tolerance.assert_close(p0->tensor(), (*expected)[1]));
  const Tensor& image = in.find("image")->tensor();
  const Tensor& m1 = in.find("meta.masks[1]")->tensor();
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_NEAR(p1->tensor().data<float>()[i],
                std::max(0.0f, image.data<float>()[i] - m1.data<float>()[i]), 1e-6);
  // A tree missing a leaf is an error that names its path.
  SampleMap partial;
  partial.emplace("image", SampleValue(s.uniform({2, 6})));
  auto bad = tuned->infer(Sample(std::move(partial)));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().to_string().find("meta"), std::string::npos) << bad.error().to_string();
}

HONE_MATRIX_TEST_P(Structure, PipelineTunesOneModelAndLeavesTheOther,
                   "topology.{backend}/single-device", "models.pipeline") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(52);
  Pipeline p, plain;
  auto made = encoder_head_pipelines(s, {&p, &plain});
  ASSERT_TRUE(made) << made.error().to_string();
  const std::vector<TensorMap>& samples = made->samples;
  auto tuned = p.tune_stage("head", samples, *pinned_strategy(c), quick_tune_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const auto placement = p.placement();
  ASSERT_EQ(placement.size(), 2u);
  EXPECT_EQ(placement[0], (std::pair<std::string, std::string>{"encoder", "reference"}));
  EXPECT_EQ(placement[1], (std::pair<std::string, std::string>{"head", c.key}));
  ASSERT_NE(p.tuned("head"), nullptr);
  EXPECT_EQ(p.tuned("encoder"), nullptr);
  const uint64_t enc_before = p.backend("encoder")->executions(),
                 head_before = p.backend("head")->executions();
  const TensorMap x = {{"x", s.uniform({3, 12})}};
  auto y = p.run(x);
  auto expected = plain.run(x);
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_TRUE(expected);
  EXPECT_EQ(p.backend("encoder")->executions(), enc_before + 1);
  EXPECT_EQ(p.backend("head")->executions(), head_before + 1)
      << "the tuned head did not run on " << c.key;
  EXPECT_TRUE(c.tolerance.assert_close(y->at("probs"), expected->at("probs")));
  EXPECT_TRUE(y->at("features").bitwise_equal(expected->at("features")))
      << "the encoder must stay on the reference";
  // A stage whose input nobody provides is an error naming it.
  auto missing = p.run({{"y", s.uniform({1, 12})}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("'x'"), std::string::npos) << missing.error().message();
}

HONE_WITH_BACKENDS(Structure);

}  // namespace
}  // namespace hone::functional
