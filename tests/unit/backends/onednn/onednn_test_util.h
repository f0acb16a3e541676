// Helpers for the onednn backend tests: seeded inputs, a built backend with
// small blocks allowed, and comparison against the reference interpreter.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "backends/onednn/onednn_backend.h"
#include "eval/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::onednn::testing_util {

using backend_test::close;
using backend_test::uniform;

inline std::unique_ptr<OnednnBackend> build_onednn(const Graph& g, int64_t min_block_size = 1,
                                                   int64_t threads = 0) {
  auto be = std::make_unique<OnednnBackend>();
  EXPECT_TRUE(be->configure("min_block_size", std::to_string(min_block_size)));
  EXPECT_TRUE(be->configure("threads", std::to_string(threads)));
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  return be;
}

/// Builds `g` on onednn, runs `inputs`, compares every output with the
/// reference, and checks that oneDNN primitives ran with no fallback.
inline void expect_matches_reference(const Graph& g, const std::vector<Tensor>& inputs,
                                     bool expect_all_nodes = true) {
  auto be = build_onednn(g);
  ASSERT_EQ(be->state(), BackendState::kActive);
  if (expect_all_nodes) {
    EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  }
  auto want = eval::Interpreter().run_tensors(g, inputs);
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
