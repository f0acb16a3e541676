// Test backends whose speed is controlled: each sleeps a set time per call
// (plus a part per sample of the batch) around the real reference kernels,
// and can be told to fail its build or to perturb its outputs. They live in
// a registry of their own, so the strategies can be checked against known
// speeds, the baseline gate included.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/registry.h"
#include "hone/sample.h"
#include "hone/tune.h"

namespace hone::testing_tune {

struct SleepSpec {
  int base_us = 0;        // per call
  int per_sample_us = 0;  // per sample of the batch (leading dim of input 0)
  bool fail_build = false;
  int build_ms = 0;       // build() sleeps this long
  bool wrong = false;     // adds 1 to every f32 output
  int first_call_us = 0;  // the first infer() sleeps this much more (lazy kernel creation)
};

/// Counts builds of every SleepBackend, so tests can prove a dry run built nothing.
inline std::atomic<int>& sleep_builds() {
  static std::atomic<int> n{0};
  return n;
}

class SleepBackend final : public Backend {
 public:
  SleepBackend(std::string name, SleepSpec spec, std::unique_ptr<Backend> inner)
      : name_(std::move(name)), spec_(spec), inner_(std::move(inner)) {
    // The inner backend is built as it is: this wrapper has no f64 mode.
    caps_ = inner_->capabilities();
    caps_.precisions = {Precision::kFp32};
  }
  std::string_view name() const override { return name_; }
  const BackendCapabilities& capabilities() const override { return caps_; }

 protected:
  Result<void> do_build(const Graph& g) override {
    ++sleep_builds();
    std::this_thread::sleep_for(std::chrono::milliseconds(spec_.build_ms));
    if (spec_.fail_build)
      return fail(ErrorCode::kUnsupported, name_ + " cannot build anything (test backend)");
    return inner_->build(g);
  }
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& in) const override {
    const int64_t batch = !in.empty() && in[0].rank() > 0 ? in[0].dim(0) : 1;
    const int64_t first = calls_++ == 0 ? spec_.first_call_us : 0;
    std::this_thread::sleep_for(
        std::chrono::microseconds(spec_.base_us + spec_.per_sample_us * batch + first));
    HONE_TRY(auto out, inner_->infer(in));
    if (spec_.wrong)
      for (Tensor& t : out)
        if (t.dtype() == DType::kF32) {
          t = t.clone();
          for (float& v : t.span<float>()) v += 1.0f;
        }
    return out;
  }

 private:
  std::string name_;
  SleepSpec spec_;
  mutable std::atomic<int64_t> calls_{0};
  std::unique_ptr<Backend> inner_;
  BackendCapabilities caps_;
};

/// A registry whose "reference" and other entries are SleepBackends over the real reference.
inline BackendRegistry sleep_registry(
    const std::vector<std::pair<std::string, SleepSpec>>& backends) {
  BackendRegistry real;
  register_reference(real);
  BackendRegistry r;
  for (const auto& [name, spec] : backends) {
    auto caps = real.find("reference")->capabilities;
    auto added = r.add({name,
                        "test backend that sleeps",
                        caps,
                        [name, spec] {
                          auto inner = default_registry().create("reference");
                          return std::make_unique<SleepBackend>(name, spec, std::move(*inner));
                        },
                        {}});
    EXPECT_TRUE(added);
  }
  return r;
}

/// x[batch,4] -> Gemm 3 -> Relu -> y[batch,3].
inline Graph tiny_mlp() {
  GraphBuilder b("tiny");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
  ValueId w = b.constant("w", Tensor::from<float>({3, 4}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f,
                                                           0.7f, -0.8f, 0.9f, 1.0f, -1.1f, 1.2f}));
  ValueId bias = b.constant("b", Tensor::from<float>({3}, {0.01f, 0.02f, -0.03f}));
  b.output(b.relu(b.gemm(x, w, bias, {.trans_b = true})), "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

inline Sample sample_of(int64_t batch, float offset = 0) {
  std::vector<float> v(static_cast<size_t>(batch * 4));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7) * 0.25f - 0.7f + offset;
  SampleMap m;
  m.emplace("x", Tensor::from<float>({batch, 4}, v));
  return Sample(std::move(m));
}

/// Options for fast, cache-free tuning on a test registry.
inline TuneOptions quick_options(const BackendRegistry& reg) {
  TuneOptions o;
  o.registry = &reg;
  o.use_cache = false;
  o.threads = 1;
  o.profile.warmup = 1;
  o.profile.min_runs = 5;
  o.profile.window = 5;
  o.profile.max_runs = 15;
  return o;
}

/// The first of `prefer` this build has (HONE_WITH_<NAME>=OFF leaves
/// backends out); "" when none is built.
inline std::string cpu_backend(std::vector<std::string> prefer = {"onednn", "blas", "aot"}) {
  for (const std::string& name : prefer)
    if (default_registry().find(name) != nullptr) return name;
  return {};
}

/// For a test's first lines: `HONE_NEED_CPU_BACKEND(cpu);` names it, or skips.
#define HONE_NEED_CPU_BACKEND(var)                     \
  const std::string var = testing_tune::cpu_backend(); \
  if (var.empty()) GTEST_SKIP() << "this build has none of onednn, blas and aot"

}  // namespace hone::testing_tune
