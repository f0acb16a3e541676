// The select backend as a whole: whichever backend each heavy node's timing
// picks, the build succeeds and computes what the reference does. The choices
// are forced here through kernel_choices, so no test depends on which kernel
// won a timing on this machine.
#include "backends/select/select_backend.h"

#include <random>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "eval/interpreter.h"
#include "hone/graph_builder.h"
#include "hone/registry.h"

namespace hone::select {
namespace {

// x f32[n, 8] -> MatMul 'mm' -> Reshape to [n, 2, 4], the shape computed from
// x's dims (Shape, Concat), as exporters write a dynamic reshape. With 'mm'
// on another backend, onednn's blocks are cut between the shape computation
// and the Reshape (PaddleOCR v4's attention blocks fail so: issue 30).
Graph dynamic_reshape(std::mt19937& rng) {
  GraphBuilder b("dynamic_reshape");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 8});
  ValueId w = b.constant("w", backend_test::uniform(rng, {8, 8}));
  ValueId lead = b.op("Shape", {x}, {{"end", int64_t{1}}}, "lead");
  ValueId rest = b.constant("rest", Tensor::from<int64_t>({2}, {2, 4}));
  ValueId shape = b.concat({lead, rest}, 0);
  ValueId y = b.op("MatMul", {x, w}, {}, "mm");
  b.output(b.op("Reshape", {y, shape}, {}, "reshape"), "y");
  return *std::move(b).build();
}

TEST(Select, AHeavyNodeOnAnotherBackendLeavesADynamicReshapeBuildable) {
  if (default_registry().find("select") == nullptr) GTEST_SKIP() << "no select backend";
  std::mt19937 rng(3);
  const Graph g = dynamic_reshape(rng);
  const std::vector<Tensor> x = {backend_test::uniform(rng, {3, 8})};
  auto want = eval::Interpreter().run_tensors(g, x);
  ASSERT_TRUE(want) << want.error().to_string();
  for (const std::string winner : {"onednn", "blas", "aot"}) {
    const auto* entry = default_registry().find(winner);
    if (entry == nullptr || !entry->unavailable().empty()) continue;
    SCOPED_TRACE(winner);
    auto be = default_registry().create("select");
    ASSERT_TRUE(be) << be.error().to_string();
    ASSERT_TRUE((*be)->configure("kernel_choices", "mm=" + winner + "(" + winner + ")"));
    auto built = (*be)->build(g);
    ASSERT_TRUE(built) << built.error().to_string();
    auto got = (*be)->infer(x);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(backend_test::close((*got)[0], (*want)[0]));
  }
}

}  // namespace
}  // namespace hone::select
