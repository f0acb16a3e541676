// Lengths found when a node runs (ops/run_length.h) on onednn, which plans
// each block per input signature: a TopK whose K is computed from dims is
// planned with that K inside its block (OnednnBackend::ends_block_after: no
// cut after it, unlike aot's symbolic code), while a Slice of starts and ends
// read when it runs (a Loop body's x[i:i+2]) is an own step that ends its
// block, and the block after it is planned with the dims it found. Every
// node runs on onednn and matches the reference.
#include "backends/nonzero_graphs.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using backend_test::ints;
using testing_util::build_onednn;

/// Whether the first `op` of `p` is followed by another node of its block.
bool inside_a_block(const Partition& p, const Graph& planned, const std::string& op) {
  for (const Block& b : p.blocks)
    for (size_t k = 0; k < b.nodes.size(); ++k)
      if (planned.node(b.nodes[k]).op_type == op) return b.on_backend && k + 1 < b.nodes.size();
  return false;
}

/// Runs every input set of `ins` on `be` and the reference; no block may
/// fall back to the reference.
void expect_runs_match(const OnednnBackend& be, const Graph& g,
                       const std::vector<std::vector<Tensor>>& ins) {
  for (const auto& in : ins) {
    SCOPED_TRACE(in[0].describe());
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    auto got = be.infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(backend_test::close((*got)[i], (*want)[i]))
          << "output " << i << ": " << (*got)[i].describe() << " vs " << (*want)[i].describe();
  }
  EXPECT_EQ(be.fallback_runs(), 0u) << "a block fell back to the reference";
}

// torchvision's detection tail, one class: the scores above 0.5 (NonZero,
// GatherND), their top min(3, count) (K from the count's Shape) doubled, and
// the first two of those (a Slice over the run-time length K). NonZero ends
// its block; the TopK and the Slice do not: K is known when the block after
// the NonZero is planned for its count.
TEST(OnednnRunLengths, ATopKOfAKFromDimsAndItsSliceStayInsideTheirBlock) {
  GraphBuilder b("topk_host_k", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n")});
  const auto [at, scores, k] = backend_test::kept_scores(b, x, 3);
  auto top = b.op_n("TopK", {scores, k}, 2, {{"axis", int64_t{-1}}});
  const ValueId doubled = b.mul(top[0], b.constant("", Tensor::from<float>({}, {2.0f})));
  b.output(b.relu(b.op("Slice", {doubled, ints(b, {0}), ints(b, {2})})), "first_two");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(be->partition(), planned));
  EXPECT_TRUE(inside_a_block(be->partition(), planned, "TopK"))
      << be->partition().describe(planned);
  EXPECT_TRUE(inside_a_block(be->partition(), planned, "Slice"))
      << be->partition().describe(planned);
  // K = 3 of five, K = 2 of two, K = 1 of one (the Slice keeps what there
  // is) and K = 0 of none (empty values from the NonZero on).
  expect_runs_match(*be, g,
                    {{Tensor::from<float>({7}, {0.9f, 0.1f, 0.7f, 0.8f, 0.95f, 0.6f, 0.2f})},
                     {Tensor::from<float>({4}, {0.1f, 0.75f, 0.3f, 0.8f})},
                     {Tensor::from<float>({3}, {0.1f, 0.2f, 0.6f})},
                     {Tensor::from<float>({2}, {0.1f, 0.2f})}});
}

// Rows i to i + 2 of relu(x) for i given when the block runs (i64 scalar,
// unsqueezed; the end computed from it), then doubled: the Slice is an own
// step that ends its block (its output's dims depend on i), and the Mul
// after it is planned for the rows it kept: two, one at the end (clamped),
// none past it (an empty value), and from the end for a negative i.
TEST(OnednnRunLengths, ASliceOfStartsAndEndsReadWhenItRunsEndsItsBlock) {
  GraphBuilder b("slice_at_run_time", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{6, 4});
  const ValueId i = b.input("i", DType::kI64, Shape{});
  const ValueId start = b.op("Unsqueeze", {i, ints(b, {0})});
  const ValueId end = b.add(start, ints(b, {2}));
  const ValueId rows = b.op("Slice", {b.relu(x), start, end, ints(b, {0})});
  b.output(b.mul(rows, b.constant("", Tensor::from<float>({}, {2.0f}))), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(be->partition(), planned, "Slice"));
  std::mt19937 rng(41);
  const Tensor xv = backend_test::uniform(rng, {6, 4});
  std::vector<std::vector<Tensor>> ins;
  for (int64_t at : {1, 5, 7, -3}) ins.push_back({xv, Tensor::scalar(at)});
  expect_runs_match(*be, g, ins);
  EXPECT_GT(be->kernel_executions(), 0u);
}

// Every position given when it runs, i32, over two axes (one reversed by a
// step of -2), of i64 data: the own step resolves the window as the
// reference does, and a window that is empty or out of order is an output
// of no elements.
TEST(OnednnRunLengths, ASliceOfEveryPositionAtRunTimeOverTwoAxes) {
  GraphBuilder b("slice_all_at_run_time", 13);
  const ValueId x = b.input("x", DType::kI64, Shape{3, 5});
  const ValueId starts = b.input("starts", DType::kI32, Shape{2});
  const ValueId ends = b.input("ends", DType::kI32, Shape{2});
  const ValueId steps = b.input("steps", DType::kI32, Shape{2});
  b.output(b.op("Slice", {x, starts, ends, ints(b, {1, 0}), steps}), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  std::vector<int64_t> xs(15);
  for (int64_t k = 0; k < 15; ++k) xs[static_cast<size_t>(k)] = 10 * k - 7;
  const Tensor xv = Tensor::from<int64_t>({3, 5}, xs);
  const auto i32s = [](std::vector<int32_t> v) { return Tensor::from<int32_t>({2}, std::move(v)); };
  expect_runs_match(*be, g,
                    {{xv, i32s({4, 0}), i32s({-100, 3}), i32s({-2, 1})},
                     {xv, i32s({1, -1}), i32s({4, 100}), i32s({1, 1})},
                     {xv, i32s({3, 0}), i32s({1, 3}), i32s({1, 1})}});
}

}  // namespace
}  // namespace hone::onednn
