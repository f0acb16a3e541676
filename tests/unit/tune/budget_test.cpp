// Tuning that respects the user's time: the reference runs once per check
// input and is never profiled, a dominated candidate stops early, a whole
// tune's time budget skips the candidates it does not reach, profiling keeps
// to its budget, and progress events carry an estimate of the time left.
#include <chrono>

#include <gtest/gtest.h>

#include "hone/profile.h"
#include "hone/strategy.h"
#include "hone/tune.h"
#include "tune/tune_test_util.h"

namespace hone {
namespace {

using testing_tune::quick_options;
using testing_tune::sample_of;
using testing_tune::sleep_registry;
using testing_tune::tiny_mlp;

const std::vector<Sample> kSamples = {sample_of(1), sample_of(4, 0.1f)};

TEST(Budget, ReferenceRunsOncePerCheckInputAndIsNeverProfiled) {
  auto reg = sleep_registry({{"reference", {.base_us = 2000}}, {"fast", {.base_us = 200}}});
  TuneOptions o = quick_options(reg);
  auto m = tune(tiny_mlp(), kSamples, MaxThroughput({"fast"}), o);
  ASSERT_TRUE(m) << m.error().to_string();
  const CandidateResult& base = m->report().baseline;
  ASSERT_EQ(base.figures.size(), 2u);  // batch 1 and 4
  for (const LatencyFigures& f : base.figures) {
    EXPECT_EQ(f.runs, 1) << "batch " << f.batch;
    EXPECT_GE(f.p50_ms, 2.0) << "batch " << f.batch;  // the one run slept 2 ms
  }
  EXPECT_EQ(m->decision().backend, "fast");
  // The sleep registry's reference has no f64 mode: the truth is the f32 reference, said so.
  for (const auto& c : m->report().candidates)
    if (c.backend == "fast") {
      EXPECT_NE(c.correctness.truth.find("no f64"), std::string::npos);
    }
}

TEST(Budget, RealReferenceIsTheF64Truth) {
  const std::string cpu = testing_tune::cpu_backend({"blas", "onednn", "aot"});
  if (cpu.empty()) GTEST_SKIP() << "this build has none of blas, onednn and aot";
  TuneOptions o;
  o.use_cache = false;
  o.threads = 1;
  o.candidate_budget_s = 0.2;
  auto m = tune(tiny_mlp(), kSamples, OneBackend(cpu, false), o);
  ASSERT_TRUE(m) << m.error().to_string();
  const CandidateResult& c = m->report().candidates.back();
  ASSERT_EQ(c.backend, cpu);
  EXPECT_EQ(c.correctness.truth, "f64 reference");
  ASSERT_EQ(c.correctness.outputs.size(), 1u);
  const OutputCheck& y = c.correctness.outputs[0];
  EXPECT_TRUE(y.passed);
  EXPECT_GT(y.ref_rel_l2, 0);  // the f32 reference's rounding, measured
  EXPECT_GE(y.bound_rel_l2, 100 * y.ref_rel_l2);
  // The table and the page show the calibrated figures.
  EXPECT_NE(m->report().table().find("ref rel L2"), std::string::npos);
  EXPECT_NE(m->report().html().find("<h2>Correctness</h2>"), std::string::npos);
  auto back = TuneReport::from_json(m->report().json());
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->candidates.back().correctness.outputs[0].bound_rel_l2, y.bound_rel_l2);
}

TEST(Budget, DominatedCandidateStopsEarly) {
  // "slow" sleeps 2x longer than "fast", which is measured first: after 5
  // runs slow is surely slower and stops, though min_runs asks for 15.
  auto reg = sleep_registry(
      {{"reference", {.base_us = 20000}}, {"fast", {.base_us = 300}}, {"slow", {.base_us = 600}}});
  TuneOptions o = quick_options(reg);
  o.profile.min_runs = 15;
  o.profile.max_runs = 15;
  o.profile.window = 15;
  auto m = tune(tiny_mlp(), kSamples, MaxThroughput({"fast", "slow"}), o);
  ASSERT_TRUE(m) << m.error().to_string();
  for (const auto& c : m->report().candidates) {
    if (c.backend == "slow") {
      for (const LatencyFigures& f : c.figures) {
        EXPECT_TRUE(f.dominated) << "batch " << f.batch;
        EXPECT_EQ(f.runs, 5) << "batch " << f.batch;
      }
    }
    if (c.backend == "fast") {
      for (const LatencyFigures& f : c.figures) EXPECT_FALSE(f.dominated);
    }
  }
  EXPECT_EQ(m->decision().backend, "fast");
  EXPECT_NE(m->report().table().find("slower than the best so far"), std::string::npos);
}

TEST(Budget, OneSlowFirstRunDoesNotMakeACandidateHopeless) {
  // A backend that creates its kernels when it first runs: that run takes
  // 100 ms, every later one 0.3 ms, and the best so far is 2 ms. The first
  // run alone (50x the best) must not stop it, nor be its figure.
  testing_tune::SleepBackend lazy("lazy", {.base_us = 300, .first_call_us = 100000},
                                  std::move(*default_registry().create("reference")));
  ASSERT_TRUE(lazy.build(tiny_mlp()));
  ProfileOptions po;
  po.warmup = 1;
  po.min_runs = 5;
  po.window = 5;
  po.max_runs = 5;
  po.stop_if_slower_ms = 2.0;
  const Tensor x = Tensor::from<float>({1, 4}, {0.5f, -0.25f, 1.0f, 0.0f});
  auto f = profile(lazy, {x}, 1, po);
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_FALSE(f->dominated);
  EXPECT_EQ(f->runs, 5);
  EXPECT_LT(f->p50_ms, 20.0);
}

TEST(Budget, HopelessCandidateStopsAfterItsWarmUpOrTwoRuns) {
  // "hopeless" sleeps 40x longer than "fast": its warm-up (over 10x the best
  // p50) or its first two runs (over 3x) settle it.
  auto reg = sleep_registry({{"reference", {.base_us = 20000}},
                             {"fast", {.base_us = 300}},
                             {"hopeless", {.base_us = 12000}}});
  TuneOptions o = quick_options(reg);
  o.profile.min_runs = 15;
  o.profile.max_runs = 15;
  o.profile.window = 15;
  auto m = tune(tiny_mlp(), kSamples, MaxThroughput({"fast", "hopeless"}), o);
  ASSERT_TRUE(m) << m.error().to_string();
  for (const auto& c : m->report().candidates)
    if (c.backend == "hopeless")
      for (const LatencyFigures& f : c.figures) {
        EXPECT_TRUE(f.dominated) << "batch " << f.batch;
        EXPECT_LE(f.runs, 2) << "batch " << f.batch;
        EXPECT_GE(f.p50_ms, 12.0) << "batch " << f.batch;
      }
  EXPECT_EQ(m->decision().backend, "fast");
}

TEST(Budget, TimeBudgetSkipsCandidatesItDoesNotReach) {
  // "first" takes 0.4 s to build: the 0.3 s budget is spent when it is done,
  // so it is measured with the least runs and "second" is never started.
  auto reg = sleep_registry({{"reference", {.base_us = 3000}},
                             {"first", {.base_us = 300, .build_ms = 400}},
                             {"second", {.base_us = 200}}});
  TuneOptions o = quick_options(reg);
  o.profile.min_runs = 200;  // would take far longer than the budget
  o.profile.max_runs = 200;
  o.profile.window = 200;
  o.time_budget_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  auto m = tune(tiny_mlp(), kSamples, MaxThroughput({"first", "second"}), o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_LT(s, 1.5);
  EXPECT_EQ(m->decision().backend, "first");
  for (const auto& c : m->report().candidates)
    if (c.backend == "first") {
      for (const LatencyFigures& f : c.figures) EXPECT_LE(f.runs, 4) << "batch " << f.batch;
    }
  bool saw_skip = false;
  for (const auto& c : m->report().candidates)
    if (c.backend == "second") {
      saw_skip = !c.skipped.empty();
      EXPECT_FALSE(c.usable());
    }
  EXPECT_TRUE(saw_skip);
  EXPECT_NE(m->decision().losers.at("second").find("time budget"), std::string::npos)
      << m->decision().losers.at("second");
  EXPECT_NE(m->report().table().find("skipped"), std::string::npos);
  // OneBackend on a skipped backend says so instead of choosing it.
  o.time_budget_s = 1e-9;
  auto one = tune(tiny_mlp(), kSamples, OneBackend("first", false), o);
  ASSERT_FALSE(one);
  EXPECT_NE(one.error().message().find("skipped"), std::string::npos) << one.error().to_string();
}

TEST(Budget, ProfileKeepsToItsSecondsAndProgressHasAnEstimate) {
  auto reg = sleep_registry({{"reference", {.base_us = 1000}},
                             {"slowish", {.base_us = 20000}},
                             {"quick", {.base_us = 500}}});
  auto be = reg.create("slowish");
  ASSERT_TRUE(be);
  ASSERT_TRUE((*be)->build(tiny_mlp()));
  ProfileOptions po;
  po.min_runs = 50;
  po.max_seconds = 0.1;
  const auto t0 = std::chrono::steady_clock::now();
  auto f = profile(**be, {Tensor::zeros(DType::kF32, {1, 4})}, 1, po);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_GE(f->runs, 3);  // the least a budget leaves
  EXPECT_LE(f->runs, 6);
  EXPECT_TRUE(f->out_of_time);
  EXPECT_LT(s, 0.4);

  std::vector<TuneEvent> events;
  TuneOptions o = quick_options(reg);
  o.progress = [&](const TuneEvent& e) { events.push_back(e); };
  auto m = tune(tiny_mlp(), kSamples, MaxThroughput({"quick", "slowish"}), o);
  ASSERT_TRUE(m) << m.error().to_string();
  bool estimated = false;
  for (const TuneEvent& e : events)
    if (e.candidate == "slowish") {
      EXPECT_GE(e.eta_s, 0) << e.step;  // after one candidate finished there is an estimate
      estimated = true;
    }
  EXPECT_TRUE(estimated);
}

}  // namespace
}  // namespace hone
