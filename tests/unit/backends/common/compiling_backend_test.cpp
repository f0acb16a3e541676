// CompilingBackend's wiring, with a test backend that claims some ops and
// runs its blocks through the interpreter while counting them.
#include "backends/common/compiling_backend.h"

#include <atomic>

#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/registry.h"
#include "runtime/counting_block.h"

namespace hone {
namespace {

using testing_runtime::CountingBlock;

// Claims Relu, Add and Mul; everything else falls back.
class PickyBackend final : public CompilingBackend {
 public:
  std::string_view name() const override { return "picky"; }
  const BackendCapabilities& capabilities() const override { return caps_; }
  std::atomic<int> block_runs{0};
  int compiled_blocks = 0;

 protected:
  NodeSupport supports(const Graph&, const Node& n) const override {
    if (n.op_type == "Relu" || n.op_type == "Add" || n.op_type == "Mul") return NodeSupport::yes();
    return NodeSupport::no("picky has no " + n.op_type);
  }
  Result<std::unique_ptr<CompiledBlock>> compile(const Graph& block) override {
    ++compiled_blocks;
    return std::make_unique<CountingBlock>(block, &block_runs);
  }

 private:
  BackendCapabilities caps_;
};

Graph mixed() {
  GraphBuilder b("mixed");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n")});
  ValueId two = b.scalar_f32("two", 2.0f);
  ValueId v = x;
  for (int i = 0; i < 3; ++i) v = b.relu(b.add(b.mul(v, two), x));  // 9 supported nodes
  v = b.sigmoid(v);                                                 // refused
  ValueId w = b.relu(b.add(v, x));                                  // 2-node island
  b.output(w, "y");
  b.output(v, "mid");
  return *std::move(b).build();
}

TEST(CompilingBackend, RunsBlocksAndFallbackLikeTheReference) {
  Graph g = mixed();
  PickyBackend be;
  ASSERT_TRUE(be.build(g));
  const Partition& p = be.partition();
  ASSERT_EQ(p.blocks.size(), 2u) << p.describe(g);
  EXPECT_EQ(p.nodes_on_backend(), 9u);
  EXPECT_EQ(be.compiled_blocks, 1);
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref);
  ASSERT_TRUE((*ref)->build(g));
  Tensor x = Tensor::from<float>({4}, {-1.0f, 0.0f, 0.5f, 2.0f});
  auto got = be.infer({x});
  auto want = (*ref)->infer({x});
  ASSERT_TRUE(got) << got.error().to_string();
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE((*got)[i].bitwise_equal((*want)[i])) << i;
  EXPECT_EQ(be.block_runs.load(), 1);
}

TEST(CompilingBackend, RequireFullCompilationFailsTheBuild) {
  Graph g = mixed();
  PickyBackend be;
  ASSERT_TRUE(be.configure("require_full_compilation", "true"));
  auto r = be.build(g);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().to_string().find("picky has no Sigmoid"), std::string::npos)
      << r.error().to_string();
  EXPECT_EQ(be.state(), BackendState::kCreated);
}

TEST(CompilingBackend, MinBlockSizeIsAConfigField) {
  Graph g = mixed();
  PickyBackend be;
  EXPECT_TRUE(be.config().has("precision"));
  ASSERT_TRUE(be.configure("min_block_size", "1"));
  ASSERT_TRUE(be.build(g));
  EXPECT_EQ(be.partition().blocks.size(), 3u);
  EXPECT_EQ(be.compiled_blocks, 2);
  auto again = be.configure("min_block_size", "2");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace hone
