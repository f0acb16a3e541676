#include "hone/partition.h"

#include <gtest/gtest.h>

#include "hone/graph_builder.h"

namespace hone {
namespace {

// x -> 6 x Relu -> Weird -> 2 x Relu -> y, plus a side branch.
Graph chain_with_weird() {
  GraphBuilder b("chain");
  ValueId v = b.input("x", DType::kF32, Shape{4});
  for (int i = 0; i < 6; ++i) v = b.op("Relu", {v}, {}, "a" + std::to_string(i));
  v = b.op("Weird", {v}, {}, "weird");
  for (int i = 0; i < 2; ++i) v = b.op("Relu", {v}, {}, "b" + std::to_string(i));
  b.output(v, "y");
  return *std::move(b).build();
}

std::vector<NodeSupport> vote(const Graph& g) {
  std::vector<NodeSupport> s;
  for (const Node& n : g.nodes())
    s.push_back(n.op_type == "Weird" ? NodeSupport::no("no kernel for Weird") : NodeSupport::yes());
  return s;
}

TEST(Partition, SmallIslandsFallBackAndNeighboursMerge) {
  Graph g = chain_with_weird();
  auto p = partition_graph(g, vote(g), PartitionOptions{5, false});
  ASSERT_TRUE(p) << p.error().to_string();
  ASSERT_EQ(p->blocks.size(), 2u) << p->describe(g);
  EXPECT_TRUE(p->blocks[0].on_backend);
  EXPECT_EQ(p->blocks[0].nodes.size(), 6u);
  EXPECT_FALSE(p->blocks[1].on_backend);  // Weird + the 2-node island after it
  EXPECT_EQ(p->blocks[1].nodes.size(), 3u);
  EXPECT_EQ(p->nodes_on_backend(), 6u);
  EXPECT_EQ(p->fallbacks.size(), 3u);
  const std::string d = p->describe(g);
  EXPECT_NE(d.find("'weird' (Weird): no kernel for Weird"), std::string::npos) << d;
  EXPECT_NE(d.find("fewer than min_block_size 5"), std::string::npos) << d;
  // Block 0 hands its last value to block 1, which produces the graph output.
  ASSERT_EQ(p->blocks[0].outputs.size(), 1u);
  EXPECT_EQ(p->blocks[1].inputs, p->blocks[0].outputs);
  ASSERT_EQ(p->blocks[1].outputs.size(), 1u);
  EXPECT_EQ(g.value(p->blocks[1].outputs[0]).name, "y");
}

TEST(Partition, FallbacksAreSummarisedByOpTypeBeforeTheNodeList) {
  Graph g = chain_with_weird();
  auto p = partition_graph(g, vote(g), PartitionOptions{5, false});
  ASSERT_TRUE(p) << p.error().to_string();
  // Weird, and the two Relus of the island after it, most first.
  EXPECT_EQ(p->fallback_summary(g), "fallbacks by op: Relu x2, Weird");
  const std::string d = p->describe(g);
  const size_t summary = d.find("\n  fallbacks by op: Relu x2, Weird");
  ASSERT_NE(summary, std::string::npos) << d;
  EXPECT_LT(summary, d.find("\n  fallback 'weird'")) << d;
  auto whole = partition_graph(g, vote(g), PartitionOptions{1, false});
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->fallback_summary(g), "fallbacks by op: Weird");
}

TEST(Partition, MinBlockSizeOneKeepsEveryIsland) {
  Graph g = chain_with_weird();
  auto p = partition_graph(g, vote(g), PartitionOptions{1, false});
  ASSERT_TRUE(p);
  ASSERT_EQ(p->blocks.size(), 3u);
  EXPECT_TRUE(p->blocks[2].on_backend);
}

TEST(Partition, RequireFullCompilationNamesTheNode) {
  Graph g = chain_with_weird();
  auto p = partition_graph(g, vote(g), PartitionOptions{5, true});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(p.error().message().find("'weird'"), std::string::npos);
  EXPECT_NE(p.error().message().find("no kernel for Weird"), std::string::npos);
}

TEST(Partition, GroupedOrderKeepsBranchesTogether) {
  // Two independent branches interleaved in file order: s1 u1 s2 u2 s3 u3.
  GraphBuilder b("branches");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId s = x, u = x;
  for (int i = 0; i < 3; ++i) {
    s = b.op("Relu", {s}, {}, "s" + std::to_string(i));
    u = b.op("Weird", {u}, {}, "u" + std::to_string(i));
  }
  b.output(b.op("Add", {s, u}, {}, "join"), "y");
  Graph g = *std::move(b).build();
  auto p = partition_graph(g, vote(g), PartitionOptions{1, false});
  ASSERT_TRUE(p);
  // Supported s0..s2 form one block rather than three.
  EXPECT_EQ(p->blocks.size(), 3u) << p->describe(g);
}

TEST(Partition, ExtractedBlocksAreStandaloneGraphs) {
  Graph g = chain_with_weird();
  auto p = partition_graph(g, vote(g), PartitionOptions{5, false});
  ASSERT_TRUE(p);
  for (const Block& blk : p->blocks) {
    auto sub = extract_block(g, blk);
    ASSERT_TRUE(sub) << sub.error().to_string();
    EXPECT_EQ(sub->nodes().size(), blk.nodes.size());
    EXPECT_EQ(sub->inputs().size(), blk.inputs.size());
    EXPECT_EQ(sub->outputs().size(), blk.outputs.size());
    EXPECT_TRUE(sub->validate());
  }
}

TEST(Partition, WrongProposalCountIsAnError) {
  Graph g = chain_with_weird();
  EXPECT_FALSE(partition_graph(g, {}, PartitionOptions{}));
}

}  // namespace
}  // namespace hone
