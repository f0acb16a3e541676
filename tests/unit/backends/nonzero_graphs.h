// The NonZero graphs that onednn's, aot's and cuda's tests run (ops/nonzero.h):
// a mixture of experts' torch.where(mask) and what reads the positions it
// finds, and NonZero of every dtype and of a scalar, with inputs that find
// nothing, everything and some.
//
//   const Graph g = backend_test::nonzero_route_graph(Dim::symbol("tokens"));
//   for (const auto& in : backend_test::nonzero_route_inputs()) ...
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "hone/graph.h"
#include "hone/graph_builder.h"
#include "hone/partition.h"

namespace hone::backend_test {

/// x [tokens, 4] f32 -> Relu -> NonZero ("positions", [2, n]) -> Transpose ->
/// Split into token and slot columns; the tokens' rows of x gathered and
/// scaled ("rows", [n, 4]), token + 10 * slot ("flat", [n, 1]).
inline Graph nonzero_route_graph(Dim tokens) {
  GraphBuilder b("nonzero_route", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{tokens, 4});
  const ValueId pos = b.op("NonZero", {b.relu(x)}, {}, "nonzero");
  b.output(pos, "positions");
  const ValueId pairs = b.op("Transpose", {pos}, {{"perm", std::vector<int64_t>{1, 0}}});
  auto cols = b.op_n("Split", {pairs, ints(b, {1, 1})}, 2, {{"axis", int64_t{1}}});
  const ValueId token = b.op("Squeeze", {cols[0], ints(b, {1})});
  const ValueId rows = b.op("Gather", {x, token}, {{"axis", int64_t{0}}});
  b.output(b.mul(rows, b.constant("", Tensor::from<float>({}, {2.0f}))), "rows");
  b.output(b.add(cols[0], b.mul(cols[1], b.constant("", Tensor::from<int64_t>({}, {10})))), "flat");
  return *std::move(b).build();
}

/// Inputs of nonzero_route_graph: some positive, none (every row of x at
/// most 0, so the later block reads an empty [0, 4]), all positive.
inline std::vector<std::vector<Tensor>> nonzero_route_inputs() {
  Tensor some = Tensor::from<float>({3, 4}, {0.5f, -1, 0, 2, -3, -1, -2, -0.5f, 1, 1, 0, 4});
  Tensor none = Tensor::from<float>({2, 4}, {0, -1, -2, -3, -0.0f, 0, -1, -2});
  Tensor all = Tensor::from<float>({1, 4}, {1, 2, 3, 4});
  return {{some}, {none}, {all}};
}

/// NonZero of i64 [2, 3], i32 [5], bool [2, 2, 2], f32 [4] (NaN is non-zero,
/// -0.0 is zero) and an f32 scalar ([0, 1] or [0, 0]), each its own output.
inline Graph nonzero_dtypes_graph() {
  GraphBuilder b("nonzero_dtypes", 13);
  const std::vector<std::pair<DType, Shape>> in = {{DType::kI64, Shape{2, 3}},
                                                   {DType::kI32, Shape{5}},
                                                   {DType::kBool, Shape{2, 2, 2}},
                                                   {DType::kF32, Shape{4}},
                                                   {DType::kF32, Shape{}}};
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string k = std::to_string(i);
    b.output(b.op("NonZero", {b.input("x" + k, in[i].first, in[i].second)}, {}, "nonzero" + k),
             "y" + k);
  }
  return *std::move(b).build();
}

inline std::vector<std::vector<Tensor>> nonzero_dtypes_inputs() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor bools = Tensor::zeros(DType::kBool, {2, 2, 2});
  for (int64_t i : {1, 2, 7}) bools.data<bool>()[i] = true;
  return {{Tensor::from<int64_t>({2, 3}, {0, 5, 0, -1, 0, 7}),
           Tensor::from<int32_t>({5}, {0, 0, 3, 0, -4}), bools,
           Tensor::from<float>({4}, {0, -0.0f, nan, 2}), Tensor::from<float>({}, {3})},
          {Tensor::zeros(DType::kI64, {2, 3}), Tensor::from<int32_t>({5}, {1, 2, 3, 4, 5}),
           Tensor::zeros(DType::kBool, {2, 2, 2}), Tensor::zeros(DType::kF32, {4}),
           Tensor::from<float>({}, {0})}};
}

/// The head of torchvision's detection tail, one class: the elements of x [n]
/// above 0.5 (Greater "keep", NonZero "nonzero") as positions `at` [count, 1],
/// the `scores` GatherND takes there ([count]) and `k`, min(most, count) as
/// an i64 [1] (the count's Shape, ReduceMin of a Concat), for a TopK of them.
struct KeptScores {
  ValueId at, scores, k;
};
inline KeptScores kept_scores(GraphBuilder& b, ValueId x, int64_t most) {
  const ValueId keep =
      b.op("Greater", {x, b.constant("", Tensor::from<float>({}, {0.5f}))}, {}, "keep");
  const ValueId at = b.op("Transpose", {b.op("NonZero", {keep}, {}, "nonzero")},
                          {{"perm", std::vector<int64_t>{1, 0}}});
  const ValueId scores = b.op("GatherND", {x, at});
  const ValueId count =
      b.op("Gather", {b.op("Shape", {scores}), b.constant("", Tensor::scalar(int64_t{0}))},
           {{"axis", int64_t{0}}});
  const ValueId both = b.op("Concat", {ints(b, {most}), b.op("Unsqueeze", {count, ints(b, {0})})},
                            {{"axis", int64_t{0}}});
  const ValueId k =
      b.op("Reshape", {b.op("ReduceMin", {both}, {{"keepdims", int64_t{0}}}), ints(b, {1})});
  return {at, scores, k};
}

/// Whether every NonZero (or `op`, another node whose length is known only
/// once it has run) of `p` (on `planned`) is the last node of a block run on
/// the backend: the partition cut there (NodeSupport::ends_block).
inline ::testing::AssertionResult nonzero_ends_blocks(const Partition& p, const Graph& planned,
                                                      const std::string& op = "NonZero") {
  int seen = 0;
  for (const Block& b : p.blocks)
    for (size_t k = 0; k < b.nodes.size(); ++k) {
      if (planned.node(b.nodes[k]).op_type != op) continue;
      ++seen;
      if (!b.on_backend || k + 1 != b.nodes.size())
        return ::testing::AssertionFailure()
               << "a " << op << " is not the last node of a backend block\n"
               << p.describe(planned);
    }
  if (seen == 0) return ::testing::AssertionFailure() << "no " << op << " in the partition";
  return ::testing::AssertionSuccess();
}

}  // namespace hone::backend_test
