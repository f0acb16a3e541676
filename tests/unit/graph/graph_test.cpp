#include "hone/graph.h"

#include <gtest/gtest.h>

#include "hone/graph_builder.h"

namespace hone {
namespace {

TEST(Graph, TopologicalOrderPutsProducersFirst) {
  Graph g;
  ValueId x = g.add_input("x", DType::kF32, Shape{2});
  // Add nodes out of order by wiring values by hand.
  Value mid;
  mid.name = "mid";
  ValueId m = g.add_value(mid);
  Value outv;
  outv.name = "y";
  ValueId y = g.add_value(outv);
  g.add_node_with_outputs(Node{"second", "Relu", "", {m}, {y}, {}});
  g.add_node_with_outputs(Node{"first", "Neg", "", {x}, {m}, {}});
  g.add_output(y);
  auto order = g.topological_order();
  ASSERT_TRUE(order);
  EXPECT_EQ(g.node((*order)[0]).name, "first");
  EXPECT_TRUE(g.validate());
}

TEST(Graph, CycleIsReportedWithANode) {
  Graph g;
  Value a, b;
  a.name = "a";
  b.name = "b";
  ValueId va = g.add_value(a), vb = g.add_value(b);
  g.add_node_with_outputs(Node{"n1", "Relu", "", {vb}, {va}, {}});
  g.add_node_with_outputs(Node{"n2", "Relu", "", {va}, {vb}, {}});
  g.add_output(vb);
  auto r = g.validate();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("cycle"), std::string::npos);
}

TEST(Graph, UndefinedInputIsNamed) {
  Graph g;
  Value ghost;
  ghost.name = "ghost";
  ValueId v = g.add_value(ghost);
  auto y = g.add_node("Relu", {v}, 1, {}, "r");
  g.add_output(y[0]);
  auto r = g.validate();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("'ghost'"), std::string::npos);
  EXPECT_NE(r.error().message().find("'r'"), std::string::npos);
  // As a subgraph capturing an outer name it is fine.
  EXPECT_TRUE(g.validate({"ghost"}));
}

TEST(GraphBuilder, BuildsAnMlp) {
  GraphBuilder b("mlp");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
  ValueId w = b.constant("w", Tensor::zeros(DType::kF32, {4, 2}));
  ValueId bias = b.constant("b", Tensor::zeros(DType::kF32, {2}));
  b.output(b.relu(b.gemm(x, w, bias)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->nodes().size(), 2u);
  EXPECT_EQ(g->parameter_count(), 10);
  EXPECT_EQ(g->value(g->outputs()[0]).name, "y");
}

}  // namespace
}  // namespace hone
