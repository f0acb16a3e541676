// Helpers for the graph-pass tests: seeded inputs and "the pass kept the
// outputs" checks against the reference interpreter.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "eval/interpreter.h"
#include "hone/graph.h"

namespace hone::passes_test {

using backend_test::uniform;

inline size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

/// Runs `before` and `after` on the reference with `inputs`; every output
/// within |a-b| <= tol * (1 + |b|), or bit for bit with `bitwise`.
inline ::testing::AssertionResult same_outputs(const Graph& before, const Graph& after,
                                               const std::vector<Tensor>& inputs, double tol = 1e-5,
                                               bool bitwise = false) {
  eval::Interpreter interp;
  auto want = interp.run_tensors(before, inputs);
  if (!want) return ::testing::AssertionFailure() << "before: " << want.error().to_string();
  auto got = interp.run_tensors(after, inputs);
  if (!got) return ::testing::AssertionFailure() << "after: " << got.error().to_string();
  if (got->size() != want->size()) return ::testing::AssertionFailure() << "output count differs";
  for (size_t o = 0; o < want->size(); ++o) {
    const Tensor& a = (*got)[o];
    const Tensor& b = (*want)[o];
    if (a.shape() != b.shape() || a.dtype() != b.dtype())
      return ::testing::AssertionFailure()
             << "output " << o << ": " << a.describe() << " vs " << b.describe();
    if (bitwise) {
      if (!a.bitwise_equal(b))
        return ::testing::AssertionFailure() << "output " << o << " differs in bits";
      continue;
    }
    for (int64_t i = 0; i < b.numel(); ++i) {
      const double x = tensor_element_as_double(a, i), y = tensor_element_as_double(b, i);
      if (!(std::abs(x - y) <= tol * (1.0 + std::abs(y))))
        return ::testing::AssertionFailure() << "output " << o << " element " << i << ": " << x
                                             << " after the pass, " << y << " before";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace hone::passes_test
