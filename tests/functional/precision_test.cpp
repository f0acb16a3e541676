// Precision on every backend: f32 is proved by the tuning lifecycle
// (tune_test.cpp); reduced precision (bf16, f16) runs where a backend
// declares it, with that precision's looser declared tolerance, and is
// skipped with the reason where it does not; mixed precision (tune's
// bisection for the nodes to keep in fp32) where a backend has it.
#include <algorithm>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "unit/tune/mixed_precision_models.h"

namespace hone::functional {
namespace {

class Precision : public BackendTest {
 protected:
  void run_reduced(hone::Precision precision) {
    const BackendCase& c = GetParam();
    const auto* entry = case_registry().find(c.key);
    ASSERT_NE(entry, nullptr);
    const auto& ps = entry->capabilities.precisions;
    const std::string name(to_string(precision));
    if (std::find(ps.begin(), ps.end(), precision) == ps.end())
      HONE_SKIP("backend '" + c.key + "' has no " + name + " kernels" +
                (entry->capabilities.precision_needs.contains(precision)
                     ? " here (it needs " + entry->capabilities.precision_needs.at(precision) + ")"
                     : std::string()));
    Seeded s = seeded(71);
    Graph g = conv_net(s);
    std::vector<Sample> samples;
    for (int64_t b : {1, 4}) samples.push_back(sample_from(g, s.inputs(g, {{"batch", b}})));
    TuneOptions o = quick_tune_options();
    // The gate then judges it by this precision's tolerance.
    o.configs[c.key]["precision"] = name;
    auto tuned = tune(g, samples, *pinned_strategy(c), o);
    ASSERT_TRUE(tuned) << tuned.error().to_string();
    EXPECT_TRUE(selected_backend(*tuned, c.key, samples[1]));
    const hone::Tolerance t = hone::Tolerance::for_precision(precision);
    EXPECT_TRUE(assert_matches_reference(*tuned, g, Tolerance{t.rtol, t.atol}, {1, 4}, {2}));
  }
};

HONE_MATRIX_TEST_P(Precision, Bf16WithItsTolerance, "precision.bf16") {
  run_reduced(hone::Precision::kBf16);
}
HONE_MATRIX_TEST_P(Precision, F16WithItsTolerance, "precision.f16") {
  run_reduced(hone::Precision::kFp16);
}

// Mixed precision by bisection: the logits model fails in bf16 (logits near
// 500 whose rounding moves the probabilities by ~10%); tune keeps the nodes
// that need it in fp32, names them, and that plan passes the gate.
HONE_MATRIX_TEST_P(Precision, MixedByBisection, "precision.mixed") {
  const BackendCase& c = GetParam();
  const auto* entry = case_registry().find(c.key);
  ASSERT_NE(entry, nullptr);
  if (!entry->capabilities.mixed_precision)
    HONE_SKIP("backend '" + c.key + "' cannot keep single nodes in fp32 (no mixed precision)");
  const auto& ps = entry->capabilities.precisions;
  if (std::find(ps.begin(), ps.end(), hone::Precision::kBf16) == ps.end())
    HONE_SKIP("backend '" + c.key + "' has no bf16 kernels" +
              (entry->capabilities.precision_needs.contains(hone::Precision::kBf16)
                   ? " here (it needs " +
                         entry->capabilities.precision_needs.at(hone::Precision::kBf16) + ")"
                   : std::string()));
  const Graph g = mixed_test::logits_model();
  const std::vector<Sample> samples{mixed_test::sample(1, 1), mixed_test::sample(4, 2)};
  TuneOptions o = quick_tune_options();
  o.configs[c.key]["precision"] = "bf16";
  // cuda times TF32 SGEMM against the bf16 product per shape; every product
  // in bf16 makes the failure certain.
  if (auto be = case_registry().create(c.key); be && (*be)->config().has("gemm_select"))
    o.configs[c.key]["gemm_select"] = "reduced";
  auto tuned = tune(g, samples, *pinned_strategy(c), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  const TuneReport& r = tuned->report();
  const CandidateResult* pure = mixed_test::find(r, c.key + " (no fp32 nodes)");
  const CandidateResult* mixed = mixed_test::find(r, c.key);
  ASSERT_TRUE(pure && mixed) << r.table();
  EXPECT_FALSE(pure->correctness.passed) << r.table();
  EXPECT_TRUE(mixed->usable()) << r.table();
  const std::string logits = mixed_test::logits_matmul(g);
  EXPECT_NE(std::find(mixed->fp32_nodes.begin(), mixed->fp32_nodes.end(), logits),
            mixed->fp32_nodes.end())
      << r.table();
  EXPECT_NE(r.table().find("fp32 nodes: "), std::string::npos) << r.table();
}

HONE_WITH_BACKENDS(Precision);

}  // namespace
}  // namespace hone::functional
