// The models and settings of the mixed-precision tests (tune/mixed_precision_test.cpp on
// onednn, backends/cuda/mixed_precision_test.cpp on cuda): a region known to fail in
// bf16 beside one that bf16 computes well within its bound.
#pragma once

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/tune.h"

namespace hone::mixed_test {

inline Tensor uniform(std::mt19937& rng, std::vector<int64_t> shape, float lo, float hi) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng);
  return t;
}

/// x -> MatMul(constant `name` [in, out] of U(-0.1, 0.1)): bf16 computes it well.
inline ValueId dense(GraphBuilder& b, std::mt19937& rng, ValueId x, const std::string& name,
                     int64_t in, int64_t out) {
  return b.matmul(x, b.constant(name, uniform(rng, {in, out}, -0.1f, 0.1f)));
}

/// x [batch, 256] -> MatMul(constant `name`: 4 + U(-0.5, 0.5), 32 classes) ->
/// Softmax: the region known to fail in bf16.
inline ValueId logits_head(GraphBuilder& b, std::mt19937& rng, ValueId x, const std::string& name) {
  return b.softmax(b.matmul(x, b.constant(name, uniform(rng, {256, 32}, 3.5f, 4.5f))));
}

/// The graph `b` holds; a build error fails the test.
inline Graph built(GraphBuilder&& b) {
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

/// x[batch,256] -> MatMul 512 -> Relu -> MatMul 256 -> "features", and
/// x -> MatMul(wbig: 4 + U(-0.5, 0.5), 32 classes) -> Softmax -> "probs".
inline Graph logits_model() {
  std::mt19937 rng(29);
  GraphBuilder b("bf16_logits");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 256});
  ValueId h = b.relu(dense(b, rng, x, "wa", 256, 512));
  b.output(dense(b, rng, h, "wb", 512, 256), "features");
  b.output(logits_head(b, rng, x, "wbig"), "probs");
  return built(std::move(b));
}

inline Sample sample(int64_t batch, uint32_t seed) {
  std::mt19937 rng(seed);
  SampleMap m;
  m.emplace("x", uniform(rng, {batch, 256}, 0.0f, 1.0f));
  return Sample(std::move(m));
}

/// Two logits heads with the MLP between them in the graph's order: the
/// search's window spans the MLP, and pruning must drop it and keep both heads.
inline Graph two_heads_model() {
  std::mt19937 rng(31);
  GraphBuilder b("bf16_two_heads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 256});
  b.output(logits_head(b, rng, x, "wbig1"), "probs1");
  ValueId h = b.relu(dense(b, rng, x, "wa", 256, 512));
  h = b.relu(dense(b, rng, h, "wb", 512, 256));
  b.output(dense(b, rng, h, "wc", 256, 256), "features");
  b.output(logits_head(b, rng, x, "wbig2"), "probs2");
  return built(std::move(b));
}

/// The MatMul that reads constant `weights`.
inline std::string matmul_reading(const Graph& g, const std::string& weights) {
  for (const Node& n : g.nodes())
    if (n.op_type == "MatMul" && n.inputs.size() == 2 && g.value(n.inputs[1]).name == weights)
      return n.name;
  return {};
}

/// The MatMul that makes the logits (it reads "wbig").
inline std::string logits_matmul(const Graph& g) {
  return matmul_reading(g, "wbig");
}

inline TuneOptions options() {
  TuneOptions o;
  o.threads = 1;
  o.use_cache = false;
  o.profile.warmup = 1;
  o.profile.min_runs = 3;
  o.profile.window = 3;
  o.profile.max_runs = 10;
  o.candidate_budget_s = 1.0;
  return o;
}

inline const CandidateResult* find(const TuneReport& r, const std::string& name) {
  for (const auto& c : r.candidates)
    if (c.backend == name) return &c;
  return nullptr;
}

}  // namespace hone::mixed_test
