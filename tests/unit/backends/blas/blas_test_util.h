// Helpers for the blas backend tests: seeded inputs, a built backend with
// small blocks allowed, and comparison against the reference interpreter.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "backends/blas/blas_backend.h"
#include "eval/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::blas::testing_util {

using backend_test::close;
using backend_test::plan_text;
using backend_test::uniform;

/// `optimize` false keeps the graph passes off, so tests see the backend's
/// own fusions (a BatchNormalization folded into its Conv, a GELU chain).
inline std::unique_ptr<BlasBackend> build_blas(const Graph& g, int64_t threads = 0,
                                               bool optimize = true) {
  auto be = std::make_unique<BlasBackend>();
  EXPECT_TRUE(be->configure("threads", std::to_string(threads)));
  EXPECT_TRUE(be->configure("optimize", optimize ? "true" : "false"));
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  return be;
}

/// Builds `g` on blas (with `threads`), runs `inputs`, compares every output
/// with the reference, and checks that every node ran on blas kernels with no
/// fallback. Returns the backend for further checks.
inline std::unique_ptr<BlasBackend> expect_matches_reference(const Graph& g,
                                                             const std::vector<Tensor>& inputs,
                                                             int64_t threads = 2,
                                                             bool optimize = true) {
  auto be = build_blas(g, threads, optimize);
  EXPECT_EQ(be->state(), BackendState::kActive);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  auto want = eval::Interpreter().run_tensors(g, inputs);
  EXPECT_TRUE(want) << want.error().to_string();
  if (!want) return be;
  const uint64_t before = be->kernel_executions();
  auto got = be->infer(inputs);
  EXPECT_TRUE(got) << got.error().to_string();
  if (!got) return be;
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size() && i < got->size(); ++i)
    EXPECT_TRUE(close((*got)[i], (*want)[i])) << "output " << i;
  EXPECT_GT(be->kernel_executions(), before) << "no blas kernel ran";
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block fell back to the reference";
  return be;
}

/// The describe_kernels() lines of units (the memory lines left out).
inline std::vector<std::string> unit_lines(const BlasBackend& be) {
  std::vector<std::string> out;
  for (const std::string& l : be.describe_kernels())
    if (l.rfind("peak_activation_bytes ", 0) != 0) out.push_back(l);
  return out;
}

}  // namespace hone::blas::testing_util
