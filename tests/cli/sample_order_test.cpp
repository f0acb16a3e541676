// The samples `hone tune` (and hone::random_samples) build from --inputs DIR or random inputs bind
// to the model's inputs even when an input name cannot be a sample path key
// ("x.1", as PyTorch exports name inputs).
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/graph_spec.h"
#include "hone/input_options.h"
#include "hone/random_samples.h"

namespace hone::cli {
namespace {

Graph two_inputs(const std::string& first) {
  GraphBuilder b("two");
  auto x = b.input(first, DType::kF32, {Dim::symbol("batch"), 4});
  auto y = b.input("y", DType::kF32, {Dim::symbol("batch"), 4});
  b.output(b.add(x, y), "z");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

TEST(CliSamples, DottedInputNamesBindByPosition) {
  const Graph g = two_inputs("x.1");
  std::vector<Tensor> in = {Tensor::zeros(DType::kF32, {2, 4}), Tensor::zeros(DType::kF32, {2, 4})};
  const Sample s = sample_in_graph_order(g, in);
  EXPECT_TRUE(s.is_list());
  auto spec = GraphSpec::learn(g, {s}, {});
  ASSERT_TRUE(spec) << spec.error().to_string();
  ASSERT_EQ(spec->inputs.size(), 2u);
  EXPECT_EQ(spec->inputs[0].name, "x.1");
  EXPECT_EQ(spec->inputs[1].name, "y");
}

TEST(CliSamples, PlainInputNamesKeyAMap) {
  const Graph g = two_inputs("x");
  std::vector<Tensor> in = {Tensor::zeros(DType::kF32, {2, 4}), Tensor::zeros(DType::kF32, {2, 4})};
  const Sample s = sample_in_graph_order(g, in);
  ASSERT_TRUE(s.is_map());
  EXPECT_TRUE(s.map().count("x") && s.map().count("y"));
  EXPECT_TRUE(GraphSpec::learn(g, {s}, {}));
}

}  // namespace
}  // namespace hone::cli
