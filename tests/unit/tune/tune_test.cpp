// hone::tune end to end on real backends: the check at the bounds, the
// tuning cache, dynamic batch and sequence axes, reports.
#include <unistd.h>
#include <filesystem>

#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/tune.h"
#include "tune/tune_test_util.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using testing_tune::sample_of;
using testing_tune::tiny_mlp;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("hone-tune-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TuneOptions real_options() {
  TuneOptions o;
  o.threads = 1;
  o.use_cache = false;
  o.profile.warmup = 1;
  o.profile.min_runs = 5;
  o.profile.window = 5;
  o.profile.max_runs = 20;
  return o;
}

TEST(Tune, WarmCacheSkipsMeasuringAndKeepsTheDecision) {
  HONE_NEED_CPU_BACKEND(cpu);
  const fs::path dir = temp_dir("cache");
  TuneOptions o = real_options();
  o.use_cache = true;
  o.cache_path = dir / "tuning.db";
  const std::vector<Sample> samples = {sample_of(1), sample_of(8)};
  auto first = tune(tiny_mlp(), samples, MaxThroughput({cpu}), o);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_TRUE(first->report().cache_used);
  EXPECT_EQ(first->report().cache_hits, 0);
  EXPECT_EQ(first->report().cache_misses, 1);  // the candidate (the reference is run, never cached)
  auto second = tune(tiny_mlp(), samples, MaxThroughput({cpu}), o);
  ASSERT_TRUE(second) << second.error().to_string();
  EXPECT_EQ(second->report().cache_hits, 1);  // the candidate; the reference always runs
  EXPECT_EQ(second->report().cache_misses, 0);
  for (const auto& c : second->report().candidates)
    EXPECT_EQ(c.from_cache, c.backend != "reference") << c.backend;
  // The cached candidate's figures are the stored ones, not new measurements.
  // (Which candidate the strategy then picks is a timing: on a loaded machine
  // the reference, measured again each time, can win one run and not the
  // other, so the decision itself is not compared.)
  auto figures_of = [](const TunedModel& t, const std::string& backend) {
    for (const auto& c : t.report().candidates)
      if (c.backend == backend) return c.figures;
    return std::vector<LatencyFigures>{};
  };
  const auto stored = figures_of(*first, cpu), reused = figures_of(*second, cpu);
  ASSERT_FALSE(stored.empty()) << cpu;
  ASSERT_EQ(reused.size(), stored.size());
  for (size_t i = 0; i < stored.size(); ++i) EXPECT_EQ(reused[i].p50_ms, stored[i].p50_ms);
  // The chosen backend was still built and runs.
  auto y = second->infer(sample_of(2));
  ASSERT_TRUE(y) << y.error().to_string();
  // Another threads count is another key: measured again.
  o.threads = 2;
  auto other = tune(tiny_mlp(), samples, MaxThroughput({cpu}), o);
  ASSERT_TRUE(other) << other.error().to_string();
  EXPECT_EQ(other->report().cache_hits, 0);
  fs::remove_all(dir);
}

TEST(Tune, DynamicBatchAndSequenceRunAtEveryBatchBetweenTheBounds) {
  HONE_NEED_CPU_BACKEND(cpu);
  GraphBuilder b("seq_model");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 4});
  std::vector<float> wv(16);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(i) * 0.05f - 0.4f;
  ValueId h = b.op("Tanh", {b.matmul(x, b.constant("w", Tensor::from<float>({4, 4}, wv)))});
  b.output(b.op("ReduceMean", {h}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}),
           "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto make = [](int64_t batch, int64_t seq) {
    std::vector<float> v(static_cast<size_t>(batch * seq * 4));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 11) * 0.1f - 0.5f;
    SampleMap m;
    m.emplace("x", Tensor::from<float>({batch, seq, 4}, v));
    return Sample(std::move(m));
  };
  auto tuned = tune(*g, {make(1, 3), make(4, 9), make(2, 5)}, MaxThroughput({cpu}), real_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const GraphSpec& spec = tuned->spec();
  EXPECT_EQ(spec.batch_dim, "batch");
  ASSERT_TRUE(spec.bounds.count("seq"));
  EXPECT_EQ(spec.bounds.at("batch").min, 1);
  EXPECT_EQ(spec.bounds.at("batch").max, 4);
  EXPECT_EQ(spec.bounds.at("seq").min, 3);
  EXPECT_EQ(spec.bounds.at("seq").max, 9);
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref);
  ASSERT_TRUE((*ref)->build(*g));
  for (int64_t batch = 1; batch <= 4; ++batch)
    for (int64_t seq : {3, 6, 9}) {
      Sample s = make(batch, seq);
      auto y = tuned->infer(s);
      ASSERT_TRUE(y) << "batch " << batch << " seq " << seq << ": " << y.error().to_string();
      auto expected = (*ref)->infer({s.find("x")->tensor()});
      ASSERT_TRUE(expected);
      const CorrectnessResult c = check_outputs({y->tensor()}, *expected, {"y"}, Tolerance{});
      EXPECT_TRUE(c.passed) << c.message;
    }
  // Outside the bounds: a clear error naming the dim.
  auto too_big = tuned->infer(make(5, 3));
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().to_string().find("batch"), std::string::npos)
      << too_big.error().to_string();
  auto too_long = tuned->infer(make(2, 12));
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().to_string().find("seq"), std::string::npos)
      << too_long.error().to_string();
}

TEST(Tune, ReportsAsJsonTableAndHtml) {
  HONE_NEED_CPU_BACKEND(cpu);
  auto tuned = tune(tiny_mlp(), {sample_of(1), sample_of(4)}, MaxThroughput({cpu}), real_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const TuneReport& r = tuned->report();
  auto back = TuneReport::from_json(r.json());
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->json(), r.json());
  EXPECT_EQ(back->decision.backend, r.decision.backend);
  const std::string table = r.table();
  EXPECT_NE(table.find(cpu), std::string::npos);
  EXPECT_NE(table.find("reference"), std::string::npos);
  EXPECT_NE(table.find("chose " + r.decision.backend), std::string::npos);
  const std::string html = r.html();
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("p50 latency"), std::string::npos);
  EXPECT_NE(html.find("throughput"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos) << "the page must be self-contained";
  EXPECT_FALSE(TuneReport::from_json("{\"model\": 3}"));
  // The inputs the figures were measured at, one line per batch size, in all three.
  ASSERT_EQ(r.measured_inputs.size(), r.batch_sizes.size());
  EXPECT_EQ(r.measured_inputs.front().rfind("batch 1: x f32[1,", 0), 0u) << r.measured_inputs[0];
  EXPECT_NE(table.find("measured at: batch 1: x f32[1,"), std::string::npos) << table;
  EXPECT_NE(html.find("measured at: <code>batch 1: x f32[1,"), std::string::npos);
  EXPECT_EQ(back->measured_inputs, r.measured_inputs);
}

// An index output (ArgMax) is judged with its witness: the f64 truth run
// returns the values it was chosen from beside the outputs, which must not
// leak into the outputs the candidates are compared with.
TEST(Tune, IndexOutputsAreCheckedBesideTheirWitness) {
  HONE_NEED_CPU_BACKEND(cpu);
  GraphBuilder b("argmax");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
  b.output(b.op("ArgMax", {b.relu(x)}, {{"axis", int64_t{1}}}), "idx");
  b.output(b.relu(x), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto tuned = tune(*g, {sample_of(1), sample_of(4)}, MaxThroughput({cpu}), real_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  bool seen = false;
  for (const CandidateResult& c : tuned->report().candidates)
    if (c.backend == cpu) {
      ASSERT_EQ(c.correctness.outputs.size(), 2u);
      EXPECT_TRUE(c.correctness.outputs[0].exact);
      EXPECT_TRUE(c.correctness.passed) << c.correctness.message;
      seen = true;
    }
  EXPECT_TRUE(seen);
}

TEST(Tune, BadSamplesAreClearErrors) {
  HONE_NEED_CPU_BACKEND(cpu);
  auto none = tune(tiny_mlp(), {}, MaxThroughput(), real_options());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("at least one sample"), std::string::npos);
  SampleMap wrong;
  wrong.emplace("x", Tensor::zeros(DType::kF32, {2, 5}));
  auto bad = tune(tiny_mlp(), {Sample(std::move(wrong))}, MaxThroughput(), real_options());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().to_string().find("x"), std::string::npos) << bad.error().to_string();
  TuneOptions o = real_options();
  o.configs[cpu]["no_such_field"] = "1";
  auto cfg = tune(tiny_mlp(), {sample_of(1), sample_of(2)}, OneBackend(cpu), o);
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.error().to_string().find("no_such_field"), std::string::npos)
      << cfg.error().to_string();
}

}  // namespace
}  // namespace hone
