// Just-in-time tuning on every backend: calls are recorded while they run on
// the reference, the model tunes on them, later calls run on the choice, and
// a call outside the recorded bounds still runs (on the reference).
#include "hone/jit.h"
#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"

namespace hone::functional {
namespace {

class Jit : public BackendTest {};

HONE_MATRIX_TEST_P(Jit, RecordsCallsThenTunesOnThem, "jit.record", "jit.tune-from-recorded") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(81);
  Graph g = mlp(s);
  JitOptions o;
  o.record_calls = 3;
  o.tune = quick_tune_options();
  JitModel jit(g, std::shared_ptr<const Strategy>(pinned_strategy(c)), o);
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref && (*ref)->build(g));
  auto check = [&](int64_t batch) {
    const auto x = s.inputs(g, {{"batch", batch}});
    auto y = jit.infer(sample_from(g, x));
    ASSERT_TRUE(y) << y.error().to_string();
    auto expected = (*ref)->infer(x);
    ASSERT_TRUE(expected);
    EXPECT_TRUE(c.tolerance.assert_close(y->tensor(), (*expected)[0])) << "batch " << batch;
  };
  check(2);
  check(5);
  EXPECT_EQ(jit.recorded(), 2u);
  EXPECT_EQ(jit.tuned(), nullptr) << "tuned before the recorded count";
  check(3);  // the third call triggers tuning on batch sizes 2, 5 and 3
  ASSERT_NE(jit.tuned(), nullptr) << (jit.tuning_error() ? jit.tuning_error()->to_string()
                                                         : "no error");
  const TunedModel& t = *jit.tuned();
  EXPECT_EQ(t.spec().bounds.at("batch").min, 2);
  EXPECT_EQ(t.spec().bounds.at("batch").max, 5);
  const uint64_t before = t.backend().executions();
  check(4);
  EXPECT_EQ(t.backend().executions(), before + 1)
      << "the call after tuning did not run on " << c.key;
  EXPECT_TRUE(selected_backend(t, c.key, sample_from(g, s.inputs(g, {{"batch", 2}}))));
  check(9);  // outside the recorded bounds: still answered, on the reference
  EXPECT_EQ(jit.out_of_bounds_calls(), 1u);
  EXPECT_EQ(jit.recorded(), 3u);
}

HONE_WITH_BACKENDS(Jit);

}  // namespace
}  // namespace hone::functional
