// Helpers for the cuda backend tests: a skip when this machine has no CUDA
// device (with the reason), seeded inputs, and comparison with the reference.
#pragma once

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend_test_util.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cudnn_api.h"
#include "eval/interpreter.h"
#include "eval/kernel_util.h"
#include "hone/graph_builder.h"

/// Skips the test, naming why, where the cuda backend cannot run.
#define HONE_REQUIRE_CUDA()                                                                    \
  do {                                                                                         \
    if (const std::string why = ::hone::cuda::CudaBackend::unavailable_reason(); !why.empty()) \
      GTEST_SKIP() << why;                                                                     \
  } while (0)

/// Skips the test, naming why, where cuDNN cannot be loaded (or no device).
#define HONE_REQUIRE_CUDNN()                                                                \
  do {                                                                                      \
    HONE_REQUIRE_CUDA();                                                                    \
    if (auto dnn = ::hone::cuda::Cudnn::get(); !dnn) GTEST_SKIP() << dnn.error().message(); \
  } while (0)

namespace hone::cuda::testing_util {

using backend_test::close;
using backend_test::plan_text;
using backend_test::uniform;

/// Weights of `dims` (output channels first) uniform in about
/// ±1.7/sqrt(fan-in), so values stay near 1 through a net and a bound
/// measures rounding, not size.
inline Tensor weights(std::mt19937& rng, const std::vector<int64_t>& dims) {
  int64_t fan = 1;
  for (size_t i = 1; i < dims.size(); ++i) fan *= dims[i];
  const float a = 1.7f / std::sqrt(static_cast<float>(fan));
  return uniform(rng, dims, -a, a);
}

/// Builds `g` on cuda, runs `inputs`, compares every output with the
/// reference, and checks that every node was on the backend, that GPU
/// kernels ran and that no block fell back. Returns the backend.
/// `settings`: backend settings to apply first, e.g. {{"cudnn", "false"}}.
/// activations=f32 unless `settings` name it: the plans these tests expect
/// under bf16/fp16 are f32 activations' (the default, auto, picks by timing,
/// activations_auto_test.cpp).
inline std::unique_ptr<CudaBackend> expect_matches_reference(
    const Graph& g, const std::vector<Tensor>& inputs, double rtol = 1e-4, double atol = 1e-5,
    const std::vector<std::pair<std::string, std::string>>& settings = {}) {
  auto be = std::make_unique<CudaBackend>();
  EXPECT_TRUE(be->configure("activations", "f32"));
  for (const auto& [k, v] : settings) EXPECT_TRUE(be->configure(k, v)) << k << "=" << v;
  auto built = be->build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  if (!built) return be;
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
    EXPECT_TRUE(close((*got)[i], (*want)[i], rtol, atol)) << "output " << i << "\n"
                                                          << plan_text(*be);
  EXPECT_GT(be->kernel_executions(), before) << "no cuda kernel ran";
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block fell back to the reference\n" << plan_text(*be);
  return be;
}

/// The outputs of `g` on the reference interpreter in f64 (the gate's
/// ground truth), narrowed to f32.
inline std::vector<Tensor> f64_truth(const Graph& g, const std::vector<Tensor>& inputs) {
  const Graph wide = eval::widen_to_f64(g);
  std::vector<Tensor> in;
  for (const Tensor& t : inputs) in.push_back(eval::cast_tensor(t, DType::kF64));
  auto out =
      eval::Interpreter(eval::OpRegistry::reference(), eval::Precision::kF64).run_tensors(wide, in);
  EXPECT_TRUE(out) << out.error().to_string();
  std::vector<Tensor> narrow;
  if (out)
    for (const Tensor& t : *out) narrow.push_back(eval::cast_tensor(t, DType::kF32));
  return narrow;
}

/// A constant i64 tensor of `shape` holding `v`.
inline ValueId i64s(GraphBuilder& b, std::vector<int64_t> shape, std::vector<int64_t> v) {
  return b.constant("", Tensor::from<int64_t>(std::move(shape), std::move(v)));
}

/// The reasons cuda gives for the nodes of `g` it leaves to the reference,
/// one a line (decided without a device); empty when it proposes them all.
inline std::string fallbacks_of(const Graph& g) {
  CudaBackend be;
  auto part = be.plan(g);
  if (!part) return part.error().to_string();
  std::string why;
  for (const auto& [id, reason] : part->fallbacks) why += reason + "\n";
  return why;
}

/// Whether `a` and `b` hold the same tensors bit for bit (a replayed kernel
/// choice must reproduce the timed run exactly).
inline bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || a[i].nbytes() != b[i].nbytes() ||
        std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()) != 0)
      return false;
  return true;
}

}  // namespace hone::cuda::testing_util
