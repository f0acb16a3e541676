// The shape arithmetic, masks and tables exporters compute from dims
// (common/host_eval.h) are values of each plan on blas: the Reshape, Slice,
// Expand, Gather and Where that read them run on blas kernels, at every
// signature, with no block left to the reference.
#include "blas_test_util.h"

namespace hone::blas {
namespace {

using testing_util::uniform;

Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

/// Builds `g` on blas (passes on), checks every node is on blas, then runs
/// each input set against the reference with no fallback run.
void expect_on_blas_at(const Graph& g, const std::vector<std::vector<Tensor>>& runs) {
  auto be = testing_util::build_blas(g, 2);
  ASSERT_EQ(be->state(), BackendState::kActive);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  for (const std::vector<Tensor>& in : runs) {
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    const uint64_t before = be->kernel_executions();
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(backend_test::close((*got)[i], (*want)[i]))
          << "output " << i << " at " << in[0].shape()[0] << "x" << in[0].shape()[1];
    EXPECT_GT(be->kernel_executions(), before);
  }
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block ran on the reference";
}

// x.view(x.size(0), 2 * ids.size(1), 4) as the dynamo exporter writes it:
// Shape with start/end, arithmetic on a dim (which the passes cannot make a
// constant), Concat and a Reshape with allowzero = 1. `ids` (i64) is read
// only for its length, as input_ids are.
TEST(BlasHostValues, ComputedReshapeTargetIsAPlanConstant) {
  GraphBuilder b("view");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  ValueId ids = b.input("ids", DType::kI64, Shape{Dim::symbol("batch"), Dim::symbol("seq")});
  ValueId n = b.op("Shape", {x}, {{"start", int64_t{0}}, {"end", int64_t{1}}});
  ValueId s = b.op("Shape", {ids}, {{"start", int64_t{1}}, {"end", int64_t{2}}});
  ValueId twice = b.op("Mul", {s, b.constant("two", i64s({2}))});
  ValueId target = b.concat({n, twice, b.constant("four", i64s({4}))}, 0);
  ValueId r = b.op("Reshape", {x, target}, {{"allowzero", int64_t{1}}});
  b.output(b.relu(r), "y");
  const Graph g = *std::move(b).build();
  std::mt19937 rng(41);
  std::vector<std::vector<Tensor>> runs;
  for (const auto& [bt, sq] : {std::pair{1, 3}, std::pair{2, 5}, std::pair{1, 3}})
    runs.push_back({uniform(rng, {bt, sq, 8}), Tensor::zeros(DType::kI64, {bt, sq})});
  expect_on_blas_at(g, runs);
}

// Causal attention over positions made from the sequence length: Range,
// Unsqueeze and Greater make the mask (host values), Where selects by it,
// Slice cuts a table to the length, Expand broadcasts to a computed shape,
// Split and Gather by constants.
TEST(BlasHostValues, MasksSlicesAndExpandsFromDimsRunOnBlas) {
  std::mt19937 rng(42);
  GraphBuilder b("causal");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 6});
  ValueId seq = b.op("Shape", {x}, {{"start", int64_t{1}}, {"end", int64_t{2}}});
  ValueId len = b.op("Squeeze", {seq, b.constant("ax0", i64s({0}))});
  ValueId pos = b.op("Range", {b.constant("zero", Tensor::scalar<int64_t>(0)), len,
                               b.constant("one", Tensor::scalar<int64_t>(1))});
  ValueId row = b.op("Unsqueeze", {pos, b.constant("ax1", i64s({1}))});
  ValueId col = b.op("Unsqueeze", {pos, b.constant("ax0b", i64s({0}))});
  ValueId future = b.op("Greater", {col, row});  // [seq, seq] bool
  ValueId scores = b.matmul(x, b.transpose(x, {0, 2, 1}));
  ValueId masked = b.op("Where", {future, b.scalar_f32("ninf", -INFINITY), scores});
  ValueId att = b.matmul(b.softmax(masked), x);
  ValueId table = b.constant("table", uniform(rng, {32, 6}));
  ValueId cut =
      b.op("Slice", {table, b.constant("s0", i64s({0})), seq, b.constant("a0", i64s({0}))});
  b.output(b.add(att, cut), "att");
  ValueId shape =
      b.concat({b.op("Shape", {x}, {{"end", int64_t{2}}}), b.constant("six", i64s({6}))}, 0);
  b.output(b.op("Expand", {b.constant("bias", uniform(rng, {1, 6})), shape}), "expanded");
  auto parts = b.op_n("Split", {x, b.constant("sizes", i64s({2, 4}))}, 2, {{"axis", int64_t{-1}}});
  b.output(b.relu(parts[0]), "left");
  b.output(b.sigmoid(parts[1]), "right");
  ValueId first = b.op("Gather", {x, b.constant("zero_index", Tensor::scalar<int64_t>(0))},
                       {{"axis", int64_t{1}}});
  b.output(first, "first");
  // Expand of a value made at run time to a shape made from dims (the
  // constant's Expand above is a host value itself).
  ValueId wide = b.op("Unsqueeze", {first, b.constant("ax1b", i64s({1}))});
  b.output(b.op("Expand", {wide, shape}), "first_expanded");
  // Slices of run-time data: from 1 to the computed length, and every other channel backwards.
  b.output(b.op("Slice", {x, b.constant("one1", i64s({1})), seq, b.constant("a1", i64s({1}))}),
           "tail");
  b.output(b.op("Slice", {x, b.constant("end", i64s({-1})), b.constant("begin", i64s({-100})),
                          b.constant("a2", i64s({2})), b.constant("m2", i64s({-2}))}),
           "odd_reversed");
  const Graph g = *std::move(b).build();
  std::vector<std::vector<Tensor>> runs;
  for (const auto& [bt, sq] : {std::pair{1, 4}, std::pair{3, 7}})
    runs.push_back({uniform(rng, {bt, sq, 6})});
  expect_on_blas_at(g, runs);
}

// What blas cannot know when planning stays on the reference, with the reason.
TEST(BlasHostValues, RunTimeIndicesAndConditionsAreRefusedWithTheReason) {
  GraphBuilder b("runtime");
  ValueId x = b.input("x", DType::kF32, Shape{4, 6});
  ValueId idx = b.input("idx", DType::kI64, Shape{3});
  b.output(b.op("Gather", {x, idx}), "rows");
  ValueId c = b.op("Greater", {x, b.scalar_f32("zero", 0.0f)});
  b.output(b.op("Where", {c, x, b.scalar_f32("z", 0.0f)}), "relu");
  const Graph g = *std::move(b).build();
  const std::vector<NodeSupport> s = BlasBackend().propose(g);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NE(s[0].reason.find("computed at run time"), std::string::npos) << s[0].reason;
  EXPECT_NE(s[2].reason.find("condition is computed at run time"), std::string::npos)
      << s[2].reason;
}

}  // namespace
}  // namespace hone::blas
