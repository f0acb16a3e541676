// What the empty-tensor tests of the backends that plan zero-sized values
// (onednn, blas: backends/common/empty_values.h) share: a graph whose Slice,
// Split part, Gather of no index and Expand to a zero dim come out empty from
// inputs that are not, and the check that a backend's outputs equal the
// reference's, shapes included, with no block run on the reference.
//
//   const Graph g = backend_test::empty_parts_graph();
//   backend_test::expect_same_without_fallback(*be, g, {x});
#pragma once

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "eval/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::backend_test {

/// Runs `inputs` on `be` and on the reference: every output must match in
/// shape and values, and no block may have run on the reference.
template <class B>
void expect_same_without_fallback(const B& be, const Graph& g, const std::vector<Tensor>& inputs) {
  auto want = eval::Interpreter().run_tensors(g, inputs);
  ASSERT_TRUE(want) << want.error().to_string();
  auto got = be.infer(inputs);
  ASSERT_TRUE(got) << got.error().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*got)[i].shape(), (*want)[i].shape()) << "output " << i;
    EXPECT_TRUE(close((*got)[i], (*want)[i])) << "output " << i;
  }
  EXPECT_EQ(be.fallback_runs(), 0u) << "a block ran on the reference";
}

/// x [4, 3]: a Slice, a Split part, a Gather of no index and an Expand to a
/// zero dim that come out empty, joined back by a Concat with x's Tanh; the
/// other Split part added to x; the empty part's Relu as an output.
inline Graph empty_parts_graph() {
  GraphBuilder b("empty_parts", 17);
  ValueId x = b.input("x", DType::kF32, Shape{4, 3});
  ValueId none = b.op("Slice", {b.relu(x), ints(b, {2}), ints(b, {2}), ints(b, {0})});
  auto parts = b.op_n("Split", {b.sigmoid(x), ints(b, {4, 0})}, 2, {{"axis", int64_t{0}}});
  ValueId no_rows = b.op("Gather", {b.tanh(x), b.constant("", Tensor::zeros(DType::kI64, {0}))});
  ValueId zero_rows = b.op("Expand", {b.op("ReduceSum", {x, ints(b, {0})}), ints(b, {0, 3})});
  b.output(
      b.concat({b.relu(none), b.tanh(x), b.relu(parts[1]), b.relu(no_rows), b.sigmoid(zero_rows)},
               0),
      "joined");
  b.output(b.add(parts[0], x), "sum");
  b.output(b.relu(parts[1]), "empty");
  return *std::move(b).build();
}

}  // namespace hone::backend_test
