#include "functional/helpers.h"

#include <atomic>
#include <cstring>

#include "functional/models/toy_models.h"
#include "hone/registry.h"

namespace hone::functional {

Result<std::unique_ptr<Backend>> build_backend(const BackendCase& c, const Graph& g) {
  HONE_TRY(auto be, c.factory());
  HONE_CHECK_OK(be->build(g));
  return be;
}

testing::AssertionResult matches_reference(const BackendCase& c, const Graph& g,
                                           const std::vector<Tensor>& inputs, const Backend& be) {
  auto ref = default_registry().create("reference");
  if (!ref) return testing::AssertionFailure() << ref.error().to_string();
  if (auto r = (*ref)->build(g); !r) return testing::AssertionFailure() << r.error().to_string();
  auto expected = (*ref)->infer(inputs);
  if (!expected)
    return testing::AssertionFailure() << "reference: " << expected.error().to_string();
  auto actual = be.infer(inputs);
  if (!actual)
    return testing::AssertionFailure() << be.name() << ": " << actual.error().to_string();
  if (actual->size() != expected->size())
    return testing::AssertionFailure()
           << actual->size() << " outputs, reference has " << expected->size();
  for (size_t i = 0; i < expected->size(); ++i) {
    auto r = c.tolerance.assert_close((*actual)[i], (*expected)[i]);
    if (!r) return testing::AssertionFailure() << "output " << i << ": " << r.message();
  }
  return testing::AssertionSuccess();
}

namespace {
Tensor slice_batch(const Tensor& t, int64_t i) {
  std::vector<int64_t> shape = t.shape();
  shape[0] = 1;
  Tensor out = Tensor::zeros(t.dtype(), shape);
  const size_t bytes = out.nbytes();
  std::memcpy(out.raw(), static_cast<const char*>(t.raw()) + bytes * i, bytes);
  return out;
}
}  // namespace

testing::AssertionResult batch_consistent(const BackendCase& c, const Backend& be,
                                          const std::vector<Tensor>& batch_inputs) {
  auto whole = be.infer(batch_inputs);
  if (!whole) return testing::AssertionFailure() << whole.error().to_string();
  const int64_t n = batch_inputs.at(0).dim(0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Tensor> one;
    for (const Tensor& t : batch_inputs) one.push_back(slice_batch(t, i));
    auto part = be.infer(one);
    if (!part) return testing::AssertionFailure() << part.error().to_string();
    for (size_t o = 0; o < part->size(); ++o) {
      auto r = c.tolerance.assert_close((*part)[o], slice_batch((*whole)[o], i));
      if (!r)
        return testing::AssertionFailure()
               << "sample " << i << " output " << o << ": " << r.message();
    }
  }
  return testing::AssertionSuccess();
}

namespace {
std::atomic<int> g_created{0};
}  // namespace

const BackendRegistry& case_registry() {
  static const BackendRegistry reg = [] {
    BackendRegistry r;
    for (const BackendCase& c : backend_cases()) {
      const auto* entry = default_registry().find(c.key);
      // check_backend_table() at start-up guarantees every row is registered.
      auto added = r.add({c.key, entry ? entry->description : c.key,
                          entry ? entry->capabilities : BackendCapabilities{},
                          [factory = c.factory] {
                            ++g_created;
                            auto be = factory();
                            return be ? std::move(*be) : std::unique_ptr<Backend>();
                          },
                          entry ? entry->unavailable_reason : std::function<std::string()>()});
      (void)added;
    }
    return r;
  }();
  return reg;
}

int case_backends_created() {
  return g_created.load();
}

std::unique_ptr<Strategy> pinned_strategy(const BackendCase& c) {
  return std::make_unique<OneBackend>(c.key, /*fallback_when_slower=*/false);
}

TuneOptions quick_tune_options() {
  TuneOptions o;
  o.registry = &case_registry();
  o.threads = 1;
  o.use_cache = false;
  o.profile.warmup = 1;
  o.profile.min_runs = 5;
  o.profile.window = 5;
  o.profile.max_runs = 20;
  o.profile.max_seconds = 5;
  return o;
}

Sample sample_from(const Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<std::pair<std::string, SampleValue>> leaves;
  for (size_t i = 0; i < inputs.size(); ++i)
    leaves.emplace_back(g.value(g.inputs()[i]).name, SampleValue(inputs[i]));
  auto s = sample_from_leaves(leaves);
  if (!s) throw std::runtime_error("sample_from: " + s.error().to_string());
  return *s;
}

testing::AssertionResult selected_backend(const TunedModel& tuned, const std::string& key,
                                          const Sample& probe) {
  if (tuned.decision().backend != key)
    return testing::AssertionFailure() << "tuning chose '" << tuned.decision().backend << "', not '"
                                       << key << "': " << tuned.decision().reason;
  if (tuned.backend().name() != key)
    return testing::AssertionFailure()
           << "the tuned model runs on '" << tuned.backend().name() << "'";
  const uint64_t before = tuned.backend().executions();
  auto y = tuned.infer(probe);
  if (!y) return testing::AssertionFailure() << y.error().to_string();
  if (tuned.backend().executions() != before + 1)
    return testing::AssertionFailure()
           << "backend '" << key << "' did not count the inference: its kernels did not run";
  return testing::AssertionSuccess();
}

testing::AssertionResult assert_matches_reference(const TunedModel& tuned, const Graph& g,
                                                  const Tolerance& tolerance,
                                                  const std::vector<int64_t>& batch_sizes,
                                                  const std::vector<uint64_t>& seeds,
                                                  const std::map<std::string, int64_t>& dims) {
  auto ref = default_registry().create("reference");
  if (!ref) return testing::AssertionFailure() << ref.error().to_string();
  if (auto r = (*ref)->build(g); !r) return testing::AssertionFailure() << r.error().to_string();
  for (uint64_t seed : seeds)
    for (int64_t batch : batch_sizes) {
      Seeded s(seed);
      auto d = dims;
      d["batch"] = batch;
      auto x = s.inputs(g, d);
      auto expected = (*ref)->infer(x);
      auto actual = tuned.infer_flat(x);
      if (!expected || !actual)
        return testing::AssertionFailure()
               << "batch " << batch << " seed " << seed << ": "
               << (!expected ? expected.error() : actual.error()).to_string();
      for (size_t i = 0; i < expected->size(); ++i) {
        auto r = tolerance.assert_close((*actual)[i], (*expected)[i]);
        if (!r)
          return testing::AssertionFailure()
                 << "batch " << batch << " seed " << seed << " output " << i << ": " << r.message();
      }
    }
  return testing::AssertionSuccess();
}

}  // namespace hone::functional
