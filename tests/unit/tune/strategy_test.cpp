// Each strategy's choice on backends whose speed is controlled (they sleep),
// the baseline gate, the latency budget failing, FirstWins skipping a failing
// backend, OneBackend surfacing its errors, dry runs and batch-size search.
#include <gtest/gtest.h>

#include "hone/strategy.h"
#include "hone/tune.h"
#include "tune/tune_test_util.h"

namespace hone {
namespace {

using testing_tune::quick_options;
using testing_tune::sample_of;
using testing_tune::sleep_registry;
using testing_tune::SleepSpec;
using testing_tune::tiny_mlp;

const std::vector<Sample> kSamples = {sample_of(1), sample_of(4, 0.1f)};

Result<TunedModel> tune_with(const BackendRegistry& reg, const Strategy& s, TuneOptions o) {
  o.registry = &reg;
  return tune(tiny_mlp(), kSamples, s, o);
}

BackendRegistry three_speeds() {
  return sleep_registry({{"reference", {.base_us = 3000}},
                         {"fast", {.base_us = 300}},
                         {"slow", {.base_us = 1500}},
                         {"broken", {.fail_build = true}},
                         {"wrong", {.base_us = 100, .wrong = true}}});
}

TEST(Strategy, MaxThroughputPicksTheFastestCorrectBackend) {
  auto reg = three_speeds();
  auto m = tune_with(reg, MaxThroughput({"slow", "fast", "broken", "wrong"}), quick_options(reg));
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->decision().backend, "fast");
  EXPECT_EQ(m->backend().name(), "fast");
  EXPECT_FALSE(m->decision().baseline_kept);
  EXPECT_NE(m->decision().losers.at("slow").find("throughput"), std::string::npos);
  EXPECT_NE(m->decision().losers.at("broken").find("cannot build"), std::string::npos);
  EXPECT_NE(m->decision().losers.at("wrong").find("wrong results"), std::string::npos);
  // The wrong backend's report names the worst element and both values.
  for (const auto& c : m->report().candidates)
    if (c.backend == "wrong") {
      EXPECT_FALSE(c.correctness.passed);
      EXPECT_GE(c.correctness.worst_index, 0);
      EXPECT_NEAR(c.correctness.actual - c.correctness.expected, 1.0, 1e-5);
    }
  // Measured at both batch sizes the samples span.
  EXPECT_EQ(m->report().batch_sizes, (std::vector<int64_t>{1, 4}));
  auto y = m->infer(sample_of(3));
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->tensor().shape(), (std::vector<int64_t>{3, 3}));
}

// The gate compares a candidate's p50 with the reference's one-shot runs, and
// a loaded machine wakes a sleeper milliseconds late: the gaps below are wide
// (20x, 10x) and the margins far from them, so only a delay of tens of
// milliseconds could flip a choice.
TEST(Strategy, BaselineGateKeepsTheReferenceWhenNothingBeatsIt) {
  auto reg = sleep_registry({{"reference", {.base_us = 1000}}, {"slow", {.base_us = 20000}}});
  auto m = tune_with(reg, MaxThroughput({"slow"}), quick_options(reg));
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->decision().backend, "reference");
  EXPECT_TRUE(m->decision().baseline_kept);
  EXPECT_NE(m->decision().reason.find("baseline gate"), std::string::npos) << m->decision().reason;
}

TEST(Strategy, BaselineGateNeedsTheConfiguredMargin) {
  // 10x faster than the reference, but the gate asks for +2000% (21x).
  auto reg = sleep_registry({{"reference", {.base_us = 20000}}, {"fast", {.base_us = 2000}}});
  auto o = quick_options(reg);
  o.baseline_gate_percent = 2000;
  auto m = tune_with(reg, MinLatency({"fast"}), o);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->decision().backend, "reference");
  EXPECT_TRUE(m->decision().baseline_kept);
  o.baseline_gate_percent = 20;
  auto m2 = tune_with(reg, MinLatency({"fast"}), o);
  ASSERT_TRUE(m2) << m2.error().to_string();
  EXPECT_EQ(m2->decision().backend, "fast");
}

TEST(Strategy, FirstWinsSkipsAFailingBackendAndStopsAtTheFirstGoodOne) {
  auto reg = three_speeds();
  const int builds_before = testing_tune::sleep_builds().load();
  auto m = tune_with(reg, FirstWins({"broken", "wrong", "slow", "fast"}), quick_options(reg));
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->decision().backend, "slow");  // first to pass and beat the reference
  EXPECT_NE(m->decision().losers.at("broken").find("cannot build"), std::string::npos);
  EXPECT_NE(m->decision().losers.at("fast").find("not tried"), std::string::npos);
  // reference + broken + wrong + slow were built; fast never was.
  EXPECT_EQ(testing_tune::sleep_builds().load() - builds_before, 4);
}

TEST(Strategy, OneBackendSurfacesItsBuildAndCorrectnessErrors) {
  auto reg = three_speeds();
  auto broken = tune_with(reg, OneBackend("broken"), quick_options(reg));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().to_string().find("cannot build anything"), std::string::npos)
      << broken.error().to_string();
  auto wrong = tune_with(reg, OneBackend("wrong"), quick_options(reg));
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("wrong results"), std::string::npos)
      << wrong.error().to_string();
  auto unknown = tune_with(reg, OneBackend("nope"), quick_options(reg));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kNotFound);
}

TEST(Strategy, OneBackendFallsBackToTheReferenceOnlyWhenSlower) {
  auto reg = sleep_registry(
      {{"reference", {.base_us = 300}}, {"slow", {.base_us = 3000}}, {"fast", {.base_us = 30}}});
  auto slow = tune_with(reg, OneBackend("slow"), quick_options(reg));
  ASSERT_TRUE(slow) << slow.error().to_string();
  EXPECT_EQ(slow->decision().backend, "reference");
  EXPECT_NE(slow->decision().reason.find("slower"), std::string::npos);
  auto fast = tune_with(reg, OneBackend("fast"), quick_options(reg));
  ASSERT_TRUE(fast) << fast.error().to_string();
  EXPECT_EQ(fast->decision().backend, "fast");
}

TEST(Strategy, MinLatencyAndMaxThroughputCanDisagree) {
  // "lowlat" is fast at batch 1 but costs a lot per sample; "bulk" pays a
  // fixed cost per call and little per sample.
  auto reg = sleep_registry({{"reference", {.base_us = 8000, .per_sample_us = 3000}},
                             {"lowlat", {.base_us = 100, .per_sample_us = 500}},
                             {"bulk", {.base_us = 1500, .per_sample_us = 50}}});
  auto lat = tune_with(reg, MinLatency({"lowlat", "bulk"}), quick_options(reg));
  ASSERT_TRUE(lat) << lat.error().to_string();
  EXPECT_EQ(lat->decision().backend, "lowlat");
  auto thr = tune_with(reg, MaxThroughput({"lowlat", "bulk"}), quick_options(reg));
  ASSERT_TRUE(thr) << thr.error().to_string();
  EXPECT_EQ(thr->decision().backend, "bulk");
}

TEST(Strategy, LatencyBudgetPicksTheBestFitAndFailsWhenNothingFits) {
  auto reg = sleep_registry({{"reference", {.base_us = 8000, .per_sample_us = 3000}},
                             {"lowlat", {.base_us = 100, .per_sample_us = 500}},
                             {"bulk", {.base_us = 1500, .per_sample_us = 50}}});
  // 1 ms: only lowlat at batch 1 (0.6 ms) fits; bulk needs 1.55 ms per call.
  auto fit = tune_with(reg, LatencyBudget(1.0, {"lowlat", "bulk"}), quick_options(reg));
  ASSERT_TRUE(fit) << fit.error().to_string();
  EXPECT_EQ(fit->decision().backend, "lowlat");
  auto none = tune_with(reg, LatencyBudget(0.05, {"lowlat", "bulk"}), quick_options(reg));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(none.error().message().find("fits in 0.05 ms"), std::string::npos)
      << none.error().message();
  EXPECT_NE(none.error().message().find("lowlat at batch 1"), std::string::npos)
      << none.error().message();
}

TEST(Strategy, DryRunBuildsNothing) {
  auto reg = three_speeds();
  const int before = testing_tune::sleep_builds().load();
  auto lines =
      dry_run(tiny_mlp(), kSamples, MaxThroughput({"fast", "slow"}, true), quick_options(reg));
  ASSERT_TRUE(lines) << lines.error().to_string();
  EXPECT_EQ(testing_tune::sleep_builds().load(), before);
  std::string all;
  for (const auto& l : *lines) all += l + "\n";
  EXPECT_NE(all.find("candidate fast"), std::string::npos) << all;
  EXPECT_NE(all.find("candidate slow"), std::string::npos) << all;
  EXPECT_NE(all.find("batch-size search"), std::string::npos) << all;
  EXPECT_NE(all.find("batch 1, 4"), std::string::npos) << all;
}

TEST(Strategy, BatchSizeSearchStopsWhenThroughputStopsGrowing) {
  // 200 us per call + 100 us per sample: throughput b / (0.2 + 0.1 b) ms
  // levels off near 10 samples/ms, so growth drops under 5% around batch 64.
  auto reg = sleep_registry({{"reference", {.base_us = 4000, .per_sample_us = 1000}},
                             {"fast", {.base_us = 200, .per_sample_us = 100}}});
  auto o = quick_options(reg);
  o.batch_search.max_batch = 1024;
  auto m = tune_with(reg, MaxThroughput({"fast"}, /*search_batch=*/true), o);
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_EQ(m->report().batch_searches.size(), 1u);
  const BatchSearchResult& s = m->report().batch_searches[0];
  EXPECT_NE(s.stopped_because.find("less than 5%"), std::string::npos) << s.stopped_because;
  ASSERT_GE(s.points.size(), 5u);
  EXPECT_LT(s.points.back().batch, 1024);
  EXPECT_GE(s.best_batch, 16);
  // The chosen backend's figures include the searched batch sizes.
  EXPECT_GT(m->decision().figures.size(), 2u);
}

TEST(Strategy, AnOptInBackendIsTriedOnlyWhenNamed) {
  auto reg = sleep_registry({{"reference", {.base_us = 3000}}, {"fast", {.base_us = 300}}});
  const BackendRegistry::Entry* fast = reg.find("fast");
  ASSERT_NE(fast, nullptr);
  BackendRegistry::Entry opt_in = *fast;
  opt_in.name = "optin";
  opt_in.opt_in = true;
  ASSERT_TRUE(reg.add(opt_in));
  EXPECT_EQ(reg.tried_by_default(), (std::vector<std::string>{"reference", "fast"}));
  auto m = tune_with(reg, MaxThroughput(), quick_options(reg));
  ASSERT_TRUE(m) << m.error().to_string();
  for (const auto& c : m->report().candidates) EXPECT_NE(c.backend, "optin");
  auto named = tune_with(reg, OneBackend("optin"), quick_options(reg));
  ASSERT_TRUE(named) << named.error().to_string();
  EXPECT_EQ(named->decision().backend, "optin");
}

TEST(Strategy, ParseStrategyNamesWhatIsWrong) {
  EXPECT_TRUE(parse_strategy("latency-budget:2.5", {}));
  auto bad = parse_strategy("latency-budget:fast", {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("milliseconds"), std::string::npos);
  auto one = parse_strategy("one-backend", {"a", "b"});
  ASSERT_FALSE(one);
  EXPECT_NE(one.error().message().find("exactly one"), std::string::npos);
  auto unknown = parse_strategy("fastest", {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("first-wins"), std::string::npos);
}

}  // namespace
}  // namespace hone
