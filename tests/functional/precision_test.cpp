// Precision on every backend: f32 is proved by the tuning lifecycle
// (tune_test.cpp); reduced precision (bf16, f16) runs where a backend
// declares it, with that precision's looser declared tolerance, and is
// skipped with the reason where it does not.
#include <algorithm>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"

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

HONE_WITH_BACKENDS(Precision);

}  // namespace
}  // namespace hone::functional
