// dist::reduce_candidate and dist::decision_hash: how the ranks' results of
// one candidate become the group's, without MPI.
#include "dist/reduce.h"

#include <gtest/gtest.h>

namespace hone::dist {
namespace {

LatencyFigures at(int64_t batch, double p50_ms, int runs = 20) {
  LatencyFigures f;
  f.batch = batch;
  f.p50_ms = p50_ms;
  f.p90_ms = p50_ms * 1.1;
  f.p99_ms = p50_ms * 1.2;
  f.mean_ms = p50_ms;
  f.min_ms = p50_ms * 0.9;
  f.max_ms = p50_ms * 1.3;
  f.throughput = static_cast<double>(batch) * 1000.0 / p50_ms;
  f.runs = runs;
  f.converged = true;
  return f;
}

CandidateResult measured(std::vector<LatencyFigures> figures) {
  CandidateResult c;
  c.backend = "onednn";
  c.config_key = "k";
  c.built = true;
  c.checked = true;
  c.figures = std::move(figures);
  return c;
}

TEST(DistReduce, ThroughputIsTheMinimumAndLatencyTheMaximum) {
  auto a = measured({at(1, 2.0, 30), at(8, 10.0)});
  auto b = measured({at(1, 3.0, 25), at(8, 8.0)});
  b.figures[1].converged = false;
  const CandidateResult g = reduce_candidate({a, b});
  ASSERT_EQ(g.figures.size(), 2u);
  EXPECT_DOUBLE_EQ(g.figures[0].p50_ms, 3.0);
  EXPECT_DOUBLE_EQ(g.figures[0].p99_ms, 3.0 * 1.2);
  EXPECT_DOUBLE_EQ(g.figures[0].throughput, 1000.0 / 3.0);
  EXPECT_EQ(g.figures[0].runs, 25);
  EXPECT_DOUBLE_EQ(g.figures[1].p50_ms, 10.0);
  EXPECT_DOUBLE_EQ(g.figures[1].throughput, 800.0);
  EXPECT_FALSE(g.figures[1].converged);
  EXPECT_TRUE(g.usable());
}

TEST(DistReduce, ABatchSomeRankLacksIsDropped) {
  const CandidateResult g =
      reduce_candidate({measured({at(1, 2.0), at(8, 9.0)}), measured({at(1, 2.5)})});
  ASSERT_EQ(g.figures.size(), 1u);
  EXPECT_EQ(g.figures[0].batch, 1);
}

TEST(DistReduce, CorrectOnlyWhenCorrectEverywhereAndTheFailingRankIsNamed) {
  auto a = measured({at(1, 1.0)});
  auto b = measured({at(1, 1.0)});
  b.correctness.passed = false;
  b.correctness.message = "output 'y' element 3: 0.5 vs 0.25";
  const CandidateResult g = reduce_candidate({a, b});
  EXPECT_FALSE(g.correctness.passed);
  EXPECT_EQ(g.correctness.message, "rank 1: output 'y' element 3: 0.5 vs 0.25");
  EXPECT_FALSE(g.usable());
}

TEST(DistReduce, TheFirstFailingRanksErrorSpeaksForTheGroup) {
  auto a = measured({at(1, 1.0)});
  auto b = measured({});
  auto c = measured({});
  b.built = false;
  b.error = Error(ErrorCode::kUnsupportedHardware, "no C++ compiler");
  c.error = Error(ErrorCode::kInternal, "later");
  const CandidateResult g = reduce_candidate({a, b, c});
  ASSERT_TRUE(g.error.has_value());
  EXPECT_EQ(g.error->code(), ErrorCode::kUnsupportedHardware);
  EXPECT_EQ(g.error->message(), "rank 1: no C++ compiler");
  EXPECT_FALSE(g.built);
  EXPECT_TRUE(g.figures.empty());  // rank 1 measured nothing
}

TEST(DistReduce, ASkipOnAnyRankSkipsAndCacheCountsOnlyWhenEveryRankHit) {
  auto a = measured({at(1, 1.0)});
  a.from_cache = true;
  auto b = measured({at(1, 1.0)});
  EXPECT_FALSE(reduce_candidate({a, b}).from_cache);
  b.skipped = "the time budget of 1 s was spent before it was reached";
  const CandidateResult g = reduce_candidate({a, b});
  EXPECT_EQ(g.skipped, "rank 1: the time budget of 1 s was spent before it was reached");
  EXPECT_FALSE(g.usable());
}

TEST(DistReduce, OneRankIsItsOwnResult) {
  const auto a = measured({at(1, 1.5)});
  EXPECT_EQ(reduce_candidate({a}).json(), a.json());
}

TEST(DistReduce, EveryRankReducingTheSameResultsGetsTheSameBytes) {
  const auto a = measured({at(1, 2.0), at(8, 10.0)});
  const auto b = measured({at(1, 3.0), at(8, 8.0)});
  EXPECT_EQ(reduce_candidate({a, b}).json(), reduce_candidate({a, b}).json());
}

TEST(DistCandidateJson, WhatRanksSendKeepsTheErrorAsItWas) {
  auto c = measured({at(1, 2.0), at(8, 9.5)});
  Error e(ErrorCode::kUnsupportedHardware, "no C++ compiler");
  e.add_context("while building");
  c.error = e;
  auto back = CandidateResult::from_json(c.json());
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_TRUE(back->error.has_value());
  EXPECT_EQ(back->error->code(), ErrorCode::kUnsupportedHardware);
  // The code's name is not repeated ("unsupported on this machine: unsupported ...").
  EXPECT_EQ(back->error->to_string(), e.to_string());
  EXPECT_EQ(back->figures.size(), 2u);
  EXPECT_DOUBLE_EQ(back->figures[1].throughput, c.figures[1].throughput);
  EXPECT_FALSE(CandidateResult::from_json("{\"figures\": 1}"));
}

TEST(DistDecisionHash, ChangesWithTheBackendTheFiguresOrThePlan) {
  Decision d;
  d.backend = "aot";
  d.config_key = "k";
  d.kernel_plan = {"gemm.f32.onednn"};
  d.figures = {at(1, 1.0)};
  const std::string h = decision_hash(d);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, decision_hash(d));
  Decision other = d;
  other.backend = "blas";
  EXPECT_NE(decision_hash(other), h);
  other = d;
  other.figures[0].p50_ms = 1.0000001;
  EXPECT_NE(decision_hash(other), h);
  other = d;
  other.kernel_plan.push_back("conv2d.f32.onednn.brgemm");
  EXPECT_NE(decision_hash(other), h);
}

}  // namespace
}  // namespace hone::dist
