// Helpers for the aot backend tests: seeded inputs, a built backend with a
// test-local compile cache, and comparison against the reference interpreter.
#pragma once

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/aot/aot_backend.h"
#include "backends/backend_test_util.h"
#include "eval/interpreter.h"
#include "hone/graph_builder.h"
#include "hone/onnx.h"

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

using backend_test::close;
using backend_test::uniform;

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

/// Runs each input set on the built `be` and compares every output with the
/// reference's, checking that compiled code ran for each.
inline void expect_runs_match_reference(AotBackend& be, const Graph& g,
                                        const std::vector<std::vector<Tensor>>& input_sets) {
  for (const auto& inputs : input_sets) {
    auto want = eval::Interpreter().run_tensors(g, inputs);
    ASSERT_TRUE(want) << want.error().to_string();
    const uint64_t before = be.kernel_executions();
    auto got = be.infer(inputs);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(close((*got)[i], (*want)[i])) << "output " << i;
    EXPECT_GT(be.kernel_executions(), before) << "no compiled code ran";
  }
}

/// Builds `g` on aot, runs each input set, compares every output with the
/// reference, and checks that compiled code ran for every node.
inline void expect_matches_reference(const Graph& g,
                                     const std::vector<std::vector<Tensor>>& input_sets,
                                     std::vector<std::pair<std::string, std::string>> config = {}) {
  auto be = build_aot(g, std::move(config));
  ASSERT_TRUE(be);
  // Every node of the graph the backend planned runs compiled.
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  expect_runs_match_reference(*be, g, input_sets);
}

/// expect_matches_reference, with no node's lowering fallen back either; the
/// built backend comes back for the test's own checks of its plan or sources
/// (nullptr after a failed build).
inline std::unique_ptr<AotBackend> expect_compiled_whole(
    const Graph& g, const std::vector<std::vector<Tensor>>& input_sets) {
  auto be = build_aot(g);
  if (!be) return nullptr;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  expect_runs_match_reference(*be, g, input_sets);
  return be;
}

/// Running `inputs` on `be` fails with kInvalidArgument and a message holding
/// each of `want`.
inline void expect_run_fails(AotBackend& be, const std::vector<Tensor>& inputs,
                             const std::vector<std::string>& want) {
  auto got = be.infer(inputs);
  ASSERT_FALSE(got) << "the run succeeded";
  EXPECT_EQ(got.error().code(), ErrorCode::kInvalidArgument);
  for (const std::string& w : want)
    EXPECT_NE(got.error().message().find(w), std::string::npos)
        << "want '" << w << "' in: " << got.error().message();
}

/// Pool windows the channels-last and blocked pool loops must get right:
/// padding, strides, ceil_mode, count_include_pad, and a global pool.
inline std::vector<std::pair<std::string, std::map<std::string, Attribute>>> pool_windows() {
  return {
      {"MaxPool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}}}},
      {"MaxPool",
       {{"kernel_shape", std::vector<int64_t>{2, 2}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"ceil_mode", int64_t{1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}},
        {"count_include_pad", int64_t{1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}},
        {"count_include_pad", int64_t{1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"count_include_pad", int64_t{1}}}},
      {"GlobalMaxPool", {}},
  };
}

/// 3x3 convs with one pixel of padding (depthwise when `group` is the channels).
inline GraphBuilder::ConvOptions pad1(int64_t stride = 1, int64_t group = 1) {
  return {.strides = {stride, stride}, .pads = {1, 1, 1, 1}, .dilations = {1, 1}, .group = group};
}

/// How many lines of the kernel plan are exactly `want`.
inline int count_lines(const AotBackend& be, const std::string& want) {
  int n = 0;
  for (const std::string& l : be.describe_kernels()) n += l == want;
  return n;
}
inline bool plan_has(const AotBackend& be, const std::string& want) {
  return count_lines(be, want) > 0;
}
inline std::string plan_text(const AotBackend& be) {
  std::string s;
  for (const std::string& l : be.describe_kernels()) s += l + "\n";
  return s;
}

/// models/NAME.onnx, one of the example models (an empty graph, after a
/// failed expectation, when it cannot be read).
inline Graph load_example(const std::string& name) {
  auto g = onnx::load_model(std::filesystem::path(HONE_SOURCE_DIR) / "models" / (name + ".onnx"));
  EXPECT_TRUE(g) << g.error().to_string();
  return g ? std::move(*g) : Graph();
}

/// Seeded inputs for `g` with every symbolic dim (batch, seq, ...) set to `n`.
inline std::vector<Tensor> inputs_for(const Graph& g, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> in;
  for (ValueId v : g.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : g.value(v).shape->dims()) dims.push_back(d.is_static() ? d.value() : n);
    in.push_back(uniform(rng, dims));
  }
  return in;
}

/// A 1-D i64 tensor of `v` (shape lists, axes, Slice bounds).
inline Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}
/// An i64 or i32 tensor of `shape` holding `v` (indices, ids, masks).
inline Tensor i64s(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return Tensor::from<int64_t>(std::move(shape), v);
}
inline Tensor i32s(std::vector<int64_t> shape, const std::vector<int32_t>& v) {
  return Tensor::from<int32_t>(std::move(shape), v);
}

}  // namespace hone::aot::testing_util
