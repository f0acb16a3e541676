// CumSum, OneHot, GatherElements, ScatterElements, ScatterND and Pad in reflect, edge
// and wrap mode on cuda (issue 30: mistral's and alibi's cumsum positions,
// moe's one_hot routing and index_add_, deberta's relative-position gather,
// gcn's scatter_add_, style_transfer's ReflectionPad2d), each against the
// reference on small graphs with the edge cases: exclusive and reversed
// sums, negative and out-of-range one-hot indices, negative gather indices,
// duplicate scatter indices under every reduction, pads wider than their
// axis. The support decisions run without a device; the comparisons skip
// without one, naming why.
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::fallbacks_of;
using testing_util::i64s;
using testing_util::plan_text;
using testing_util::uniform;
using Ints = std::vector<int64_t>;
using Str = std::string;

/// CumSum of f32 [B, 5] along both axes and every attribute pair, of an i64
/// mask and of i32 values.
Graph cumsum_graph() {
  GraphBuilder b("cumsum", 18);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 5});
  ValueId mask = b.input("mask", DType::kI64, Shape{Dim::symbol("batch"), 5});
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1})
      b.output(
          b.op("CumSum", {x, i64s(b, {}, {1})}, {{"exclusive", exclusive}, {"reverse", reverse}}),
          "x_e" + std::to_string(exclusive) + "_r" + std::to_string(reverse));
  b.output(b.op("CumSum", {x, b.constant("", Tensor::scalar<int32_t>(-2))}), "x_axis0");
  b.output(b.op("CumSum", {mask, b.constant("", Tensor::scalar<int32_t>(1))}), "positions");
  ValueId m32 = b.op("Cast", {mask}, {{"to", int64_t{6}}});
  b.output(b.op("CumSum", {m32, i64s(b, {1}, {-1})}, {{"reverse", int64_t{1}}}), "i32_reversed");
  return *std::move(b).build();
}

/// OneHot of run-time i64 indices [2, 3] (negative and out of range among
/// them) with i64 values along the last axis and f32 values along axis 0.
Graph one_hot_graph() {
  GraphBuilder b("one_hot", 18);
  ValueId idx = b.input("idx", DType::kI64, Shape{2, 3});
  b.output(b.op("OneHot", {idx, i64s(b, {}, {4}), i64s(b, {2}, {0, 1})}, {{"axis", int64_t{-1}}}),
           "hot_last");
  b.output(b.op("OneHot",
                {idx, b.constant("", Tensor::scalar<float>(4.0f)),
                 b.constant("", Tensor::from<float>({2}, {-1.0f, 2.5f}))},
                {{"axis", int64_t{0}}}),
           "hot_first");
  return *std::move(b).build();
}

/// GatherElements along each axis of f32 and i64 data; ScatterElements with
/// duplicate indices under every reduction, and of i64 data.
Graph gather_scatter_graph() {
  GraphBuilder b("gather_scatter", 18);
  ValueId x = b.input("x", DType::kF32, Shape{5, 3});
  ValueId ids = b.input("ids", DType::kI64, Shape{5, 3});
  ValueId gi = b.input("gi", DType::kI64, Shape{4, 2});    // along axis 1 (dim 3)
  ValueId si = b.input("si", DType::kI64, Shape{4, 3});    // along axis 0 (dim 5)
  ValueId upd = b.input("upd", DType::kF32, Shape{4, 3});  // the scatter's updates
  b.output(b.op("GatherElements", {x, gi}, {{"axis", int64_t{1}}}), "gather_axis1");
  b.output(b.op("GatherElements", {x, si}, {{"axis", int64_t{0}}}), "gather_axis0");
  b.output(b.op("GatherElements", {ids, gi}, {{"axis", int64_t{-1}}}), "gather_i64");
  for (const char* r : {"none", "add", "mul", "max", "min"})
    b.output(b.op("ScatterElements", {x, si, upd}, {{"axis", int64_t{0}}, {"reduction", Str(r)}}),
             std::string("scatter_") + r);
  // gcn's scatter_add_ into zeros made from a shape, along axis 1 (rows of 2).
  ValueId zeros = b.op("ConstantOfShape", {b.op("Shape", {x})});
  b.output(b.op("ScatterElements",
                {zeros, gi,
                 b.op("Slice", {upd, i64s(b, {1}, {0}), i64s(b, {1}, {2}), i64s(b, {1}, {1})})},
                {{"axis", int64_t{1}}, {"reduction", Str("add")}}),
           "scatter_add_rows");
  b.output(
      b.op("ScatterElements",
           {ids, si, b.op("Slice", {ids, i64s(b, {1}, {1}), i64s(b, {1}, {5}), i64s(b, {1}, {0})})},
           {{"axis", int64_t{0}}, {"reduction", Str("add")}}),
      "scatter_i64");
  return *std::move(b).build();
}

/// ScatterND (dynamo's index_add_) of row tuples with duplicates under every
/// reduction, of full-index tuples, and of i64 data.
Graph scatter_nd_graph() {
  GraphBuilder b("scatter_nd", 18);
  ValueId x = b.input("x", DType::kF32, Shape{4, 3});
  ValueId rows = b.input("rows", DType::kI64, Shape{3, 1});
  ValueId upd = b.input("upd", DType::kF32, Shape{3, 3});
  ValueId ids = b.input("ids", DType::kI64, Shape{4, 3});
  for (const char* r : {"none", "add", "mul", "max", "min"})
    b.output(b.op("ScatterND", {x, rows, upd}, {{"reduction", Str(r)}}), std::string("rows_") + r);
  // (0, 0) twice, (-1, -3) is (3, 0).
  ValueId cells = i64s(b, {4, 2}, {0, 0, 3, 2, 0, 0, -1, -3});
  ValueId vals = b.constant("", Tensor::from<float>({4}, {0.5f, -1.25f, 2.0f, 3.5f}));
  b.output(b.op("ScatterND", {x, cells, vals}, {{"reduction", Str("add")}}), "cells_add");
  ValueId some = b.op("Slice", {ids, i64s(b, {1}, {1}), i64s(b, {1}, {4}), i64s(b, {1}, {0})});
  b.output(b.op("ScatterND", {ids, rows, some}, {{"reduction", Str("add")}}), "rows_i64");
  return *std::move(b).build();
}

/// Pad of [1, 2, 4, 5] in reflect (pads up to 3 on an axis of 4: the mirror
/// repeats), edge, wrap (6 on an axis of 4) and reflect after a crop.
Graph pad_graph() {
  GraphBuilder b("pad_modes", 19);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2, 4, 5});
  ValueId r = b.relu(x);
  auto pad = [&](const char* mode, Ints pads) {
    return b.op("Pad", {r, i64s(b, {8}, std::move(pads))}, {{"mode", Str(mode)}});
  };
  b.output(pad("reflect", {0, 0, 2, 3, 0, 0, 3, 1}), "reflect");
  b.output(pad("edge", {0, 1, 1, 0, 0, 0, 2, 4}), "edge");
  b.output(pad("wrap", {0, 0, 6, 2, 0, 0, 1, 7}), "wrap");
  b.output(pad("reflect", {0, 0, -1, 2, 0, 0, 2, -2}), "reflect_cropped");
  // opset 18's axes input: only the last two axes named, the image's H and W.
  b.output(b.op("Pad", {r, i64s(b, {4}, {1, 1, 1, 1}), -1, i64s(b, {2}, {-2, -1})},
                {{"mode", Str("reflect")}}),
           "reflect_axes");
  return *std::move(b).build();
}

TEST(CudaElementOps, ProposedWithoutADevice) {
  EXPECT_EQ(fallbacks_of(cumsum_graph()), "");
  EXPECT_EQ(fallbacks_of(one_hot_graph()), "");
  EXPECT_EQ(fallbacks_of(gather_scatter_graph()), "");
  EXPECT_EQ(fallbacks_of(pad_graph()), "");
  EXPECT_EQ(fallbacks_of(scatter_nd_graph()), "");
}

TEST(CudaElementOps, RefusalsSayWhy) {
  GraphBuilder b("element_refused", 18);
  ValueId x = b.input("x", DType::kF32, Shape{3, 4});
  ValueId axis = b.input("axis", DType::kI64, Shape{});
  ValueId idx = b.input("idx", DType::kI64, Shape{3, 4});
  b.output(b.op("CumSum", {x, axis}), "sum");  // an axis made at run time
  b.output(b.op("ScatterElements", {x, idx, x}, {{"reduction", Str("sum")}}), "bad");
  const Graph g = *std::move(b).build();
  CudaBackend be;
  const std::vector<NodeSupport> p = be.propose(g);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_FALSE(p[0].supported);
  EXPECT_NE(p[0].reason.find("axis) is neither a constant"), std::string::npos) << p[0].reason;
  EXPECT_FALSE(p[1].supported);
  EXPECT_NE(p[1].reason.find("reduction 'sum'"), std::string::npos) << p[1].reason;
}

TEST(CudaElementOps, CumSumMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(41);
  const Graph g = cumsum_graph();
  for (int64_t batch : {1, 3}) {
    Ints mask;
    for (int64_t i = 0; i < batch * 5; ++i) mask.push_back(i % 5 < 2 + i / 5 ? 1 : 0);
    auto be = expect_matches_reference(
        g, {uniform(rng, {batch, 5}, -2.0f, 2.0f), Tensor::from<int64_t>({batch, 5}, mask)}, 0.0,
        0.0);  // the same sums in the same order: equal bits
    EXPECT_NE(plan_text(*be).find("cumsum.i64.cuda"), std::string::npos) << plan_text(*be);
  }
}

TEST(CudaElementOps, OneHotMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  const Graph g = one_hot_graph();
  expect_matches_reference(g, {Tensor::from<int64_t>({2, 3}, {0, 3, -1, 5, 2, -4})}, 0.0, 0.0);
}

TEST(CudaElementOps, GatherAndScatterMatchTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(43);
  const Graph g = gather_scatter_graph();
  Ints ids;
  for (int64_t i = 0; i < 15; ++i) ids.push_back(i * 3 - 20);
  // Duplicates: rows 0 and 1 hit the same targets; -1 is row 4, -5 row 0.
  const Ints si = {0, 1, 2, 0, 1, 2, 4, 0, 0, -1, -5, 2};
  const Ints gi = {0, 2, -1, 1, 1, 1, -3, 0};
  auto be = expect_matches_reference(
      g,
      {uniform(rng, {5, 3}, -1.0f, 1.0f), Tensor::from<int64_t>({5, 3}, ids),
       Tensor::from<int64_t>({4, 2}, gi), Tensor::from<int64_t>({4, 3}, si),
       uniform(rng, {4, 3}, -1.0f, 1.0f)},
      0.0, 0.0);  // each line summed in the reference's order: equal bits
  const std::string plan = plan_text(*be);
  EXPECT_NE(plan.find("gather_elements.f32.cuda.indices_i64"), std::string::npos) << plan;
  EXPECT_NE(plan.find("scatter_elements.f32.cuda.line_per_thread.add"), std::string::npos) << plan;
}

TEST(CudaElementOps, ScatterNdMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(46);
  const Graph g = scatter_nd_graph();
  Ints ids;
  for (int64_t i = 0; i < 12; ++i) ids.push_back(i * 5 - 17);
  auto be = expect_matches_reference(
      g,
      {uniform(rng, {4, 3}, -1.0f, 1.0f), Tensor::from<int64_t>({3, 1}, {1, -1, 1}),
       uniform(rng, {3, 3}, -1.0f, 1.0f), Tensor::from<int64_t>({4, 3}, ids)},
      0.0, 0.0);  // tuples walked in the reference's order: equal bits
  const std::string plan = plan_text(*be);
  EXPECT_NE(plan.find("scatter_nd.f32.cuda.slice_element_per_thread.add"), std::string::npos)
      << plan;
  EXPECT_NE(plan.find("scatter_nd.i64.cuda"), std::string::npos) << plan;
}

TEST(CudaElementOps, ScatterOutOfRangeFailsTheRun) {
  HONE_REQUIRE_CUDA();
  const Graph g = gather_scatter_graph();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  std::mt19937 rng(44);
  auto got = be.infer({uniform(rng, {5, 3}, -1.0f, 1.0f), Tensor::zeros(DType::kI64, {5, 3}),
                       Tensor::zeros(DType::kI64, {4, 2}),
                       Tensor::from<int64_t>({4, 3}, {0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0}),
                       uniform(rng, {4, 3}, -1.0f, 1.0f)});
  ASSERT_FALSE(got);  // index 5 on an axis of 5, as the reference refuses it
}

TEST(CudaElementOps, PadModesMatchTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(45);
  const Graph g = pad_graph();
  for (int64_t batch : {1, 2}) {
    auto be = expect_matches_reference(g, {uniform(rng, {batch, 2, 4, 5}, -1.0f, 1.0f)}, 0.0, 0.0);
    const std::string plan = plan_text(*be);
    EXPECT_NE(plan.find("pad.f32.cuda.reflect"), std::string::npos) << plan;
    EXPECT_NE(plan.find("pad.f32.cuda.edge"), std::string::npos) << plan;
    EXPECT_NE(plan.find("pad.f32.cuda.wrap"), std::string::npos) << plan;
  }
}

// Rank-8 broadcasts as MViT's decomposed relative positions make them
// (attn viewed [B, heads, qt, qh, qw, kt, kh, kw] plus rel_h and rel_w
// broadcast over two key axes each): the element-wise chain and the
// comparison's kernel merge neighbouring dims to at most six, instead of
// sending the block to the reference.
TEST(CudaElementOps, RankEightBroadcastsMergeToSixDims) {
  GraphBuilder b("rel_pos", 18);
  ValueId attn = b.input("attn", DType::kF32, Shape{Dim::symbol("batch"), 2, 2, 3, 3, 2, 3, 3});
  ValueId rh = b.input("rel_h", DType::kF32, Shape{Dim::symbol("batch"), 2, 2, 3, 3, 1, 3, 1});
  ValueId rw = b.input("rel_w", DType::kF32, Shape{Dim::symbol("batch"), 2, 2, 3, 3, 1, 1, 3});
  ValueId sum = b.op("Add", {b.op("Add", {attn, rh}), rw});
  b.output(b.relu(sum), "y");
  b.output(b.op("Greater", {attn, rh}), "above");
  const Graph g = *std::move(b).build();
  EXPECT_EQ(fallbacks_of(g), "");
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(46);
  for (int64_t batch : {1, 2})
    expect_matches_reference(g,
                             {uniform(rng, {batch, 2, 2, 3, 3, 2, 3, 3}, -1.0f, 1.0f),
                              uniform(rng, {batch, 2, 2, 3, 3, 1, 3, 1}, -1.0f, 1.0f),
                              uniform(rng, {batch, 2, 2, 3, 3, 1, 1, 3}, -1.0f, 1.0f)},
                             0.0, 0.0);
}

}  // namespace
}  // namespace hone::cuda
