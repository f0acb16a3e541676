// Topology across devices: a two-model pipeline whose stages run on two
// devices, a CPU backend and a CUDA one, with each stage's outputs handed to
// the next (host tensors; the CUDA backend copies them to and from its device).
// The row's backend runs the head; the encoder runs on the other device's
// partner, so the cuda row hands CPU outputs to the GPU and every CPU row
// hands GPU outputs to the CPU.
#include <algorithm>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/pipeline.h"

namespace hone::functional {
namespace {

class Topology : public BackendTest {};

bool runs_on(const std::string& key, Device d) {
  const auto* entry = default_registry().find(key);
  if (entry == nullptr) return false;
  const auto& ds = entry->capabilities.devices;
  return std::find(ds.begin(), ds.end(), d) != ds.end();
}

/// The BACKENDS row that runs the other stage: for a CUDA row, onednn when it
/// is registered and this machine can run it, else the reference; for a CPU
/// row, the first CUDA row. nullptr, with `why`, when there is none to run.
const BackendCase* partner_of(const BackendCase& c, std::string& why) {
  const BackendCase* found = nullptr;
  if (runs_on(c.key, Device::kCuda)) {
    for (const char* key : {"onednn", kReferenceBackend})
      for (const auto& p : backend_cases())
        if (found == nullptr && p.key == key && runs_on(key, Device::kCpu) &&
            p.unavailable().empty())
          found = &p;
    if (found == nullptr) why = "no CPU backend can run the other stage of a two-device pipeline";
    return found;
  }
  for (const auto& p : backend_cases())
    if (found == nullptr && runs_on(p.key, Device::kCuda)) found = &p;
  if (found == nullptr) {
    why =
        "a two-device pipeline needs a CUDA device for the other stage, and no CUDA backend is "
        "registered";
    return nullptr;
  }
  if (const std::string u = found->unavailable(); !u.empty()) {
    why = "a two-device pipeline needs a CUDA device for the other stage (backend '" + found->key +
          "'): " + u;
    return nullptr;
  }
  return found;
}

HONE_MATRIX_TEST_P(Topology, PipelineStagesOnTwoDevices, "topology.{backend}/multi-device") {
  const BackendCase& c = GetParam();
  std::string why;
  const BackendCase* other = partner_of(c, why);
  if (other == nullptr) GTEST_SKIP() << why;
  Seeded s = seeded(53);
  Pipeline p, plain;
  auto made = encoder_head_pipelines(s, {&p, &plain});
  ASSERT_TRUE(made) << made.error().to_string();
  const Graph& head = made->head;
  const std::vector<TensorMap>& samples = made->samples;
  // Encoder first: the head is then tuned on what the other device's encoder gives it.
  auto tuned_enc = p.tune_stage("encoder", samples, *pinned_strategy(*other), quick_tune_options());
  ASSERT_TRUE(tuned_enc) << tuned_enc.error().to_string();
  auto tuned_head = p.tune_stage("head", samples, *pinned_strategy(c), quick_tune_options());
  ASSERT_TRUE(tuned_head) << tuned_head.error().to_string();
  const auto placement = p.placement();
  ASSERT_EQ(placement.size(), 2u);
  EXPECT_EQ(placement[0], (std::pair<std::string, std::string>{"encoder", other->key}));
  EXPECT_EQ(placement[1], (std::pair<std::string, std::string>{"head", c.key}));
  // The two stages' backends are on different devices, one of them CUDA.
  const Backend* enc_be = p.backend("encoder");
  const Backend* head_be = p.backend("head");
  ASSERT_TRUE(enc_be != nullptr && head_be != nullptr);
  const auto on = [](const Backend* be, Device d) {
    const auto& ds = be->capabilities().devices;
    return std::find(ds.begin(), ds.end(), d) != ds.end();
  };
  EXPECT_TRUE(on(enc_be, Device::kCuda) != on(head_be, Device::kCuda))
      << "encoder on " << enc_be->name() << ", head on " << head_be->name()
      << ": exactly one stage must run on CUDA";
  const uint64_t enc_before = enc_be->executions(), head_before = head_be->executions();
  const TensorMap x = {{"x", s.uniform({3, 12})}};
  auto y = p.run(x);
  auto expected = plain.run(x);
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_TRUE(expected) << expected.error().to_string();
  EXPECT_EQ(enc_be->executions(), enc_before + 1) << "the encoder did not run on " << other->key;
  EXPECT_EQ(head_be->executions(), head_before + 1) << "the head did not run on " << c.key;
  // Each stage against the reference on what it received: the encoder on x,
  // the head on the features the other device handed it.
  EXPECT_TRUE(other->tolerance.assert_close(y->at("features"), expected->at("features")));
  auto ref_head = default_registry().create(kReferenceBackend);
  ASSERT_TRUE(ref_head && (*ref_head)->build(head));
  auto head_expected = (*ref_head)->infer({y->at("features")});
  ASSERT_TRUE(head_expected) << head_expected.error().to_string();
  EXPECT_TRUE(c.tolerance.assert_close(y->at("probs"), (*head_expected)[0]));
  // End to end against the reference pipeline: the encoder's error passes
  // through the head, so the looser row's tolerance, ten times.
  Tolerance end_to_end{10 * std::max(c.tolerance.rtol, other->tolerance.rtol),
                       10 * std::max(c.tolerance.atol, other->tolerance.atol)};
  EXPECT_TRUE(end_to_end.assert_close(y->at("probs"), expected->at("probs")));
}

HONE_WITH_BACKENDS(Topology);

}  // namespace
}  // namespace hone::functional
