// Just-in-time tuning on every backend: the three modes (eager, deferred,
// inspect), the background tune with its swap between calls, and a failed
// tune that leaves calls on the reference. Pipelines with JIT stages and the
// inspection report are in jit_pipeline_test.cpp.
#include <atomic>
#include <thread>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/jit.h"

namespace hone::functional {
namespace {

class Jit : public BackendTest {};

JitOptions quick_jit(JitMode mode, size_t min_samples) {
  JitOptions o;
  o.mode = mode;
  o.min_samples = min_samples;
  o.tune = quick_tune_options();
  return o;
}

struct Checker {
  const BackendCase& c;
  const Graph& g;
  Seeded& s;
  std::unique_ptr<Backend> ref;
  Checker(const BackendCase& c, const Graph& g, Seeded& s) : c(c), g(g), s(s) {
    auto r = default_registry().create("reference");
    if (r && (*r)->build(g)) ref = std::move(*r);
  }
  // One call of batch `batch`; the output must match the reference.
  testing::AssertionResult call(JitModel& jit, int64_t batch, JitCall* info = nullptr) {
    const auto x = s.inputs(g, {{"batch", batch}});
    auto y = jit.infer(sample_from(g, x), info);
    if (!y) return testing::AssertionFailure() << y.error().to_string();
    auto expected = ref->infer(x);
    if (!expected) return testing::AssertionFailure() << expected.error().to_string();
    return c.tolerance.assert_close(y->tensor(), (*expected)[0]);
  }
};

std::string why_not(const JitModel& jit) {
  return jit.tuning_error() ? jit.tuning_error()->to_string() : "no error";
}

HONE_MATRIX_TEST_P(Jit, RecordsCallsThenTunesOnThem, "jit.record", "jit.tune-from-recorded") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(81);
  Graph g = mlp(s);
  JitOptions o = quick_jit(JitMode::kTuneEager, 3);
  o.background = false;  // the third call tunes in place, as before modes existed
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)), o);
  Checker k(c, g, s);
  ASSERT_TRUE(k.ref);
  EXPECT_TRUE(k.call(jit, 2));
  EXPECT_TRUE(k.call(jit, 5));
  EXPECT_EQ(jit.recorded(), 2u);
  EXPECT_EQ(jit.tuned(), nullptr) << "tuned before the recorded count";
  EXPECT_TRUE(k.call(jit, 3));  // the third call tunes on batch sizes 2, 5 and 3
  ASSERT_NE(jit.tuned(), nullptr) << why_not(jit);
  const TunedModel& t = *jit.tuned();
  EXPECT_EQ(t.spec().bounds.at("batch").min, 2);
  EXPECT_EQ(t.spec().bounds.at("batch").max, 5);
  const uint64_t before = t.backend().executions();
  EXPECT_TRUE(k.call(jit, 4));
  EXPECT_EQ(t.backend().executions(), before + 1)
      << "the call after tuning did not run on " << c.key;
  EXPECT_TRUE(selected_backend(t, c.key, sample_from(g, s.inputs(g, {{"batch", 2}}))));
  EXPECT_TRUE(k.call(jit, 9));  // outside the recorded bounds: still answered, on the reference
  EXPECT_EQ(jit.out_of_bounds_calls(), 1u);
  EXPECT_EQ(jit.recorded(), 3u);
}

HONE_MATRIX_TEST_P(Jit, EagerWaitsForTwoBatchSizesThenTunesInTheBackground, "jit.eager") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(82);
  Graph g = mlp(s);
  JitOptions o = quick_jit(JitMode::kTuneEager, 2);
  o.batch_axis_required = true;
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)), o);
  Checker k(c, g, s);
  ASSERT_TRUE(k.ref);
  const int created = case_backends_created();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(k.call(jit, 2));
  EXPECT_EQ(jit.state(), JitState::kRecording) << "tuned on one batch size";
  EXPECT_EQ(jit.tunes_started(), 0u);
  EXPECT_EQ(case_backends_created(), created);
  JitCall info;
  EXPECT_TRUE(k.call(jit, 6, &info));  // the second batch size starts the tune
  EXPECT_EQ(info.generation, 0);
  EXPECT_EQ(jit.tunes_started(), 1u);
  jit.wait();
  ASSERT_EQ(jit.state(), JitState::kTuned) << why_not(jit);
  ASSERT_NE(jit.tuned(), nullptr);
  EXPECT_EQ(jit.tuned()->decision().backend, c.key);
  EXPECT_EQ(jit.tuned()->spec().bounds.at("batch").min, 2);
  EXPECT_EQ(jit.tuned()->spec().bounds.at("batch").max, 6);
  EXPECT_GT(case_backends_created(), created);
  EXPECT_TRUE(k.call(jit, 4, &info));
  EXPECT_EQ(info.generation, 1);
  EXPECT_EQ(info.backend, c.key);
}

HONE_MATRIX_TEST_P(Jit, DeferredTunesOnlyAfterTuneDeferred, "jit.deferred") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(83);
  Graph g = mlp(s);
  Checker k(c, g, s);
  ASSERT_TRUE(k.ref);
  {
    JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)),
                 quick_jit(JitMode::kTuneDeferred, 1));
    const int created = case_backends_created();
    for (int64_t b : {1, 3, 2, 3, 1, 2}) EXPECT_TRUE(k.call(jit, b));
    EXPECT_EQ(jit.state(), JitState::kRecording);
    EXPECT_EQ(jit.tunes_started(), 0u) << "the deferred mode tuned before tune_deferred()";
    EXPECT_EQ(case_backends_created(), created) << "a candidate was built before tune_deferred()";
    EXPECT_EQ(jit.recorded(), 6u);
    ASSERT_TRUE(jit.tune_deferred());
    EXPECT_EQ(jit.tunes_started(), 0u) << "tune_deferred() must leave the tune to the next call";
    JitCall info;
    EXPECT_TRUE(k.call(jit, 2, &info));  // starts the tune, runs on the reference
    EXPECT_EQ(info.generation, 0);
    EXPECT_EQ(jit.tunes_started(), 1u);
    jit.wait();
    ASSERT_EQ(jit.state(), JitState::kTuned) << why_not(jit);
    EXPECT_EQ(jit.tuned()->decision().backend, c.key);
    EXPECT_EQ(jit.tuned()->spec().bounds.at("batch").max, 3);
    EXPECT_TRUE(k.call(jit, 3, &info));
    EXPECT_EQ(info.backend, c.key);
    EXPECT_FALSE(jit.tune_deferred()) << "a second tune_deferred() after the tune";
  }
  // The tune on a thread the caller gives: tune_now() there.
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)),
               quick_jit(JitMode::kTuneDeferred, 1));
  for (int64_t b : {1, 4}) EXPECT_TRUE(k.call(jit, b));
  Result<void> tuned = fail(ErrorCode::kInternal, "not run");
  std::thread mine([&] { tuned = jit.tune_now(); });
  mine.join();
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  EXPECT_EQ(jit.state(), JitState::kTuned);
  JitCall info;
  EXPECT_TRUE(k.call(jit, 4, &info));
  EXPECT_EQ(info.backend, c.key);
}

HONE_MATRIX_TEST_P(Jit, InspectNeverBuildsACandidate, "jit.inspect") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(84);
  Graph g = mlp(s);
  Checker k(c, g, s);
  ASSERT_TRUE(k.ref);
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)),
               quick_jit(JitMode::kInspect, 1));
  const int created = case_backends_created();
  for (int64_t b : {1, 2, 3, 4, 5, 6, 7, 8, 2, 2}) EXPECT_TRUE(k.call(jit, b));
  EXPECT_FALSE(jit.tune_deferred());
  EXPECT_FALSE(jit.tune_now());
  EXPECT_EQ(case_backends_created(), created) << "inspect mode built a candidate";
  EXPECT_EQ(jit.tunes_started(), 0u);
  EXPECT_EQ(jit.state(), JitState::kInspecting);
  EXPECT_EQ(jit.recorded(), 0u) << "inspect mode keeps no samples";
  EXPECT_EQ(jit.tuned(), nullptr);
  const InspectionNode n = jit.inspect("mlp");
  EXPECT_EQ(n.calls, 10u);
  EXPECT_EQ(n.state, "inspecting");
  EXPECT_EQ(n.backend, "reference");
  ASSERT_EQ(n.inputs.size(), 1u);
  EXPECT_EQ(n.inputs[0].path, "x");
  EXPECT_EQ(n.inputs[0].dtype, "f32");
  EXPECT_EQ(n.inputs[0].shapes.size(), 8u);
  EXPECT_EQ(n.inputs[0].varied_axes, std::vector<int>{0});
  ASSERT_EQ(n.outputs.size(), 1u);
  EXPECT_EQ(n.outputs[0].varied_axes, std::vector<int>{0});
  EXPECT_GT(n.total_ms, 0);
  EXPECT_NEAR(n.avg_ms * 10, n.total_ms, 1e-9);
}

HONE_MATRIX_TEST_P(Jit, FailedTuneKeepsCallsOnTheReference, "jit.failure-fallback") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(85);
  Graph g = mlp(s);
  Checker k(c, g, s);
  ASSERT_TRUE(k.ref);
  // The one backend allowed cannot be configured, so nothing can be built.
  JitOptions o = quick_jit(JitMode::kTuneEager, 2);
  o.tune.configs[c.key] = {{"no_such_field", "1"}};
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)), o);
  EXPECT_TRUE(k.call(jit, 1));
  EXPECT_TRUE(k.call(jit, 3));
  jit.wait();
  ASSERT_EQ(jit.state(), JitState::kFailed);
  ASSERT_TRUE(jit.tuning_error());
  EXPECT_NE(jit.tuning_error()->to_string().find("no_such_field"), std::string::npos)
      << jit.tuning_error()->to_string();
  EXPECT_EQ(jit.tuned(), nullptr);
  for (int64_t b : {1, 2, 7}) {
    JitCall info;
    EXPECT_TRUE(k.call(jit, b, &info)) << "batch " << b;
    EXPECT_EQ(info.backend, "reference");
    EXPECT_EQ(info.generation, 0);
  }
  EXPECT_EQ(jit.tunes_started(), 1u) << "a failed tune is not retried";
  const InspectionNode n = jit.inspect();
  EXPECT_EQ(n.state, "failed");
  EXPECT_NE(n.reason.find("no_such_field"), std::string::npos) << n.reason;
}

HONE_MATRIX_TEST_P(Jit, BackgroundTuneSwapsBetweenCallsOfEightThreads, "jit.background-swap") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(86);
  Graph g = mlp(s);
  Checker k(c, g, s);
  ASSERT_TRUE(k.ref);
  // Inputs and reference outputs made up front: the threads only call.
  std::vector<std::vector<Tensor>> xs, expected;
  for (int64_t b : {2, 5, 3, 4}) {
    xs.push_back(s.inputs(g, {{"batch", b}}));
    auto e = k.ref->infer(xs.back());
    ASSERT_TRUE(e);
    expected.push_back(*e);
  }
  JitOptions o = quick_jit(JitMode::kTuneEager, 4);
  o.batch_axis_required = true;
  std::atomic<int> steps{0};
  // Each tuning step takes a little longer, so calls surely overlap the tune.
  o.tune.progress = [&](const TuneEvent&) {
    ++steps;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)), o);
  constexpr int kThreads = 8;
  std::vector<std::vector<int>> generations(kThreads);
  std::atomic<int> wrong{0}, errors{0}, during_tune{0};
  std::vector<std::thread> pool;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      // Call until this thread has run at least two calls on the tuned model.
      int tuned_calls = 0;
      for (size_t i = t; tuned_calls < 2 && std::chrono::steady_clock::now() < deadline; ++i) {
        const size_t j = i % xs.size();
        const bool tuning = jit.state() == JitState::kTuning;
        JitCall info;
        auto y = jit.infer(sample_from(g, xs[j]), &info);
        if (!y) {
          ++errors;
          if (jit.state() == JitState::kFailed) break;
          continue;
        }
        if (!c.tolerance.assert_close(y->tensor(), expected[j][0])) ++wrong;
        if (tuning) ++during_tune;
        generations[t].push_back(info.generation);
        if (info.generation == 1) ++tuned_calls;
      }
    });
  for (auto& th : pool) th.join();
  jit.wait();
  ASSERT_EQ(jit.state(), JitState::kTuned) << why_not(jit);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "outputs differ from the reference";
  EXPECT_GT(during_tune.load(), 0) << "no call ran while the tune was running";
  EXPECT_GT(steps.load(), 0);
  bool switched = false;
  for (int t = 0; t < kThreads; ++t) {
    const auto& gen = generations[t];
    ASSERT_FALSE(gen.empty());
    EXPECT_EQ(gen.back(), 1) << "thread " << t << " never ran on the tuned model";
    for (size_t i = 1; i < gen.size(); ++i) {
      EXPECT_LE(gen[i - 1], gen[i]) << "thread " << t << " went back to the reference";
      switched = switched || (gen[i - 1] == 0 && gen[i] == 1);
    }
  }
  EXPECT_TRUE(switched) << "no thread saw the switch between two of its calls";
  EXPECT_EQ(jit.tuned()->decision().backend, c.key);
}

HONE_WITH_BACKENDS(Jit);

}  // namespace
}  // namespace hone::functional
