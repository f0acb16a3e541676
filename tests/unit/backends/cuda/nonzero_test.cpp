// NonZero on cuda (kernels/index_ops.cu hone_nonzero, ops/nonzero.h): a
// mixture of experts' torch.where(mask) and what reads the positions, every
// dtype, a scalar, and an input of several chunks of the kernel's block (the
// prefix sum that keeps row-major order across chunks). Its block ends with
// it and the count comes back to plan the next. The proposal runs without a
// device; the comparisons skip without one, naming why.
#include "backends/nonzero_graphs.h"
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::fallbacks_of;
using testing_util::plan_text;

TEST(CudaNonZero, ProposedAndEndsItsBlock) {
  EXPECT_EQ(fallbacks_of(backend_test::nonzero_dtypes_graph()), "");
  const Graph g = backend_test::nonzero_route_graph(Dim::symbol("tokens"));
  EXPECT_EQ(fallbacks_of(g), "");
  CudaBackend be;
  auto part = be.plan(g);
  ASSERT_TRUE(part) << part.error().to_string();
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(*part, part->graph ? *part->graph : g));
}

TEST(CudaNonZero, RouteMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  const Graph g = backend_test::nonzero_route_graph(Dim::symbol("tokens"));
  const auto sets = backend_test::nonzero_route_inputs();
  auto be = expect_matches_reference(g, sets[0], 0.0, 0.0);
  EXPECT_NE(plan_text(*be).find("nonzero.f32.cuda"), std::string::npos) << plan_text(*be);
  expect_matches_reference(g, sets[2], 0.0, 0.0);
  // None found: the block after it sees [0, 4] (cuda plans no empty tensor:
  // that signature runs on the reference); the positions are still cuda's.
  auto want = eval::Interpreter().run_tensors(g, sets[1]);
  ASSERT_TRUE(want);
  auto got = be->infer(sets[1]);
  ASSERT_TRUE(got) << got.error().to_string();
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(backend_test::close((*got)[i], (*want)[i])) << "output " << i;
}

TEST(CudaNonZero, EveryDtypeAndAScalar) {
  HONE_REQUIRE_CUDA();
  const Graph g = backend_test::nonzero_dtypes_graph();
  for (const auto& in : backend_test::nonzero_dtypes_inputs())
    expect_matches_reference(g, in, 0.0, 0.0, {{"min_block_size", "1"}});
}

TEST(CudaNonZero, ManyChunksKeepRowMajorOrder) {
  HONE_REQUIRE_CUDA();
  GraphBuilder b("nonzero_long", 13);
  b.output(b.op("NonZero", {b.relu(b.input("x", DType::kF32, Shape{3, 1500}))}), "y");
  const Graph g = *std::move(b).build();
  std::vector<float> x(4500);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i * 7919) % 5 < 2 ? 1.0f : -1.0f;
  expect_matches_reference(g, {Tensor::from<float>({3, 1500}, x)}, 0.0, 0.0,
                           {{"min_block_size", "1"}});
}

}  // namespace
}  // namespace hone::cuda
