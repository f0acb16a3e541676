// Helpers for the onednn backend tests: seeded inputs, a built backend with
// small blocks allowed, and comparison against the reference interpreter.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/onednn/onednn_backend.h"
#include "backends/reference/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::onednn::testing_util {

inline Tensor uniform(std::mt19937& rng, std::vector<int64_t> shape, float lo = -1.0f,
                      float hi = 1.0f) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng);
  return t;
}

inline std::unique_ptr<OnednnBackend> build_onednn(const Graph& g, int64_t min_block_size = 1,
                                                   int64_t threads = 0) {
  auto be = std::make_unique<OnednnBackend>();
  EXPECT_TRUE(be->configure("min_block_size", std::to_string(min_block_size)));
  EXPECT_TRUE(be->configure("threads", std::to_string(threads)));
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  return be;
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

/// Builds `g` on onednn, runs `inputs`, compares every output with the
/// reference, and checks that oneDNN primitives ran with no fallback.
inline void expect_matches_reference(const Graph& g, const std::vector<Tensor>& inputs,
                                     bool expect_all_nodes = true) {
  auto be = build_onednn(g);
  ASSERT_EQ(be->state(), BackendState::kActive);
  if (expect_all_nodes) {
    // The partition is of the graph the backend planned (optimized unless configured not to).
    const Graph& planned = be->partition().graph ? *be->partition().graph : g;
    EXPECT_EQ(be->partition().nodes_on_backend(), planned.nodes().size())
        << be->partition().describe(planned);
  }
  auto want = reference::Interpreter().run_tensors(g, inputs);
  ASSERT_TRUE(want) << want.error().to_string();
  const uint64_t before = be->kernel_executions();
  auto got = be->infer(inputs);
  ASSERT_TRUE(got) << got.error().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(close((*got)[i], (*want)[i])) << "output " << i;
  EXPECT_GT(be->kernel_executions(), before) << "no oneDNN primitive ran";
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block fell back to the reference";
}

}  // namespace hone::onednn::testing_util
