// ScatterND in aot's code (gather_nd.cpp): the dynamo exporter's form of a
// mixture of experts' index_add_ (a run-time count of [n, 1] row indices,
// each a partial index, with reduction add), every reduction on i64, i32 and
// bool data by full index tuples, and an index out of range failing the run
// with its value and place.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_compiled_whole;
using testing_util::expect_matches_reference;
using testing_util::expect_run_fails;
using testing_util::i64s;
using testing_util::uniform;

/// y = ScatterND(relu(data) [6, 4], rows [n, 1], relu(upd) [n, 4]) + data.
Graph expert_rows(const std::string& reduction, int64_t opset) {
  GraphBuilder b("expert_rows", opset);
  const Dim n = Dim::symbol("n");
  ValueId data = b.input("data", DType::kF32, Shape{6, 4});
  ValueId rows = b.input("rows", DType::kI64, Shape{n, 1});
  ValueId upd = b.input("upd", DType::kF32, Shape{n, 4});
  ValueId y = b.op("ScatterND", {b.relu(data), rows, b.relu(upd)}, {{"reduction", reduction}});
  b.output(b.add(y, data), "y");
  return *std::move(b).build();
}

// Row 1 is hit three times and -1 counts from the end (row 5, hit again by
// 5); at two run-time counts, so the row count is read when the code runs.
TEST(AotScatterNd, ExpertRowsAddDuplicatesAndNegativesRunCompiled) {
  const Graph g = expert_rows("add", 16);
  std::mt19937 rng(21);
  auto be = expect_compiled_whole(
      g, {{uniform(rng, {6, 4}), i64s({5, 1}, {1, 0, -1, 1, 5}), uniform(rng, {5, 4})},
          {uniform(rng, {6, 4}), i64s({2, 1}, {1, 1}), uniform(rng, {2, 4})}});
  ASSERT_TRUE(be);
  EXPECT_NE(testing_util::plan_text(*be).find("ScatterND"), std::string::npos)
      << testing_util::plan_text(*be);
}

TEST(AotScatterNd, EveryReductionOnRowsAndOnIntegerAndBoolElements) {
  std::mt19937 rng(22);
  for (const std::string red : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(red);
    const int64_t opset = red == "max" || red == "min" ? 18 : 16;
    // Without a reduction the targets are distinct (ONNX leaves duplicates' order open).
    const std::vector<int64_t> rows =
        red == "none" ? std::vector<int64_t>{0, 5, -3} : std::vector<int64_t>{2, -4, 2};
    expect_matches_reference(expert_rows(red, opset),
                             {{uniform(rng, {6, 4}), i64s({3, 1}, rows), uniform(rng, {3, 4})}});
    GraphBuilder b("elements", opset);
    ValueId x64 = b.input("x64", DType::kI64, Shape{2, 3});
    ValueId x32 = b.input("x32", DType::kI32, Shape{2, 3});
    ValueId xb = b.input("xb", DType::kBool, Shape{2, 3});
    ValueId idx = b.input("idx", DType::kI64, Shape{2, 2, 2});  // tuples of two: one element each
    ValueId u64 = b.input("u64", DType::kI64, Shape{2, 2});
    ValueId u32 = b.input("u32", DType::kI32, Shape{2, 2});
    ValueId ub = b.input("ub", DType::kBool, Shape{2, 2});
    b.output(b.op("ScatterND", {x64, idx, u64}, {{"reduction", red}}), "y64");
    b.output(b.op("ScatterND", {x32, idx, u32}, {{"reduction", red}}), "y32");
    b.output(b.op("ScatterND", {xb, idx, ub}, {{"reduction", red}}), "yb");
    const Graph g = *std::move(b).build();
    const std::vector<int64_t> tuples = red == "none"
                                            ? std::vector<int64_t>{0, 1, 1, -1, 0, -3, 1, 0}
                                            : std::vector<int64_t>{0, 1, 1, -1, 0, -2, 1, 2};
    Tensor xb_v = Tensor::zeros(DType::kBool, {2, 3}), ub_v = Tensor::zeros(DType::kBool, {2, 2});
    for (int64_t i : {0, 1, 5}) xb_v.data<bool>()[i] = true;
    for (int64_t i : {0, 2}) ub_v.data<bool>()[i] = true;
    expect_matches_reference(g, {{i64s({2, 3}, {1, -2, 3, 4, int64_t{1} << 62, 6}),
                                  Tensor::from<int32_t>({2, 3}, {1, -2, 3, 4, 1 << 30, 6}), xb_v,
                                  i64s({2, 2, 2}, tuples), i64s({2, 2}, {10, -100, 7, 1000}),
                                  Tensor::from<int32_t>({2, 2}, {10, -100, 7, 1000}), ub_v}});
  }
}

TEST(AotScatterNd, AnIndexOutOfRangeFailsTheRunWithItsPlace) {
  const Graph g = expert_rows("add", 16);
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  std::mt19937 rng(23);
  const Tensor data = uniform(rng, {6, 4}), upd = uniform(rng, {3, 4});
  for (int64_t bad : {int64_t{6}, int64_t{-7}})
    expect_run_fails(*be, {data, i64s({3, 1}, {0, 1, bad}), upd},
                     {"ScatterND: index " + std::to_string(bad) +
                      " (element 2 of the indices) is outside [-6, 6), the data's axis 0"});
  auto ok = be->infer({data, i64s({3, 1}, {0, 1, 2}), upd});
  EXPECT_TRUE(ok) << ok.error().to_string();
}

}  // namespace
}  // namespace hone::aot
