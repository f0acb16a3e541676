// Helpers for the cuda backend tests: a skip when this machine has no CUDA
// device (with the reason), seeded inputs, and comparison with the reference.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/cuda_backend.h"
#include "backends/reference/interpreter.h"
#include "hone/graph_builder.h"

/// Skips the test, naming why, where the cuda backend cannot run.
#define HONE_REQUIRE_CUDA()                                                                    \
  do {                                                                                         \
    if (const std::string why = ::hone::cuda::CudaBackend::unavailable_reason(); !why.empty()) \
      GTEST_SKIP() << why;                                                                     \
  } while (0)

namespace hone::cuda::testing_util {

inline Tensor uniform(std::mt19937& rng, std::vector<int64_t> shape, float lo = -1.0f,
                      float hi = 1.0f) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng);
  return t;
}

inline ::testing::AssertionResult close(const Tensor& a, const Tensor& e, double rtol = 1e-4,
                                        double atol = 1e-5) {
  if (a.shape() != e.shape())
    return ::testing::AssertionFailure() << a.describe() << " vs " << e.describe();
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double x = a.data<float>()[i], y = e.data<float>()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y)))
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs reference " << y;
  }
  return ::testing::AssertionSuccess();
}

inline std::string plan_text(const CudaBackend& be) {
  std::string s;
  for (const std::string& l : be.kernel_plan()) s += l + "\n";
  return s;
}

/// Builds `g` on cuda, runs `inputs`, compares every output with the
/// reference, and checks that every node was on the backend, that GPU
/// kernels ran and that no block fell back. Returns the backend.
inline std::unique_ptr<CudaBackend> expect_matches_reference(const Graph& g,
                                                             const std::vector<Tensor>& inputs,
                                                             double rtol = 1e-4,
                                                             double atol = 1e-5) {
  auto be = std::make_unique<CudaBackend>();
  auto built = be->build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  if (!built) return be;
  EXPECT_EQ(be->partition().nodes_on_backend(),
            be->partition().graph ? be->partition().graph->nodes().size() : g.nodes().size())
      << be->partition().describe(be->partition().graph ? *be->partition().graph : g);
  auto want = reference::Interpreter().run_tensors(g, inputs);
  EXPECT_TRUE(want) << want.error().to_string();
  if (!want) return be;
  const uint64_t before = be->kernel_executions();
  auto got = be->infer(inputs);
  EXPECT_TRUE(got) << got.error().to_string();
  if (!got) return be;
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size() && i < got->size(); ++i)
    EXPECT_TRUE(close((*got)[i], (*want)[i], rtol, atol)) << "output " << i << "\n"
                                                          << plan_text(*be);
  EXPECT_GT(be->kernel_executions(), before) << "no cuda kernel ran";
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block fell back to the reference\n" << plan_text(*be);
  return be;
}

}  // namespace hone::cuda::testing_util
