// GatherND in aot's code (gather_nd.cpp): DGCNN's kNN rows as the dynamo
// exporter writes them (TopK's indices offset per batch row, made [n, 1]
// tuples into the [(points*batch), C] features), tuples per batch row
// (batch_dims 1) counting from the end, whole-element tuples of i32, an
// index out of range failing the run with its value and place, and batch
// dims aot cannot show equal left to the reference with the reason.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_compiled_whole;
using testing_util::expect_run_fails;
using testing_util::i32s;
using testing_util::i64s;
using testing_util::uniform;

TEST(AotGatherNd, KnnRowsByRunTimeTuplesRunCompiled) {
  GraphBuilder b("knn_nd");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6, 3});  // [b, points, feat]
  ValueId d = b.matmul(x, b.transpose(x, {0, 2, 1}));                        // [b, 6, 6]
  auto top = b.op_n("TopK", {d, b.constant("k", i64s({1}, {3}))}, 2, {{"axis", int64_t{-1}}});
  ValueId base = b.input("base", DType::kI64, Shape{Dim::symbol("batch"), 1, 1});
  ValueId idx = b.op("Reshape", {b.add(top[1], base), b.constant("tuples", i64s({2}, {-1, 1}))});
  ValueId feats = b.op("Reshape", {x, b.constant("rows", i64s({2}, {-1, 3}))});
  b.output(b.op("GatherND", {feats, idx}), "neighbours");
  const Graph g = *std::move(b).build();
  std::mt19937 rng(11);
  auto be = expect_compiled_whole(g, {{uniform(rng, {1, 6, 3}), i64s({1, 1, 1}, {0})},
                                      {uniform(rng, {2, 6, 3}), i64s({2, 1, 1}, {0, 6})}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(testing_util::plan_has(*be, "GatherND [loop.f32.aot.GatherND]"))
      << testing_util::plan_text(*be);
}

/// Rows of x [batch, 5, 4] picked per batch row (batch_dims 1) by i64 tuples
/// of one index, and single elements by i32 tuples of two.
Graph per_row() {
  GraphBuilder b("per_row");
  const Dim batch = Dim::symbol("batch");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 5, 4});
  ValueId rows = b.input("rows", DType::kI64, Shape{batch, 3, 1});
  ValueId cells = b.input("cells", DType::kI32, Shape{batch, 2, 2});
  b.output(b.op("GatherND", {x, rows}, {{"batch_dims", int64_t{1}}}), "rows_out");
  b.output(b.op("GatherND", {x, cells}, {{"batch_dims", int64_t{1}}}), "cells_out");
  return *std::move(b).build();
}

TEST(AotGatherNd, TuplesPerBatchRowCountFromTheEnd) {
  const Graph g = per_row();
  std::mt19937 rng(12);
  EXPECT_TRUE(expect_compiled_whole(
      g, {{uniform(rng, {1, 5, 4}), i64s({1, 3, 1}, {4, -5, -1}), i32s({1, 2, 2}, {0, 3, -1, -4})},
          {uniform(rng, {3, 5, 4}), i64s({3, 3, 1}, {0, 1, 2, -2, 3, 3, 4, 0, -3}),
           i32s({3, 2, 2}, {1, 1, 4, 3, -5, 0, 2, -2, 0, 0, 3, 2})}}));
}

TEST(AotGatherNd, AnIndexOutOfRangeFailsTheRunWithItsPlace) {
  const Graph g = per_row();
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  std::mt19937 rng(13);
  const Tensor x = uniform(rng, {1, 5, 4});
  const Tensor cells = i32s({1, 2, 2}, {0, 0, 1, 1});
  for (int64_t bad : {int64_t{5}, int64_t{-6}, int64_t{1} << 40})
    expect_run_fails(*be, {x, i64s({1, 3, 1}, {0, bad, 1}), cells},
                     {"GatherND: index " + std::to_string(bad) +
                      " (element 1 of the indices) is outside [-5, 5), the data's axis 1"});
  // The second index of a tuple counts along axis 2 (length 4).
  expect_run_fails(*be, {x, i64s({1, 3, 1}, {0, 1, 2}), i32s({1, 2, 2}, {0, 0, 1, 4})},
                   {"index 4 (element 3 of the indices) is outside [-4, 4), the data's axis 2"});
  // The block still runs afterwards.
  auto ok = be->infer({x, i64s({1, 3, 1}, {0, 1, 2}), cells});
  EXPECT_TRUE(ok) << ok.error().to_string();
}

TEST(AotGatherNd, BatchDimsItCannotShowEqualRunOnTheReference) {
  GraphBuilder b("unequal_batch");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6});
  ValueId idx = b.input("idx", DType::kI64, Shape{Dim::symbol("n"), 1});
  b.output(b.op("GatherND", {b.relu(x), idx}, {{"batch_dims", int64_t{1}}}), "y");
  const Graph g = *std::move(b).build();
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  ASSERT_EQ(be->lowering_fallbacks().size(), 1u);
  EXPECT_NE(be->lowering_fallbacks()[0].find("cannot be shown equal"), std::string::npos)
      << be->lowering_fallbacks()[0];
  std::mt19937 rng(14);
  const std::vector<Tensor> in{uniform(rng, {2, 6}), i64s({2, 1}, {5, -6})};
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE(testing_util::close((*got)[0], (*want)[0]));
}

}  // namespace
}  // namespace hone::aot
