// Helpers for the aot backend tests: seeded inputs, a built backend with a
// test-local compile cache, and comparison against the reference interpreter.
#pragma once

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/aot/aot_backend.h"
#include "backends/reference/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::aot::testing_util {

/// Compiled libraries go to the build tree, so test runs share them and never
/// touch ~/.cache (HONE_CACHE_DIR set by the caller wins).
inline void use_test_cache() {
  static const bool done = [] {
    ::setenv("HONE_CACHE_DIR", HONE_BINARY_DIR "/aot-test-cache", 0);
    return true;
  }();
  (void)done;
}

inline Tensor uniform(std::mt19937& rng, std::vector<int64_t> shape, float lo = -1.0f,
                      float hi = 1.0f) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng);
  return t;
}

inline std::unique_ptr<AotBackend> build_aot(
    const Graph& g, std::vector<std::pair<std::string, std::string>> config = {}) {
  use_test_cache();
  auto be = std::make_unique<AotBackend>();
  for (const auto& [k, v] : config) EXPECT_TRUE(be->configure(k, v)) << k;
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  if (!r) return nullptr;
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
      return ::testing::AssertionFailure()
             << "element " << i << " of " << e.describe() << ": " << x << " vs reference " << y;
  }
  return ::testing::AssertionSuccess();
}

/// Builds `g` on aot, runs each input set, compares every output with the
/// reference, and checks that compiled code ran for every node.
inline void expect_matches_reference(const Graph& g,
                                     const std::vector<std::vector<Tensor>>& input_sets,
                                     std::vector<std::pair<std::string, std::string>> config = {}) {
  auto be = build_aot(g, std::move(config));
  ASSERT_TRUE(be);
  // The partition is of the graph the backend planned (the optimized copy
  // when the passes rewrote it): every node of that graph runs compiled.
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_EQ(be->partition().nodes_on_backend(), planned.nodes().size()) << be->partition().describe(planned);
  for (const auto& inputs : input_sets) {
    auto want = reference::Interpreter().run_tensors(g, inputs);
    ASSERT_TRUE(want) << want.error().to_string();
    const uint64_t before = be->kernel_executions();
    auto got = be->infer(inputs);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(close((*got)[i], (*want)[i])) << "output " << i;
    EXPECT_GT(be->kernel_executions(), before) << "no compiled code ran";
  }
}

}  // namespace hone::aot::testing_util
