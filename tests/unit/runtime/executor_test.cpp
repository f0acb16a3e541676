// The runtime's Executor: blocks of several compilers in one graph, placement
// by node name, and the graph passes' result shared instead of run again.
#include "runtime/executor.h"

#include <atomic>

#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "runtime/counting_block.h"

namespace hone::runtime {
namespace {

using testing_runtime::CountingBlock;
using testing_runtime::OpsCompiler;

// x -> Relu -> MatMul(w) -> Relu -> Add(x) -> y, nodes named r1, mm, r2, add.
Graph chain() {
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape{2, 2});
  ValueId w = b.constant("w", Tensor::from<float>({2, 2}, {1.0f, 2.0f, -1.0f, 0.5f}));
  ValueId v = b.relu(x);
  v = b.matmul(v, w);
  v = b.relu(v);
  v = b.add(v, x);
  b.output(v, "y");
  return *std::move(b).build();
}

std::string name_of(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes())
    if (n.op_type == op) return n.name;
  return {};
}

// Options that keep the graph as given (no graph passes) and blocks of any size.
ExecutorOptions as_given() {
  ExecutorOptions o;
  o.partition.min_block_size = 1;
  o.optimize = false;
  return o;
}

TEST(Executor, HoldsBlocksOfTwoCompilersWherePlacementSays) {
  Graph g = chain();
  OpsCompiler main("main", {"Relu", "MatMul", "Add"}), other("other", {"MatMul"});
  Executor ex({&main, &other});
  ExecutorOptions o = as_given();
  o.placement[name_of(g, "MatMul")] = 1;
  ex.set_options(o);
  ASSERT_TRUE(ex.build(g));
  const Partition& p = ex.partition();
  ASSERT_EQ(p.blocks.size(), 3u) << p.describe(g);
  EXPECT_TRUE(p.blocks[1].on_backend);
  EXPECT_EQ(p.blocks[1].placed_on, "other");
  EXPECT_TRUE(p.blocks[0].placed_on.empty());
  EXPECT_TRUE(p.fallbacks.empty()) << p.describe(g);
  EXPECT_EQ(main.blocks, 2);
  EXPECT_EQ(other.blocks, 1);
  Tensor x = Tensor::from<float>({2, 2}, {1.0f, -2.0f, 3.0f, 0.5f});
  auto got = ex.run({x});
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, {x});
  ASSERT_TRUE(want);
  EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0]));
  EXPECT_EQ(other.runs.load(), 1);
  EXPECT_EQ(main.runs.load(), 2);
}

TEST(Executor, APlacedNodeItsCompilerRefusesFallsBackWithTheReason) {
  Graph g = chain();
  OpsCompiler main("main", {"Relu", "MatMul", "Add"}), other("other", {"Add"});
  Executor ex({&main, &other});
  ExecutorOptions o = as_given();
  o.placement[name_of(g, "MatMul")] = 1;
  ex.set_options(o);
  auto p = ex.plan(g);
  ASSERT_TRUE(p) << p.error().to_string();
  ASSERT_EQ(p->fallbacks.size(), 1u);
  EXPECT_NE(
      p->fallbacks[0].second.find("placed on other, which cannot run it: other has no MatMul"),
      std::string::npos)
      << p->fallbacks[0].second;
}

// Like a backend built with require_full_compilation: claims Shape, MatMul and
// Relu, and Reshape only when its shape is computed in the graph it is shown
// (as onednn does, from dims); compiling a block with a node it would refuse
// there fails.
class StrictShapeCompiler final : public BlockCompiler {
 public:
  std::string_view name() const override { return "strict"; }
  NodeSupport supports(const Graph& g, const Node& n) const override {
    if (n.op_type == "Reshape")
      return g.value(n.inputs[1]).producer >= 0
                 ? NodeSupport::yes()
                 : NodeSupport::no("shape is not computed in this graph");
    return n.op_type == "Shape" || n.op_type == "MatMul" || n.op_type == "Relu"
               ? NodeSupport::yes()
               : NodeSupport::no("strict has no " + n.op_type);
  }
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override {
    for (const Node& n : block.nodes())
      if (NodeSupport s = supports(block, n); !s.supported)
        return fail(ErrorCode::kUnsupported, n.describe() + ": " + s.reason);
    return std::make_unique<CountingBlock>(block, &runs);
  }
  std::atomic<int> runs{0};
};

// The first compiler's proposals are made on the whole graph; a node placed
// elsewhere cuts its blocks, and the Shape that feeds the Reshape lands in the
// block before the cut, the Reshape after it. The first compiler's block with
// the Reshape cannot take it: it runs on the fallback, with the reason,
// whichever compiler each placed node went to.
TEST(Executor, ANodeItsBlockCannotRunOnceCutByPlacementFallsBackWithTheReason) {
  GraphBuilder b("cut");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 2});
  ValueId w = b.constant("w", Tensor::from<float>({2, 2}, {1.0f, 2.0f, -1.0f, 0.5f}));
  ValueId s = b.op("Shape", {x});
  ValueId v = b.relu(b.matmul(x, w));
  b.output(b.op("Reshape", {v, s}, {}, "reshape"), "y");
  auto built = std::move(b).build();
  ASSERT_TRUE(built) << built.error().to_string();
  const Graph& g = *built;
  StrictShapeCompiler main;
  OpsCompiler other("other", {"MatMul"});
  Executor ex({&main, &other});
  ExecutorOptions o = as_given();
  o.placement[name_of(g, "MatMul")] = 1;
  ex.set_options(o);
  auto built_ex = ex.build(g);
  ASSERT_TRUE(built_ex) << built_ex.error().to_string();
  const Partition& p = ex.partition();
  ASSERT_EQ(p.fallbacks.size(), 1u) << p.describe(g);
  EXPECT_EQ(g.node(p.fallbacks[0].first).name, "reshape");
  EXPECT_NE(p.fallbacks[0].second.find("shape is not computed in this graph"), std::string::npos)
      << p.fallbacks[0].second;
  for (const Block& blk : p.blocks)
    for (NodeId id : blk.nodes)
      if (g.node(id).name == "reshape") EXPECT_FALSE(blk.on_backend) << p.describe(g);
  Tensor x3 = Tensor::from<float>({3, 2}, {1.0f, -2.0f, 3.0f, 0.5f, -1.0f, 4.0f});
  auto got = ex.run({x3});
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, {x3});
  ASSERT_TRUE(want);
  EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0]));
  EXPECT_EQ(other.blocks, 1);
}

// A node whose length is found when it runs ends its block where the
// block's compiler says so (BlockCompiler::ends_block_after): by default
// every one ops::length_known_after_run names (a TopK of a K given when it
// runs), else only the ops the compiler names (as onednn, which plans a
// TopK's K per input signature).
TEST(Executor, ARunTimeLengthEndsItsBlockWhereItsCompilerSays) {
  GraphBuilder b("topk_then_relu", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{6});
  const ValueId k = b.input("k", DType::kI64, Shape{1});
  auto top = b.op_n("TopK", {x, k}, 2, {{"axis", int64_t{0}}});
  b.output(b.relu(top[0]), "y");
  const Graph g = *std::move(b).build();
  const std::vector<Tensor> in{Tensor::from<float>({6}, {0.5f, -1.0f, 3.0f, 2.0f, -0.5f, 1.0f}),
                               Tensor::from<int64_t>({1}, {4})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  for (const bool by_default : {true, false}) {
    SCOPED_TRACE(by_default ? "the default rule" : "ends after NonZero only");
    OpsCompiler c("c", {"TopK", "Relu"});
    if (!by_default) c.ends_after = std::set<std::string>{"NonZero"};
    Executor ex({&c});
    ExecutorOptions o = as_given();
    ex.set_options(o);
    ASSERT_TRUE(ex.build(g));
    const Partition& p = ex.partition();
    ASSERT_EQ(p.blocks.size(), by_default ? 2u : 1u) << p.describe(g);
    EXPECT_EQ(p.blocks[0].nodes.size(), by_default ? 1u : 2u) << p.describe(g);
    auto got = ex.run(in);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0]));
  }
}

TEST(Executor, AnUnknownPlacedNodeIsAnError) {
  Graph g = chain();
  OpsCompiler main("main", {"Relu"}), other("other", {"MatMul"});
  Executor ex({&main, &other});
  ExecutorOptions o;
  o.optimize = false;
  o.placement["no_such_node"] = 1;
  ex.set_options(o);
  auto p = ex.plan(g);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message().find("'no_such_node'"), std::string::npos) << p.error().to_string();
}

TEST(Executor, UsesTheSharedOptimizedGraphOnlyForTheGraphItWasMadeFrom) {
  Graph g = chain();
  auto shared = optimize_shared(g);
  ASSERT_TRUE(shared) << shared.error().to_string();
  OpsCompiler main("main", {"Relu", "MatMul", "Add"});
  Executor ex({&main});
  ExecutorOptions o;
  o.optimized = *shared;
  ex.set_options(o);
  auto same = ex.optimized(g);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->get(), shared->get());
  Graph copy = g;
  auto other = ex.optimized(copy);
  ASSERT_TRUE(other);
  EXPECT_NE(other->get(), shared->get());
  o.optimize = false;
  ex.set_options(o);
  auto none = ex.optimized(g);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->get(), nullptr);
}

TEST(Executor, SoleBlockWhereOneCompiledBlockRunsTheWholeGraph) {
  // Two inputs the block reads in the other order, and two outputs.
  GraphBuilder b("two");
  ValueId x = b.input("x", DType::kF32, Shape{2, 2});
  ValueId y = b.input("y", DType::kF32, Shape{2, 2});
  ValueId s = b.relu(y);
  b.output(b.add(s, x), "sum");
  b.output(s, "relu");
  const Graph g = *std::move(b).build();
  OpsCompiler all("all", {"Relu", "Add"});
  Executor ex({&all});
  ExecutorOptions o = as_given();
  ex.set_options(o);
  ASSERT_TRUE(ex.build(g));
  const Executor::SoleBlock sole = ex.sole_block();
  ASSERT_NE(sole.block, nullptr);
  const Block& blk = ex.partition().blocks[0];
  ASSERT_EQ(sole.inputs.size(), blk.inputs.size());
  for (size_t i = 0; i < sole.inputs.size(); ++i)
    EXPECT_EQ(g.inputs()[sole.inputs[i]], blk.inputs[i]);
  ASSERT_EQ(sole.outputs.size(), 2u);
  for (size_t o2 = 0; o2 < 2; ++o2) EXPECT_EQ(blk.outputs[sole.outputs[o2]], g.outputs()[o2]);
  // The checks run() makes, without running: the error names the input and axis.
  EXPECT_TRUE(
      ex.check_inputs({Tensor::zeros(DType::kF32, {2, 2}), Tensor::zeros(DType::kF32, {2, 2})}));
  auto bad = ex.check_inputs(
      {Tensor::zeros(DType::kF32, {2, 2}), Tensor::borrow(DType::kF32, {2, 3}, nullptr)});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("input 1 'y' axis 1"), std::string::npos)
      << bad.error().message();

  // A node left to the fallback: no sole block.
  OpsCompiler relu_only("relu_only", {"Relu"});
  Executor split({&relu_only});
  split.set_options(o);
  ASSERT_TRUE(split.build(g));
  EXPECT_EQ(split.sole_block().block, nullptr);
  // Nor before build().
  EXPECT_EQ(Executor({&all}).sole_block().block, nullptr);
}

}  // namespace
}  // namespace hone::runtime
