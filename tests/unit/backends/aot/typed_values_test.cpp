// Integer and bool values in aot's code (typed_values.h): token ids gathered
// from an embedding table and an i64 attention mask made [batch, 1, 1, seq]
// and cast, as the text models export them; TopK's indices offset per batch
// row and gathered, as DGCNN's kNN does; ids outside the table fail the run
// with the index, not a crash.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_compiled_whole;
using testing_util::expect_matches_reference;
using testing_util::expect_run_fails;
using testing_util::i64s;
using testing_util::uniform;

/// ids [batch, seq] into a 7-row table, plus the mask's additive bias.
Graph embed_and_mask() {
  GraphBuilder b("embed_and_mask");
  const Shape bs{Dim::symbol("batch"), Dim::symbol("seq")};
  ValueId ids = b.input("input_ids", DType::kI64, bs);
  ValueId mask = b.input("attention_mask", DType::kI64, bs);
  std::mt19937 rng(5);
  ValueId table = b.constant("word", uniform(rng, {7, 4}));
  ValueId x = b.op("Gather", {table, ids});  // [batch, seq, 4]
  b.output(b.add(x, b.scalar_f32("half", 0.5f)), "embedded");
  ValueId m = b.op("Unsqueeze", {mask, b.constant("ax1", i64s({1}, {1}))});
  m = b.op("Unsqueeze", {m, b.constant("ax2", i64s({1}, {2}))});
  ValueId mf = b.op("Cast", {m}, {{"to", int64_t{1}}});
  b.output(b.mul(b.sub(b.scalar_f32("one", 1.0f), mf), b.scalar_f32("big", -10000.0f)), "bias");
  // The ids as i32 too (a Cast between integers), gathered along axis 1 of the table.
  ValueId ids32 = b.op("Cast", {ids}, {{"to", int64_t{6}}});
  b.output(b.op("Gather",
                {b.op("Transpose", {table}, {{"perm", std::vector<int64_t>{1, 0}}}),
                 b.op("Reshape", {ids32, b.constant("flat", i64s({1}, {-1}))})},
                {{"axis", int64_t{1}}}),
           "by_column");
  return *std::move(b).build();
}

TEST(AotTypedValues, TokenIdsAndMasksRunCompiled) {
  const Graph g = embed_and_mask();
  std::vector<std::vector<Tensor>> runs;
  // Negative ids count from the table's end (ONNX), -7 is row 0.
  runs.push_back({i64s({1, 3}, {0, 6, -1}), i64s({1, 3}, {1, 1, 0})});
  runs.push_back({i64s({2, 5}, {3, -7, 2, 2, 5, 1, 0, 4, -2, 6}),
                  i64s({2, 5}, {1, 1, 1, 0, 0, 1, 0, 1, 1, 1})});
  auto be = expect_compiled_whole(g, runs);
  ASSERT_TRUE(be);
  const std::string src = be->sources().at(0);
  EXPECT_NE(src.find("(const int64_t*)c->in[0]"), std::string::npos) << "ids read as i64";
  EXPECT_NE(src.find("static const char* const input_dtypes[] = {\"i64\", \"i64\", NULL};"),
            std::string::npos);
}

TEST(AotTypedValues, AnIdOutsideTheTableFailsTheRunWithTheIndex) {
  const Graph g = embed_and_mask();
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  for (int64_t bad : {int64_t{7}, int64_t{-8}, int64_t{1} << 40})
    expect_run_fails(*be, {i64s({1, 3}, {0, bad, 1}), i64s({1, 3}, {1, 1, 1})},
                     {"index " + std::to_string(bad), "[-7, 7)"});
  // The block still runs afterwards.
  auto ok = be->infer({i64s({1, 2}, {1, 2}), i64s({1, 2}, {1, 0})});
  EXPECT_TRUE(ok) << ok.error().to_string();
}

// DLRM's sparse features: column j of an i64 input (a strided copy of
// integers), then the rows of table j it names.
TEST(AotTypedValues, IntegerColumnsSelectTableRows) {
  GraphBuilder b("sparse");
  ValueId sparse = b.input("sparse", DType::kI64, Shape{Dim::symbol("batch"), 3});
  std::mt19937 rng(3);
  std::vector<ValueId> rows;
  for (int64_t j = 0; j < 3; ++j) {
    ValueId col =
        b.op("Gather", {sparse, b.constant("j" + std::to_string(j), Tensor::scalar<int64_t>(j))},
             {{"axis", int64_t{1}}});
    rows.push_back(
        b.op("Gather", {b.constant("emb" + std::to_string(j), uniform(rng, {5, 2})), col}));
  }
  b.output(b.concat(rows, 1), "features");
  const Graph g = *std::move(b).build();
  expect_matches_reference(
      g, {{i64s({1, 3}, {0, 4, -1})}, {i64s({3, 3}, {1, 2, 3, 4, 0, 1, -5, 2, 2})}});
}

// DGCNN's kNN: the k nearest by TopK of negative distances (ties to the lower
// index), the indices offset by batch row * points and flattened, then the
// neighbours' features gathered by them.
TEST(AotTypedValues, TopKIndicesOffsetAndGathered) {
  GraphBuilder b("knn");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6, 3});  // [b, points, feat]
  ValueId d = b.matmul(x, b.transpose(x, {0, 2, 1}));                        // [b, 6, 6]
  auto top = b.op_n("TopK", {d, b.constant("k", i64s({1}, {3}))}, 2, {{"axis", int64_t{-1}}});
  ValueId base = b.input("base", DType::kI64, Shape{Dim::symbol("batch"), 1, 1});
  ValueId idx = b.op("Reshape", {b.add(top[1], base), b.constant("flat", i64s({1}, {-1}))});
  ValueId feats = b.op("Reshape", {x, b.constant("rows", i64s({2}, {-1, 3}))});
  b.output(b.op("Gather", {feats, idx}), "neighbours");
  b.output(top[0], "scores");
  b.output(top[1], "indices");
  const Graph g = *std::move(b).build();
  std::mt19937 rng(9);
  Tensor ties = Tensor::zeros(DType::kF32, {2, 6, 3});  // every distance equal in row 0
  Tensor some = uniform(rng, {2, 6, 3});
  for (int64_t i = 0; i < 18; ++i) ties.data<float>()[18 + i] = some.data<float>()[i];
  auto be = expect_compiled_whole(
      g, {{uniform(rng, {1, 6, 3}), i64s({1, 1, 1}, {0})}, {ties, i64s({2, 1, 1}, {0, 6})}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(testing_util::plan_has(*be, "TopK [loop.f32.aot.TopK]"))
      << testing_util::plan_text(*be);
}

}  // namespace
}  // namespace hone::aot
