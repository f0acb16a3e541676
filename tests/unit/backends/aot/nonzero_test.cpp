// NonZero in aot's code (nonzero.cpp, ops/nonzero.h): its block ends with it,
// its output's length is a symbol the run sets, at most the input's element
// count, and the block after it binds that length from its input, 0
// included. Every node runs compiled and matches the reference.
#include "aot_test_util.h"
#include "backends/nonzero_graphs.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_matches_reference;

// torch.where(mask) and what reads the positions: some, none, all found;
// tokens bound at 4, so the length is at most 16.
TEST(AotNonZero, RouteRunsCompiledWithEveryLengthItFinds) {
  const Graph g = backend_test::nonzero_route_graph(Dim::symbol("tokens"));
  const std::vector<std::pair<std::string, std::string>> config = {{"dim_bounds", "tokens=4"},
                                                                   {"min_block_size", "1"}};
  expect_matches_reference(g, backend_test::nonzero_route_inputs(), config);
  auto be = build_aot(g, config);
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(be->partition(), planned));
  EXPECT_NE(testing_util::plan_text(*be).find("NonZero"), std::string::npos)
      << testing_util::plan_text(*be);
}

// Every dtype it reads, a scalar, NaN (non-zero) and -0.0 (zero).
TEST(AotNonZero, EveryDtypeAndAScalar) {
  expect_matches_reference(backend_test::nonzero_dtypes_graph(),
                           backend_test::nonzero_dtypes_inputs(), {{"min_block_size", "1"}});
}

// A token count past the bound the library was compiled for is refused by
// the code with the bound, as for any symbol; the length's own bound follows
// (16 at tokens=4), so no run can write past the output's buffer.
TEST(AotNonZero, InputsPastTheBoundAreRefusedNotOverrun) {
  const Graph g = backend_test::nonzero_route_graph(Dim::symbol("tokens"));
  auto be = build_aot(g, {{"dim_bounds", "tokens=2"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  auto got = be->infer({Tensor::from<float>({3, 4}, std::vector<float>(12, 1.0f))});
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("outside the compiled bounds [0, 2]"), std::string::npos)
      << got.error().to_string();
}

}  // namespace
}  // namespace hone::aot
