// The mixed plan tune's bisection finds, against strict fp32, on onednn: a
// model whose logits (~500 in magnitude, into Softmax) fail the gate in bf16
// and whose MLP branch (the bulk of the work) does not. fp32 runs everything
// in f32; mixed runs the MLP's MatMuls in bf16 and keeps the logits' MatMul
// in fp32 (what tests/unit/tune/mixed_precision_test.cpp shows tune picks);
// bf16 runs all of them in bf16 (faster still, but wrong: shown for the
// cost of the one fp32 node). Needs a CPU with AVX-512 BF16.
//
//   build/bench/hone_mixed_precision_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only --benchmark_enable_random_interleaving
//   (one command line)
//
// Arguments: 0 fp32, 1 mixed, 2 all bf16; batch 64, one thread unless
// HONE_BENCH_THREADS says otherwise. The figure is mixed / fp32's median.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "hone/graph_builder.h"
#include "hone/registry.h"
#include "hone/thread_pool.h"

namespace {

constexpr int64_t kBatch = 64;

hone::Tensor uniform(std::mt19937& rng, std::vector<int64_t> shape, float lo, float hi) {
  hone::Tensor t = hone::Tensor::zeros(hone::DType::kF32, std::move(shape));
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.span<float>()) v = d(rng);
  return t;
}

/// x[64,1024] -> MatMul 2048 -> Relu -> MatMul 1024 -> "features"; x ->
/// MatMul(wbig: 4 + U(-0.5, 0.5), 32 classes) -> Softmax -> "probs".
hone::Graph model(std::string* logits_node) {
  std::mt19937 rng(29);
  hone::GraphBuilder b("bf16_logits_bench");
  auto x = b.input("x", hone::DType::kF32, hone::Shape{kBatch, 1024});
  auto h = b.relu(b.matmul(x, b.constant("wa", uniform(rng, {1024, 2048}, -0.05f, 0.05f))));
  b.output(b.matmul(h, b.constant("wb", uniform(rng, {2048, 1024}, -0.05f, 0.05f))), "features");
  b.output(b.softmax(b.matmul(x, b.constant("wbig", uniform(rng, {1024, 32}, 3.5f, 4.5f)))),
           "probs");
  hone::Graph g = *std::move(b).build();
  for (const hone::Node& n : g.nodes())
    if (n.op_type == "MatMul" && g.value(n.inputs[1]).name == "wbig") *logits_node = n.name;
  return g;
}

void BM_OnednnLogitsModel(benchmark::State& state) {
  const char* t = std::getenv("HONE_BENCH_THREADS");
  hone::ThreadPool::set_global_threads(t != nullptr ? std::atoi(t) : 1);
  std::string logits;
  const hone::Graph g = model(&logits);
  auto be = hone::default_registry().create("onednn");
  if (!be) return state.SkipWithError("no onednn backend");
  if (state.range(0) > 0 && !(*be)->set_precision(hone::Precision::kBf16))
    return state.SkipWithError("onednn has no bf16 on this CPU");
  if (state.range(0) == 1 && !(*be)->set_fp32_nodes({logits}))
    return state.SkipWithError("could not keep the logits in fp32");
  if (!(*be)->build(g)) return state.SkipWithError("could not build the backend");
  std::mt19937 rng(1);
  const std::vector<hone::Tensor> in{uniform(rng, {kBatch, 1024}, 0.0f, 1.0f)};
  for (auto _ : state) {
    auto out = (*be)->infer(in);
    if (!out) return state.SkipWithError("inference failed");
    benchmark::DoNotOptimize(out->data());
  }
  state.SetLabel(state.range(0) == 0   ? "fp32"
                 : state.range(0) == 1 ? "mixed"
                                       : "bf16 (fails gate)");
}

}  // namespace

BENCHMARK(BM_OnednnLogitsModel)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
