// Helpers every backend's tests share: seeded f32 inputs, an element-wise
// comparison with the reference's outputs, the kernel plan as text, and the
// check that a backend took every node of the graph it planned.
//
//   std::mt19937 rng(1);  Tensor x = backend_test::uniform(rng, {2, 3});
//   EXPECT_TRUE(backend_test::close(got, want));                // rtol 1e-4, atol 1e-5
//   EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));   // names the refused nodes
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/common/compiling_backend.h"
#include "hone/graph_builder.h"
#include "hone/tensor.h"

namespace hone::backend_test {

/// A constant 1-D i64 tensor of `v` in `b`'s graph: a shape, axes, bounds, a K.
inline ValueId ints(GraphBuilder& b, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return b.constant("", Tensor::from<int64_t>({n}, std::move(v)));
}

/// A tensor of `shape` with elements drawn uniformly from [lo, hi).
inline Tensor uniform(std::mt19937& rng, std::vector<int64_t> shape, float lo = -1.0f,
                      float hi = 1.0f) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng);
  return t;
}

/// f32 `a` equals the reference's `e`: same shape, each element within
/// atol + rtol * |e| (both NaN counts as equal). Integer and bool tensors
/// must be equal, type included.
inline ::testing::AssertionResult close(const Tensor& a, const Tensor& e, double rtol = 1e-4,
                                        double atol = 1e-5) {
  if (a.shape() != e.shape() || a.dtype() != e.dtype())
    return ::testing::AssertionFailure() << a.describe() << " vs " << e.describe();
  if (a.dtype() != DType::kF32) {
    for (int64_t i = 0; i < e.numel(); ++i)
      if (tensor_element_as_double(a, i) != tensor_element_as_double(e, i))
        return ::testing::AssertionFailure() << "element " << i << " of " << e.describe() << ": "
                                             << tensor_element_as_double(a, i) << " vs reference "
                                             << tensor_element_as_double(e, i);
    return ::testing::AssertionSuccess();
  }
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double x = a.data<float>()[i], y = e.data<float>()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y)))
      return ::testing::AssertionFailure()
             << "element " << i << " of " << e.describe() << ": " << x << " vs reference " << y;
  }
  return ::testing::AssertionSuccess();
}

/// All describe_kernels() lines of a backend that has them, one per line.
template <class B>
std::string plan_text(const B& be) {
  std::string s;
  for (const std::string& l : be.describe_kernels()) s += l + "\n";
  return s;
}

/// Every node of the graph `be` planned (its optimized copy when the passes
/// rewrote `g`, else `g`) is on the backend; the failure shows the partition.
inline ::testing::AssertionResult all_nodes_on_backend(const CompilingBackend& be, const Graph& g) {
  const Graph& planned = be.partition().graph ? *be.partition().graph : g;
  if (be.partition().nodes_on_backend() == planned.nodes().size())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << be.partition().nodes_on_backend() << " of "
                                       << planned.nodes().size() << " nodes on the backend\n"
                                       << be.partition().describe(planned);
}

}  // namespace hone::backend_test
