// Values exporters compute from dims on aot (host_block.h): the compiled code
// keeps its dims symbolic, so a causal mask or a table made from the sequence
// length is evaluated for each signature when the block runs and read by the
// generated code as an input; a Reshape target built from Shape is a
// constant after the passes (fold_reshape_targets, also under allowzero = 1).
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_matches_reference;
using testing_util::uniform;

using testing_util::i64s;

ValueId shape_part(GraphBuilder& b, ValueId x, int64_t start, int64_t end) {
  return b.op("Shape", {x}, {{"start", start}, {"end", end}});
}

// x.view(batch, seq, 2, 4) as the dynamo exporter writes it (Shape with
// start and end, Concat, allowzero = 1), then the heads' causal attention:
// positions from Range, the mask from Greater, Where, Softmax.
Graph causal_heads() {
  GraphBuilder b("causal_heads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  ValueId target = b.concat(
      {shape_part(b, x, 0, 1), shape_part(b, x, 1, 2), b.constant("heads", i64s({2, 4}))}, 0);
  ValueId q = b.transpose(b.op("Reshape", {x, target}, {{"allowzero", int64_t{1}}}), {0, 2, 1, 3});
  ValueId len = b.op("Squeeze", {shape_part(b, x, 1, 2), b.constant("ax0", i64s({0}))});
  ValueId pos = b.op("Range", {b.constant("zero", Tensor::scalar<int64_t>(0)), len,
                               b.constant("one", Tensor::scalar<int64_t>(1))});
  ValueId future = b.op("Greater", {b.op("Unsqueeze", {pos, b.constant("ax0b", i64s({0}))}),
                                    b.op("Unsqueeze", {pos, b.constant("ax1", i64s({1}))})});
  ValueId scores = b.matmul(q, b.transpose(q, {0, 1, 3, 2}));  // [batch, 2, seq, seq]
  ValueId masked = b.op("Where", {future, b.scalar_f32("ninf", -INFINITY), scores});
  b.output(b.matmul(b.softmax(masked), q), "att");
  // A table from the positions (rotary embeddings' cos), added to the result.
  ValueId angle = b.op("Cast", {pos}, {{"to", int64_t{1}}});
  b.output(b.add(b.relu(b.op("Reshape", {x, target}, {{"allowzero", int64_t{1}}})),
                 b.op("Unsqueeze", {b.op("Cos", {angle}), b.constant("ax23", i64s({1, 2}))})),
           "with_table");
  return *std::move(b).build();
}

TEST(AotHostValues, MasksAndTablesFromDimsAreInputsOfTheCompiledCode) {
  const Graph g = causal_heads();
  std::mt19937 rng(51);
  std::vector<std::vector<Tensor>> runs;
  for (const auto& [bt, sq] : {std::pair{1, 3}, std::pair{2, 7}, std::pair{1, 3}})
    runs.push_back({uniform(rng, {bt, sq, 8})});
  expect_matches_reference(g, runs);
  // The artifact runs without hone, so it cannot take values hone computes.
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  const auto dir = std::filesystem::temp_directory_path() / "hone_aot_host_values_export";
  std::filesystem::create_directories(dir);
  auto exported = be->export_artifact(dir);
  ASSERT_FALSE(exported);
  EXPECT_EQ(exported.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(exported.error().message().find("computed from the input shapes"), std::string::npos)
      << exported.error().message();
  std::filesystem::remove_all(dir);
}

// Llama's repeat_kv as the dynamo exporter writes it: Expand to a shape built
// from Shape, then the heads' Slice halves (rotate_half) and one head by
// Gather. The Expand's output dims come from shape inference, its shape
// operand is no input of the code.
TEST(AotHostValues, ExpandToAComputedShapeSliceAndGatherRunCompiled) {
  GraphBuilder b("repeat_kv");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2, 1, Dim::symbol("seq"), 8});
  ValueId shape = b.concat({shape_part(b, x, 0, 1), b.constant("heads", i64s({2, 3})),
                            shape_part(b, x, 3, 4), b.constant("dim", i64s({8}))},
                           0);
  ValueId e = b.op("Expand", {x, shape});
  ValueId lo = b.op("Slice", {e, b.constant("s0", i64s({0})), b.constant("e0", i64s({4})),
                              b.constant("ax", i64s({-1}))});
  ValueId hi = b.op("Slice", {e, b.constant("s1", i64s({4})), b.constant("e1", i64s({100})),
                              b.constant("ax1", i64s({-1}))});
  b.output(b.concat({b.op("Neg", {hi}), lo}, -1), "rotated");
  b.output(
      b.op("Gather", {e, b.constant("k", Tensor::scalar<int64_t>(-1))}, {{"axis", int64_t{2}}}),
      "last_head");
  Graph g = *std::move(b).build();
  // The exporter's value_info says what the Expand makes (the passes cannot
  // tell from a shape built by Concat).
  g.value(e).shape = Shape{Dim::symbol("batch"), 2, 3, Dim::symbol("seq"), 8};
  g.value(e).dtype = DType::kF32;
  std::mt19937 rng(53);
  std::vector<std::vector<Tensor>> runs;
  for (const auto& [bt, sq] : {std::pair{1, 3}, std::pair{2, 5}})
    runs.push_back({uniform(rng, {bt, 2, 1, sq, 8})});
  expect_matches_reference(g, runs);
}

// A block of host nodes alone: its outputs are the values themselves.
TEST(AotHostValues, ABlockOfHostNodesOnlyGivesTheirValues) {
  GraphBuilder b("positions");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("seq"), 4});
  ValueId len = b.op("Squeeze", {shape_part(b, x, 0, 1), b.constant("ax0", i64s({0}))});
  ValueId pos = b.op("Range", {b.constant("zero", Tensor::scalar<int64_t>(0)), len,
                               b.constant("one", Tensor::scalar<int64_t>(1))});
  b.output(pos, "positions");
  b.output(b.op("Sin", {b.op("Cast", {pos}, {{"to", int64_t{1}}})}), "table");
  const Graph g = *std::move(b).build();
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  for (int64_t sq : {2, 5}) {
    auto got = be->infer({Tensor::zeros(DType::kF32, {sq, 4})});
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), 2u);
    ASSERT_EQ((*got)[0].dtype(), DType::kI64);
    ASSERT_EQ((*got)[0].numel(), sq);
    for (int64_t i = 0; i < sq; ++i) {
      EXPECT_EQ((*got)[0].data<int64_t>()[i], i);
      EXPECT_FLOAT_EQ((*got)[1].data<float>()[i], std::sin(static_cast<float>(i)));
    }
  }
}

// A condition computed at run time is read by the code as bools: both nodes
// are aot's, in one loop.
TEST(AotHostValues, RunTimeConditionRunsCompiled) {
  GraphBuilder b("relu_where");
  ValueId x = b.input("x", DType::kF32, Shape{4, 6});
  ValueId c = b.op("Greater", {x, b.scalar_f32("zero", 0.0f)});
  b.output(b.op("Where", {c, x, b.scalar_f32("z", 0.0f)}), "y");
  const Graph g = *std::move(b).build();
  const std::vector<NodeSupport> s = AotBackend().propose(g);
  ASSERT_EQ(s.size(), 2u);
  for (const NodeSupport& n : s) EXPECT_TRUE(n.supported) << n.reason;
  std::mt19937 rng(12);
  testing_util::expect_matches_reference(g, {{testing_util::uniform(rng, {4, 6})}});
}

}  // namespace
}  // namespace hone::aot
