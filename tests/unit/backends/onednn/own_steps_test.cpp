// hone's own steps in a oneDNN block (own_steps.cpp): the patterns of the
// text models' exports that used to split a block and run on the reference.
// An embedding lookup of run-time token ids, an i64 attention mask
// unsqueezed and cast to f32, a masked fill by Where, Casts between f32, i64,
// i32 and bool: each must plan every node on onednn in one block, match the
// reference, and run no block on the reference.
#include <limits>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::expect_matches_reference;
using testing_util::uniform;

Shape seq_shape(const char* seq) {
  return Shape{Dim(1), Dim::symbol(seq)};
}

ValueId axes(GraphBuilder& b, const char* name, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return b.constant(name, Tensor::from<int64_t>({n}, std::move(v)));
}

/// One plan whose description names `step`, and every node on onednn.
void expect_one_block_with(const OnednnBackend& be, const Graph& g, const std::string& step) {
  EXPECT_TRUE(backend_test::all_nodes_on_backend(be, g));
  const std::vector<std::string> plans = be.plan_descriptions();
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_NE(plans[0].find(step), std::string::npos) << plans[0];
}

// A text model's embeddings: token ids (i64, or i32) read at run time index a
// table; the sum feeds a projection. The ids are bound as they are, not
// planned as constants: other ids of the same shape reuse the plan.
TEST(OnednnOwnSteps, EmbeddingLookupOfRunTimeIds) {
  std::mt19937 rng(71);
  for (const DType id_type : {DType::kI64, DType::kI32}) {
    SCOPED_TRACE(dtype_name(id_type));
    GraphBuilder b("embed");
    ValueId ids = b.input("ids", id_type, seq_shape("seq"));
    ValueId table = b.constant("table", uniform(rng, {10, 8}));
    ValueId e = b.op("Gather", {table, ids});
    b.output(b.matmul(b.relu(e), b.constant("w", uniform(rng, {8, 4}))), "y");
    const Graph g = *std::move(b).build();
    auto be = build_onednn(g);
    for (const std::vector<int64_t>& v :
         {std::vector<int64_t>{1, 9, 0, 3, 3, -1}, std::vector<int64_t>{4, 4, 2, -10, 8, 7}}) {
      Tensor t = Tensor::zeros(id_type, {1, 6});
      for (size_t i = 0; i < v.size(); ++i)
        tensor_set_element_from_double(t, static_cast<int64_t>(i), static_cast<double>(v[i]));
      const std::vector<Tensor> in{t};
      auto got = be->infer(in);
      ASSERT_TRUE(got) << got.error().to_string();
      auto want = eval::Interpreter().run_tensors(g, in);
      ASSERT_TRUE(want) << want.error().to_string();
      EXPECT_TRUE(testing_util::close((*got)[0], (*want)[0]));
    }
    expect_one_block_with(*be, g, "gather");
    EXPECT_EQ(be->fallback_runs(), 0u);
  }
}

// An id past the table is the caller's error, named, not a read out of bounds.
TEST(OnednnOwnSteps, OutOfRangeIdNamesTheNode) {
  std::mt19937 rng(72);
  GraphBuilder b("embed");
  ValueId ids = b.input("ids", DType::kI64, seq_shape("seq"));
  ValueId e = b.op("Gather", {b.constant("table", uniform(rng, {10, 8})), ids}, {}, "word_embed");
  b.output(b.relu(e), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  for (const int64_t bad : {int64_t{10}, int64_t{-11}, std::numeric_limits<int64_t>::max()}) {
    auto got = be->infer({Tensor::from<int64_t>({1, 3}, {0, bad, 2})});
    ASSERT_FALSE(got) << "id " << bad;
    EXPECT_EQ(got.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(got.error().to_string().find("word_embed"), std::string::npos)
        << got.error().to_string();
    EXPECT_NE(got.error().to_string().find(std::to_string(bad)), std::string::npos)
        << got.error().to_string();
  }
  ASSERT_TRUE(be->infer({Tensor::from<int64_t>({1, 3}, {0, 9, -10})})) << "the plan still runs";
}

// BERT's extended attention mask: an i64 [batch, seq] mask, unsqueezed to
// [batch, 1, 1, seq], cast to f32, (1 - m) * -10000 added to the scores.
TEST(OnednnOwnSteps, AttentionMaskUnsqueezedAndCast) {
  std::mt19937 rng(73);
  GraphBuilder b("mask");
  ValueId scores = b.input("scores", DType::kF32, Shape{1, 2, 5, 5});
  ValueId mask = b.input("mask", DType::kI64, Shape{1, 5});
  ValueId m = b.op("Unsqueeze", {mask, axes(b, "a1", {1})});
  m = b.op("Unsqueeze", {m, axes(b, "a2", {2})});
  m = b.op("Cast", {m}, {{"to", int64_t{1}}});
  m = b.mul(b.sub(b.scalar_f32("one", 1.0f), m), b.scalar_f32("big", -10000.0f));
  b.output(b.softmax(b.add(scores, m)), "p");
  const Graph g = *std::move(b).build();
  const std::vector<Tensor> in{uniform(rng, {1, 2, 5, 5}),
                               Tensor::from<int64_t>({1, 5}, {1, 1, 1, 0, 0})};
  expect_matches_reference(g, in);
  auto be = build_onednn(g);
  ASSERT_TRUE(be->infer(in));
  expect_one_block_with(*be, g, "cast");
}

// GPT-2's masked fill: Where(mask, scores, min) with the mask broadcast over
// batch and heads, known when the plan is built (a bool constant) or read
// at run time; and a Where broadcasting all three operands.
TEST(OnednnOwnSteps, WhereBroadcastsItsOperands) {
  std::mt19937 rng(74);
  Tensor causal = Tensor::zeros(DType::kBool, {1, 1, 4, 4});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j <= i; ++j) causal.data<bool>()[i * 4 + j] = true;
  for (const bool known : {true, false}) {
    SCOPED_TRACE(known ? "known mask" : "run-time mask");
    GraphBuilder b("masked_fill");
    ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 4});
    ValueId c =
        known ? b.constant("causal", causal) : b.input("c", DType::kBool, Shape{1, 1, 4, 4});
    ValueId w = b.op("Where", {c, b.relu(x), b.scalar_f32("fill", -3.4e38f)});
    b.output(b.softmax(w), "p");
    const Graph g = *std::move(b).build();
    std::vector<Tensor> in{uniform(rng, {2, 3, 4, 4})};
    if (!known) in.push_back(causal);
    expect_matches_reference(g, in);
    auto be = build_onednn(g);
    ASSERT_TRUE(be->infer(in));
    expect_one_block_with(*be, g, "where");
  }
  GraphBuilder b("where3");
  ValueId c = b.input("c", DType::kBool, Shape{3, 1});
  ValueId x = b.input("x", DType::kF32, Shape{2, 1, 4});
  ValueId y = b.input("y", DType::kF32, Shape{4});
  b.output(b.relu(b.op("Where", {c, x, y})), "z");
  expect_matches_reference(*std::move(b).build(), {Tensor::from<bool>({3, 1}, {true, false, true}),
                                                   uniform(rng, {2, 1, 4}), uniform(rng, {4})});
}

// Casts between f32, i64, i32 and bool in one block, with the reference's
// edge values: truncation toward zero, NaN -> 0 and saturation for f32 ->
// integer, NaN -> true for bool; integer outputs leave the block as they are.
TEST(OnednnOwnSteps, CastsBetweenF32IntegersAndBool) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor xs = Tensor::from<float>(
      {12}, {0.0f, -0.0f, 1.5f, -1.5f, 2.9f, -2.9f, 3e9f, -3e9f, 1e20f, -kInf, kInf, nan});
  GraphBuilder b("casts");
  ValueId x = b.input("x", DType::kF32, Shape{12});
  ValueId r = b.relu(b.input("z", DType::kF32, Shape{2, 3}));  // oneDNN's output, cast to itself
  auto cast = [&](ValueId v, int64_t to) { return b.op("Cast", {v}, {{"to", to}}); };
  ValueId i64 = cast(x, 7), i32 = cast(x, 6), bl = cast(x, 9);
  b.output(cast(i64, 1), "i64_f32");
  b.output(cast(i32, 1), "i32_f32");
  b.output(cast(bl, 1), "bool_f32");
  b.output(cast(cast(bl, 7), 6), "bool_i64_i32");
  b.output(cast(r, 1), "f32_f32");
  b.output(i64, "i64");
  b.output(b.op("Unsqueeze", {b.input("ids", DType::kI64, Shape{3}), axes(b, "ax", {0})}), "view");
  const Graph g = *std::move(b).build();
  std::mt19937 rng(76);
  const std::vector<Tensor> in{xs, uniform(rng, {2, 3}), Tensor::from<int64_t>({3}, {5, -6, 7})};
  auto be = build_onednn(g);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    SCOPED_TRACE(g.value(g.outputs()[i]).name);
    ASSERT_EQ((*got)[i].dtype(), (*want)[i].dtype());
    if (g.value(g.outputs()[i]).name == "f32_f32")
      EXPECT_TRUE(testing_util::close((*got)[i], (*want)[i]));
    else
      EXPECT_TRUE((*got)[i].bitwise_equal((*want)[i]))
          << (*got)[i].describe() << " vs " << (*want)[i].describe();
  }
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// An i64 input that a Reshape's target needs stays a plan constant (the
// known-input path); one that only a Cast reads is bound at run time, so
// other values of the same shape reuse the plan.
TEST(OnednnOwnSteps, IntegerInputsReadAtRunTimeDoNotKeyThePlan) {
  std::mt19937 rng(75);
  GraphBuilder b("keys");
  ValueId x = b.input("x", DType::kF32, Shape{1, 4});
  ValueId m = b.input("m", DType::kI64, Shape{1, 4});
  b.output(b.add(b.relu(x), b.op("Cast", {m}, {{"to", int64_t{1}}})), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  for (int64_t k = 0; k < 3; ++k) {
    const std::vector<Tensor> in{uniform(rng, {1, 4}),
                                 Tensor::from<int64_t>({1, 4}, {k, 1, 2, -k})};
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(testing_util::close((*got)[0], (*eval::Interpreter().run_tensors(g, in))[0]));
  }
  EXPECT_EQ(be->plan_descriptions().size(), 1u) << "one plan for every mask of one shape";
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// The functional suite's integer_io model: ids and a bool mask in, the
// embedding zeroed where the mask is off, and the mask counted by a
// ReduceSum of i64 (no oneDNN reduction of integers: on the reference). The
// block hands its i64 Cast to that node as it is.
TEST(OnednnOwnSteps, IntegerBlockOutputFeedsTheReference) {
  std::mt19937 rng(77);
  GraphBuilder b("integer_io");
  ValueId ids = b.input("ids", DType::kI64, Shape{Dim::symbol("batch"), 3});
  ValueId mask = b.input("mask", DType::kBool, Shape{Dim::symbol("batch"), 3});
  ValueId emb = b.op("Gather", {b.constant("table", uniform(rng, {4, 4})), ids});
  ValueId m = b.op("Unsqueeze", {mask, axes(b, "axes", {2})});
  b.output(b.op("Where", {m, emb, b.scalar_f32("zero", 0.0f)}), "out");
  ValueId count =
      b.op("ReduceSum", {b.op("Cast", {mask}, {{"to", int64_t{7}}}), axes(b, "sum", {1})},
           {{"keepdims", int64_t{0}}});
  b.output(count, "count");
  Graph g = *std::move(b).build();
  // The dtypes an importer infers (the builder leaves them undefined): the
  // ReduceSum of i64 is then refused.
  g.value(g.node(g.value(count).producer).inputs[0]).dtype = DType::kI64;
  g.value(count).dtype = DType::kI64;
  auto be = build_onednn(g);
  const std::vector<Tensor> in{Tensor::from<int64_t>({2, 3}, {3, 0, 2, 1, 1, 3}),
                               Tensor::from<bool>({2, 3}, {true, false, true, true, true, false})};
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE(testing_util::close((*got)[0], (*want)[0]));
  EXPECT_TRUE((*got)[1].bitwise_equal((*want)[1])) << (*got)[1].describe();
  EXPECT_EQ(be->partition().fallbacks.size(), 1u) << "only the ReduceSum of i64";
  EXPECT_NE(backend_test::plan_text(*be).find("cast"), std::string::npos)
      << "the mask is read at run time, not planned as a constant: "
      << backend_test::plan_text(*be);
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// A graph without inferred dtypes hides that a Cast to i64 feeds a Max
// (integer Add/Sub/Mul are own steps, lower_misc.cpp, but Max is a
// primitive): supports() takes both, and the plan refuses the Max's read of integer
// bytes (a binary primitive would add them as u8, and the Cast after it
// read the sums as f32), so the block runs on the reference and the answer
// stays right.
TEST(OnednnOwnSteps, PrimitiveReadingIntegersRunsTheBlockOnTheReference) {
  GraphBuilder b("untyped");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  ValueId i = b.op("Cast", {x}, {{"to", int64_t{7}}});
  b.output(b.op("Cast", {b.op("Max", {i, i})}, {{"to", int64_t{6}}}), "y");
  Graph g = *std::move(b).build();
  for (const Node& n : g.nodes())
    for (ValueId o : n.outputs) g.value(o).dtype = DType::kUndefined;
  auto be = build_onednn(g);
  const std::vector<Tensor> in{Tensor::from<float>({2, 3}, {-2.5f, -1.0f, 0.5f, 1.5f, 2.9f, 3.0f})};
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0])) << (*got)[0].describe();
  // optimize() infers the dtypes again (8a03d49), so the partition already
  // sees the i64 Add and leaves it to the reference: no block falls back at
  // run time. A plan built on the untyped graph itself still stops, saying why.
  EXPECT_EQ(be->fallback_runs(), 0u);
  auto plan = PlanBuilder(g).build({{2, 3}});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().to_string().find("(Max) reads"), std::string::npos)
      << plan.error().to_string();
}

}  // namespace
}  // namespace hone::onednn
