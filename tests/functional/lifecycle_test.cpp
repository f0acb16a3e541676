// Lifecycle of every backend: build, infer against an independent answer,
// prove the backend's own kernels ran, enforced states, error isolation and
// concurrent inference.
#include <atomic>
#include <thread>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/graph_builder.h"

namespace hone::functional {
namespace {

class Lifecycle : public BackendTest {};

HONE_MATRIX_TEST_P(Lifecycle, BuildInferProveExecution, "lifecycle.build", "lifecycle.infer",
                   "lifecycle.execution-proof", "models.mlp", "io.single-tensor") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(11);
  MlpWeights w;
  Graph g = mlp(s, &w);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  EXPECT_EQ((*be)->state(), BackendState::kActive);
  for (int64_t batch : {1, 3}) {
    auto x = s.inputs(g, {{"batch", batch}});
    const uint64_t before = (*be)->executions();
    auto y = (*be)->infer(x);
    ASSERT_TRUE(y) << y.error().to_string();
    EXPECT_EQ((*be)->executions(), before + 1) << "the backend's own kernels did not run";
    ASSERT_EQ(y->size(), 1u);
    EXPECT_TRUE(c.tolerance.assert_close((*y)[0], mlp_oracle(w, x[0])));
    EXPECT_TRUE(matches_reference(c, g, x, **be));
  }
}

HONE_MATRIX_TEST_P(Lifecycle, StatesAreEnforced, "lifecycle.states") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(3);
  Graph g = mlp(s);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  auto again = (*be)->build(g);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kFailedPrecondition);
  ASSERT_TRUE((*be)->deactivate());
  EXPECT_EQ((*be)->state(), BackendState::kInactive);
  auto x = s.inputs(g, {{"batch", 2}});
  auto inactive = (*be)->infer(x);
  ASSERT_FALSE(inactive);
  EXPECT_EQ(inactive.error().code(), ErrorCode::kFailedPrecondition);
  ASSERT_TRUE((*be)->activate());
  EXPECT_TRUE((*be)->infer(x));
}

HONE_MATRIX_TEST_P(Lifecycle, FailuresLeaveTheProcessUsable, "lifecycle.error-isolation",
                   "shapes.wrong-shape-error") {
  const BackendCase& c = GetParam();
  // An op nobody has: build fails with an error naming the node.
  GraphBuilder bad("bad");
  ValueId x = bad.input("x", DType::kF32, Shape{2});
  bad.output(bad.op("NoSuchOp", {x}, {}, "mystery"), "y");
  auto bad_graph = std::move(bad).build();
  ASSERT_TRUE(bad_graph);
  auto failed = c.factory();
  ASSERT_TRUE(failed);
  auto r = (*failed)->build(*bad_graph);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("mystery"), std::string::npos) << r.error().to_string();

  // Another backend object still builds and runs.
  Seeded s = seeded(5);
  Graph g = mlp(s);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  // Wrong shape at run time: a clear error naming the input and axis, and the
  // backend keeps working afterwards.
  auto wrong = (*be)->infer({Tensor::zeros(DType::kF32, {2, 15})});
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("'x'"), std::string::npos) << wrong.error().to_string();
  EXPECT_NE(wrong.error().message().find("axis 1"), std::string::npos) << wrong.error().to_string();
  auto wrong_dtype = (*be)->infer({Tensor::zeros(DType::kF64, {2, 16})});
  ASSERT_FALSE(wrong_dtype);
  EXPECT_NE(wrong_dtype.error().message().find("f32"), std::string::npos);
  EXPECT_TRUE((*be)->infer(s.inputs(g, {{"batch", 2}})));
}

HONE_MATRIX_TEST_P(Lifecycle, ConcurrentInferIsConsistent, "lifecycle.concurrent-infer") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(9);
  Graph g = conv_net(s);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  auto x = s.inputs(g, {{"batch", 2}});
  auto first = (*be)->infer(x);
  ASSERT_TRUE(first) << first.error().to_string();
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        auto y = (*be)->infer(x);
        if (!y || !(*y)[0].bitwise_equal((*first)[0])) ++mismatches;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ((*be)->executions(), 21u);
}

HONE_WITH_BACKENDS(Lifecycle);

}  // namespace
}  // namespace hone::functional
