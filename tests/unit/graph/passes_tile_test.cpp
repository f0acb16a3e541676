// lower_tile: Tile by constant repeats becomes Expand (repeated axes of size
// 1) or Reshape/Expand/Reshape (a repeated axis of a larger known size), with
// the reference's answer, symbolic dims copied; what it cannot write stays.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

Graph tile(Shape x, const std::vector<int64_t>& reps) {
  GraphBuilder b("tile");
  ValueId in = b.input("x", DType::kF32, std::move(x));
  ValueId r = b.constant("reps", Tensor::from<int64_t>({static_cast<int64_t>(reps.size())}, reps));
  b.output(b.relu(b.op("Tile", {in, r}, {})), "y");
  return *std::move(b).build();
}

TEST(PassesTile, EveryFormMatchesTheReference) {
  struct Case {
    Shape x;
    std::vector<int64_t> reps;
    size_t reshapes;                         // 0: one Expand
    std::vector<std::vector<int64_t>> runs;  // input dims at each run (the batch varies)
  };
  const Dim batch = Dim::symbol("batch"), seq = Dim::symbol("seq");
  std::mt19937 rng(5);
  const Case cases[] = {
      // PatchTST's end padding: the last step repeated, the batch symbolic.
      {Shape{batch, 7, 1}, {1, 1, 8}, 0, {{1, 7, 1}, {3, 7, 1}}},
      // Larger axes repeated (the op cases' forms), every dim known.
      {Shape{2, 3}, {2, 1}, 2, {{2, 3}}},
      {Shape{2, 1, 3}, {3, 4, 2}, 2, {{2, 1, 3}}},
      // A symbolic axis before the split one (copied by 0) and after it (-1).
      {Shape{batch, 2, 3}, {1, 3, 1}, 2, {{1, 2, 3}, {4, 2, 3}}},
      {Shape{2, batch, 3}, {2, 1, 2}, 2, {{2, 1, 3}, {2, 5, 3}}},
      // A size-1 axis and a larger one repeated, one symbolic before both.
      {Shape{seq, 1, 4}, {1, 2, 3}, 2, {{6, 1, 4}, {1, 1, 4}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.to_string());
    Graph g = tile(c.x, c.reps);
    PassStats st;
    auto out = lower_tile(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, "Tile"), 0u);
    EXPECT_EQ(count_op(*out, "Expand"), 1u);
    EXPECT_EQ(count_op(*out, "Reshape"), c.reshapes);
    EXPECT_EQ(st.rewritten, 1);
    for (const auto& dims : c.runs)
      EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, dims)}, 0.0, true)) << dims.size();
  }
}

TEST(PassesTile, WhatItCannotWriteStays) {
  // A repeated symbolic axis, two symbolic axes after a split one, a repeat
  // of 0, and repeats computed at run time.
  const Dim a = Dim::symbol("a"), b = Dim::symbol("b");
  std::vector<Graph> graphs{tile(Shape{a, 3}, {2, 1}), tile(Shape{2, a, b}, {2, 1, 1}),
                            tile(Shape{2, 3}, {0, 1})};
  GraphBuilder gb("computed");
  ValueId x = gb.input("x", DType::kF32, Shape{2, 3});
  ValueId reps = gb.input("reps", DType::kI64, Shape{2});
  gb.output(gb.op("Tile", {x, reps}, {}), "y");
  graphs.push_back(*std::move(gb).build());
  for (const Graph& g : graphs) {
    PassStats st;
    auto out = lower_tile(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, "Tile"), 1u);
    EXPECT_EQ(st.rewritten, 0);
  }
}

}  // namespace
}  // namespace hone
