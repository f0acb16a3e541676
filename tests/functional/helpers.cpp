#include "functional/helpers.h"

#include <cstring>

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
  if (!expected) return testing::AssertionFailure() << "reference: " << expected.error().to_string();
  auto actual = be.infer(inputs);
  if (!actual) return testing::AssertionFailure() << be.name() << ": " << actual.error().to_string();
  if (actual->size() != expected->size())
    return testing::AssertionFailure() << actual->size() << " outputs, reference has " << expected->size();
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
      if (!r) return testing::AssertionFailure() << "sample " << i << " output " << o << ": " << r.message();
    }
  }
  return testing::AssertionSuccess();
}

}  // namespace hone::functional
