// Slice whose bounds are computed from dims (slice_bounds.cpp): RAFT's
// torch.chunk of a batch made by concatenating two, its starts and ends
// (2*batch + 1) / 2 * k, a host value per signature. aot takes the output dims
// shape inference gave and reads the starts when the code runs; every node
// runs compiled and matches the reference at batch 1 to 3.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::i64s;
using testing_util::uniform;

TEST(AotSliceBounds, ChunkOfAConcatenatedBatchRunsCompiled) {
  std::mt19937 rng(41);
  GraphBuilder b("chunk");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 3});
  const ValueId y = b.input("y", DType::kF32, Shape{Dim::symbol("batch"), 4, 3});
  const ValueId both = b.relu(b.concat({x, y}, 0));  // [(2*batch), 4, 3]
  // torch.chunk(both, 2): size = (dim + 1) / 2; parts [0, size) and [size, 2 * size).
  const ValueId dim0 = b.op("Gather", {b.op("Shape", {both}), b.constant("zero", i64s({0}))},
                            {{"axis", int64_t{0}}});
  const ValueId size = b.op(
      "Div", {b.op("Add", {dim0, b.constant("one", i64s({1}))}), b.constant("two", i64s({2}))});
  const ValueId end2 = b.op("Mul", {size, b.constant("two_", i64s({2}))});
  const ValueId axes = b.constant("axes", i64s({0}));
  const ValueId first = b.op("Slice", {both, b.constant("start", i64s({0})), size, axes});
  const ValueId second = b.op("Slice", {both, size, end2, axes});
  b.output(b.sub(first, b.sigmoid(second)), "out");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = testing_util::build_aot(*g, {{"dim_bounds", "batch=3"}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, *g)) << testing_util::plan_text(*be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  std::vector<std::vector<Tensor>> sets;
  for (int64_t n : {1, 2, 3}) sets.push_back({uniform(rng, {n, 4, 3}), uniform(rng, {n, 4, 3})});
  testing_util::expect_runs_match_reference(*be, *g, sets);
}

}  // namespace
}  // namespace hone::aot
