// oneDNN's own matmul loop against the same product through hone's onednn
// backend, to show what hone's wrapping costs (input checks, output
// allocation, partition plumbing). 1024 x 1024 x 1024 f32 by default. And
// the same product on the reference backend, in f32 and f64: what checking
// a large model against the reference costs (tune runs it on every check
// input, in both).
//
//   build/bench/hone_matmul_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
//
// All report GFLOP/s as the "flops" counter; the ratio hone / raw is the figure.
#include <benchmark/benchmark.h>

#include <dnnl.hpp>

#include <random>
#include <vector>

#include "hone/graph.h"
#include "hone/registry.h"
#include "hone/thread_pool.h"

namespace {

constexpr int64_t kN = 1024;

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void set_flops(benchmark::State& state) {
  state.counters["flops"] =
      benchmark::Counter(2.0 * kN * kN * kN, benchmark::Counter::kIsIterationInvariantRate);
}

// What benchdnn times: one primitive, memory objects made once, execute in a loop.
void BM_RawOneDnnMatmul(benchmark::State& state) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const dnnl::memory::desc a_md({kN, kN}, dt::f32, tag::ab), b_md({kN, kN}, dt::f32, tag::ab),
      c_md({kN, kN}, dt::f32, tag::ab);
  dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), eng));
  auto a = random_values(kN * kN, 1), b = random_values(kN * kN, 2);
  std::vector<float> c(kN * kN);
  dnnl::memory am(a_md, eng, a.data()), bm(b_md, eng, b.data()), cm(c_md, eng, c.data());
  for (auto _ : state) {
    prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    strm.wait();
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state);
}

// The same product as a one-node graph on a hone backend, both operands
// inputs; `precision`, when given, is set in the backend's config first.
void run_backend_matmul(benchmark::State& state, const char* backend, const char* precision) {
  hone::Graph g("matmul");
  const hone::ValueId a = g.add_input("a", hone::DType::kF32, hone::Shape{kN, kN});
  const hone::ValueId b = g.add_input("b", hone::DType::kF32, hone::Shape{kN, kN});
  g.add_output(g.add_node("MatMul", {a, b}, 1, {}, "mm")[0]);
  auto be = hone::default_registry().create(backend);
  if (!be || (precision != nullptr && !(*be)->configure("precision", precision)) ||
      !(*be)->build(g)) {
    state.SkipWithError("could not build the backend");
    return;
  }
  hone::Tensor at = hone::Tensor::zeros(hone::DType::kF32, {kN, kN});
  hone::Tensor bt = hone::Tensor::zeros(hone::DType::kF32, {kN, kN});
  auto av = random_values(kN * kN, 1), bv = random_values(kN * kN, 2);
  std::copy(av.begin(), av.end(), at.data<float>());
  std::copy(bv.begin(), bv.end(), bt.data<float>());
  const std::vector<hone::Tensor> inputs{at, bt};
  for (auto _ : state) {
    auto out = (*be)->infer(inputs);
    if (!out) {
      state.SkipWithError("infer failed");
      return;
    }
    benchmark::DoNotOptimize(out->front().raw());
  }
  set_flops(state);
}

void BM_HoneOneDnnMatmul(benchmark::State& state) {
  run_backend_matmul(state, "onednn", nullptr);
}

// The reference interpreter; state.range(0): 1 for f64.
void BM_ReferenceMatmul(benchmark::State& state) {
  run_backend_matmul(state, "reference", state.range(0) == 1 ? "f64" : nullptr);
}

BENCHMARK(BM_RawOneDnnMatmul)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HoneOneDnnMatmul)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReferenceMatmul)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
