// hone's own steps for OneHot, ScatterND and the Transpose, Split and Slice
// of integer or bool values (own_moves.cpp): a Mixtral router's expert mask,
// the token positions its NonZero finds and its index_add_ (ScatterND with
// reduction add, the dynamo exporter's form). Each graph must plan every node
// on onednn, match the reference and run no block on the reference; NonZero
// ends its block.
#include "backends/moe_routing_graph.h"
#include "backends/nonzero_graphs.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::expect_matches_reference;
using testing_util::uniform;

ValueId om_ints(GraphBuilder& b, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return b.constant("", Tensor::from<int64_t>({n}, std::move(v)));
}
Tensor om_i64s(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Tensor::from<int64_t>(std::move(shape), std::move(v));
}

// Mixtral's routing (backend_test::moe_routing_graph): one_hot of TopK's
// indices permuted and cast to bool, the positions split into i64 columns,
// f32 values on axis 0 with a negative and an out-of-range index.
TEST(OnednnOwnMoves, OneHotRoutingAndIntegerSplit) {
  std::mt19937 rng(95);
  const Graph g = backend_test::moe_routing_graph(Dim(3), Dim(4));
  expect_matches_reference(g, {uniform(rng, {3, 5}), om_i64s({4, 2}, {0, 1, 1, 0, 2, 2, 3, 1}),
                               om_i64s({4}, {1, -1, 3, 0})});
}

// The dynamo form of Mixtral's index_add_: NonZero's positions ([n, 2] after
// a Transpose) sliced into an i64 column, ScatterND's [n, 1] indices, each a
// partial index (a row of [6, 4]). Under a reduction row 1 is hit twice and
// -1 counts from the end (row 5, hit again by 5); without one the rows are
// distinct (ONNX leaves the order of duplicates open). Every reduction at
// the opset that brought it (add/mul 16, max/min 18). A reversed strided
// Slice of the i64 positions besides.
TEST(OnednnOwnMoves, ScatterNdRowsEveryReductionAndIntegerSlices) {
  std::mt19937 rng(96);
  for (const std::string red : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(red);
    GraphBuilder b("scatter_nd", red == "max" || red == "min" ? 18 : 16);
    ValueId pos = b.input("pos", DType::kI64, Shape{2, 5});
    ValueId upd = b.input("upd", DType::kF32, Shape{5, 4});
    ValueId data = b.input("data", DType::kF32, Shape{6, 4});
    ValueId pairs = b.op("Transpose", {pos}, {{"perm", std::vector<int64_t>{1, 0}}});
    ValueId rows = b.op("Slice", {pairs, om_ints(b, {0}), om_ints(b, {1}), om_ints(b, {1})});
    b.output(b.op("Slice",
                  {pairs, om_ints(b, {-1}), om_ints(b, {-6}), om_ints(b, {0}), om_ints(b, {-2})}),
             "every_other_reversed");
    ValueId y = b.op("ScatterND", {b.relu(data), rows, b.relu(upd)}, {{"reduction", red}});
    b.output(b.add(y, data), "y");
    const Graph g = *std::move(b).build();
    const std::vector<int64_t> first =
        red == "none" ? std::vector<int64_t>{0, 5, -3, 1, 4} : std::vector<int64_t>{1, 0, -1, 1, 5};
    std::vector<int64_t> p = first;
    p.insert(p.end(), {3, 1, 4, 1, 5});
    expect_matches_reference(g, {om_i64s({2, 5}, p), uniform(rng, {5, 4}), uniform(rng, {6, 4})});
  }
}

// Full index tuples (k = rank: one element each) into i64 data, with mul,
// and a bool Slice; an index outside [-dim, dim) fails the run, naming it.
TEST(OnednnOwnMoves, ScatterNdElementsOfIntegersAndAnIndexOutOfRange) {
  GraphBuilder b("scatter_nd_i64", 16);
  ValueId data = b.input("data", DType::kI64, Shape{2, 3});
  ValueId idx = b.input("idx", DType::kI64, Shape{3, 2});
  ValueId upd = b.input("upd", DType::kI64, Shape{3});
  b.output(b.op("ScatterND", {data, idx, upd}, {{"reduction", std::string("mul")}}), "y");
  ValueId mask = b.input("mask", DType::kBool, Shape{2, 4});
  b.output(
      b.op("Slice", {mask, om_ints(b, {1}), om_ints(b, {4}), om_ints(b, {1}), om_ints(b, {2})}),
      "mask_cols");
  const Graph g = *std::move(b).build();
  Tensor mask_v = Tensor::zeros(DType::kBool, {2, 4});
  for (int64_t i : {0, 1, 3, 6}) mask_v.data<bool>()[i] = true;
  const std::vector<Tensor> ok{om_i64s({2, 3}, {1, 2, 3, 4, 5, 6}),
                               om_i64s({3, 2}, {0, -1, 1, 0, 0, 2}), om_i64s({3}, {10, -3, 7}),
                               mask_v};
  expect_matches_reference(g, ok, /*expect_all_nodes=*/true);
  auto be = build_onednn(g);
  std::vector<Tensor> bad = ok;
  bad[1] = om_i64s({3, 2}, {0, 1, 2, 0, 0, 0});  // row 2 of a [2, 3] tensor
  auto got = be->infer(bad);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("index 2 (element 2 of the indices) is outside [-2, 2)"),
            std::string::npos)
      << got.error().to_string();
}

// NonZero as an own step (ops/nonzero.h): its block ends with it, and the
// block after it is planned with the length it found, none included (an
// empty [0, 4] there is planned as an empty value, lower_empty.cpp: no run
// on the reference either way).
TEST(OnednnOwnMoves, NonZeroEndsItsBlockAndTheNextIsPlannedWithItsLength) {
  const Graph g = backend_test::nonzero_route_graph(Dim::symbol("tokens"));
  auto be = build_onednn(g);
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(be->partition(), planned));
  for (const auto& in : backend_test::nonzero_route_inputs()) {
    SCOPED_TRACE(in[0].describe());
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    const uint64_t fallbacks = be->fallback_runs();
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(backend_test::close((*got)[i], (*want)[i])) << "output " << i;
    EXPECT_EQ(be->fallback_runs(), fallbacks);
  }
}

// Every dtype it reads, a scalar ([0, 1] or [0, 0]), NaN (non-zero) and
// -0.0 (zero), inputs finding some and none.
TEST(OnednnOwnMoves, NonZeroOfEveryDtypeAndAScalar) {
  const Graph g = backend_test::nonzero_dtypes_graph();
  for (const auto& in : backend_test::nonzero_dtypes_inputs()) expect_matches_reference(g, in);
  auto be = build_onednn(g);
  EXPECT_TRUE(backend_test::nonzero_ends_blocks(
      be->partition(), be->partition().graph ? *be->partition().graph : g));
}

}  // namespace
}  // namespace hone::onednn
