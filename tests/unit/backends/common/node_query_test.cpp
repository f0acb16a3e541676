// The shared node queries and the static signature of a block, on small
// graphs built with GraphBuilder.
#include "backends/common/node_query.h"

#include <gtest/gtest.h>

#include "backends/common/static_dims.h"
#include "hone/graph_builder.h"

namespace hone {
namespace {

using node_query::check_f32_io;

Graph build(GraphBuilder b) {
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

TEST(NodeQuery, AnswersAboutInputsAndOutputs) {
  GraphBuilder b;
  auto x = b.input("x", DType::kF32, {2, 3});
  auto shape = b.constant("shape", Tensor::from<int64_t>({2}, {3, 2}));
  auto bias = b.constant("bias", Tensor::zeros(DType::kF32, {3}));
  b.output(b.op("Reshape", {x, shape}), "y");
  b.output(b.add(x, bias), "z");
  const Graph g = build(std::move(b));
  const Node& reshape = g.nodes()[0];
  EXPECT_EQ(node_query::val(g, reshape, 0), &g.value(reshape.inputs[0]));
  EXPECT_EQ(node_query::val(g, reshape, 2), nullptr);
  EXPECT_FALSE(node_query::is_const(g, reshape, 0));
  EXPECT_TRUE(node_query::is_const_i64(g, reshape, 1));
  EXPECT_TRUE(node_query::is_const(g, g.nodes()[1], 1));
  EXPECT_FALSE(node_query::is_const_i64(g, g.nodes()[1], 1));  // f32, not i64
  EXPECT_EQ(node_query::rank_of(node_query::val(g, reshape, 0)), 2);
  EXPECT_EQ(node_query::rank_of(nullptr), -1);
  EXPECT_FALSE(node_query::extra_outputs_used(reshape));
  EXPECT_EQ(check_f32_io(g, reshape, 1, "x runs f32 only"), "");
  EXPECT_EQ(check_f32_io(g, reshape, 2, "x runs f32 only"), "input 1 is i64; x runs f32 only");
  EXPECT_TRUE(node_query::is_onnx_auto_pad("SAME_LOWER"));
  EXPECT_FALSE(node_query::is_onnx_auto_pad(""));
  EXPECT_TRUE(node_query::support_from("").supported);
  EXPECT_EQ(node_query::support_from("no").reason, "no");
}

TEST(NodeQuery, StaticInputDimsOnlyWhenEveryInputIsStatic) {
  GraphBuilder s;
  auto a = s.input("a", DType::kF32, {2, 3});
  auto c = s.input("c", DType::kF32, {3});
  s.output(s.add(a, c), "y");
  const auto dims = static_input_dims(build(std::move(s)));
  ASSERT_TRUE(dims.has_value());
  EXPECT_EQ(*dims, (std::vector<std::vector<int64_t>>{{2, 3}, {3}}));

  GraphBuilder d;
  auto x = d.input("x", DType::kF32, {Dim::symbol("batch"), 3});
  d.output(d.relu(x), "y");
  EXPECT_FALSE(static_input_dims(build(std::move(d))).has_value());
}

}  // namespace
}  // namespace hone
