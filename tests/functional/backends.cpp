#include "functional/backends.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace hone::functional {
namespace {

/// Test-only fault injection: wraps a real backend and adds 1 to every f32
/// output, so a broken backend's cells must turn failed.
class BrokenBackend final : public Backend {
 public:
  explicit BrokenBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  const BackendCapabilities& capabilities() const override { return inner_->capabilities(); }

 protected:
  Result<void> do_build(const Graph& g) override { return inner_->build(g); }
  Result<std::vector<Tensor>> do_infer(const std::vector<Tensor>& in) const override {
    HONE_TRY(auto out, inner_->infer(in));
    for (Tensor& t : out)
      if (t.dtype() == DType::kF32) {
        t = t.clone();
        for (float& v : t.span<float>()) v += 1.0f;
      }
    return out;
  }

 private:
  std::unique_ptr<Backend> inner_;
};

std::function<Result<std::unique_ptr<Backend>>()> registry_factory(const std::string& key) {
  return [key]() -> Result<std::unique_ptr<Backend>> {
    HONE_TRY(auto be, default_registry().create(key));
    const char* broken = std::getenv("HONE_BREAK_BACKEND");
    if (broken != nullptr && key == broken) return std::make_unique<BrokenBackend>(std::move(be));
    return be;
  };
}

struct SuiteDecl {
  std::string suite;
  std::vector<std::string> caps;
};
std::vector<SuiteDecl>& suites() {
  static std::vector<SuiteDecl> s;
  return s;
}

}  // namespace

testing::AssertionResult Tolerance::assert_close(const Tensor& actual,
                                                 const Tensor& expected) const {
  if (actual.dtype() != expected.dtype())
    return testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << " != expected "
                                       << dtype_name(expected.dtype());
  if (actual.shape() != expected.shape())
    return testing::AssertionFailure()
           << "shape " << actual.describe() << " != expected " << expected.describe();
  double worst_excess = -1;
  int64_t worst = -1;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = tensor_element_as_double(actual, i), e = tensor_element_as_double(expected, i);
    if (std::isnan(e) && std::isnan(a)) continue;
    const double err = std::abs(a - e);
    const double excess = std::isnan(err) ? INFINITY : err - (atol + rtol * std::abs(e));
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (worst >= 0 && worst_excess > 0) {
    const double a = tensor_element_as_double(actual, worst),
                 e = tensor_element_as_double(expected, worst);
    return testing::AssertionFailure()
           << "worst element " << worst << " of " << expected.describe() << ": " << a
           << " vs expected " << e << " (|diff| " << std::abs(a - e) << " > atol " << atol
           << " + rtol " << rtol << " * |e|)";
  }
  return testing::AssertionSuccess();
}

void PrintTo(const BackendCase& c, std::ostream* os) {
  *os << c.key;
}

std::string BackendCase::unavailable() const {
  const auto* entry = default_registry().find(key);
  return entry != nullptr ? entry->unavailable() : "backend '" + key + "' is not registered";
}

void BackendTest::SetUp() {
  if (const std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
}

const std::vector<BackendCase>& backend_cases() {
  static const std::vector<BackendCase> cases = {
      {"reference",
       registry_factory("reference"),
       Tolerance{1e-5, 1e-6},
       {"dynamic-shapes", "integer-io", "export"},
       "onnx"},
      {"onednn",
       registry_factory("onednn"),
       Tolerance{1e-4, 1e-5},
       {"dynamic-shapes", "integer-io"},
       ""},
      {"blas",
       registry_factory("blas"),
       Tolerance{1e-4, 1e-5},
       {"dynamic-shapes", "integer-io"},
       ""},
      {"aot",
       registry_factory("aot"),
       Tolerance{1e-4, 1e-5},
       {"dynamic-shapes", "export"},
       "native-so"},
      // Skipped, with the registry's reason, where there is no CUDA device.
      {"cuda",
       registry_factory("cuda"),
       Tolerance{1e-4, 1e-5},
       {"gpu", "dynamic-shapes", "integer-io"},
       ""},
      // Per-op selection: heavy nodes on the fastest CPU backend, the rest on onednn.
      {"select",
       registry_factory("select"),
       Tolerance{1e-4, 1e-5},
       {"dynamic-shapes", "integer-io"},
       ""},
  };
  return cases;
}

std::vector<BackendCase> cases_with(std::initializer_list<const char*> caps) {
  std::vector<BackendCase> out;
  for (const auto& c : backend_cases()) {
    bool all = true;
    for (const char* cap : caps) all = all && c.has(cap);
    if (all) out.push_back(c);
  }
  return out;
}

std::vector<std::string> check_backend_table(const BackendRegistry& registry,
                                             const std::vector<BackendCase>& cases,
                                             const std::vector<std::string>& matrix_backends) {
  std::vector<std::string> problems;
  std::set<std::string> keys;
  for (const auto& c : cases) {
    keys.insert(c.key);
    if (registry.find(c.key) == nullptr)
      problems.push_back("BACKENDS row '" + c.key + "' has no registered backend");
    if (c.has("export") && c.artifact_format.empty())
      problems.push_back("BACKENDS row '" + c.key +
                         "' declares 'export' without an artifact_format");
  }
  for (const auto& e : registry.entries())
    if (!keys.count(e.name))
      problems.push_back("registered backend '" + e.name + "' has no BACKENDS row");
  const std::set<std::string> columns(matrix_backends.begin(), matrix_backends.end());
  if (columns != keys) {
    std::ostringstream m;
    m << "features.json 'backends' must list exactly the BACKENDS keys (";
    for (const auto& k : keys) m << k << " ";
    m << ")";
    problems.push_back(m.str());
  }
  return problems;
}

bool declare_suite(const char* suite, std::initializer_list<const char*> caps) {
  SuiteDecl d{suite, {}};
  for (const char* c : caps) d.caps.emplace_back(c);
  suites().push_back(std::move(d));
  return true;
}

std::vector<std::string> empty_suites() {
  std::vector<std::string> out;
  for (const auto& s : suites()) {
    size_t n = 0;
    for (const auto& c : backend_cases()) {
      bool all = true;
      for (const auto& cap : s.caps) all = all && c.has(cap);
      n += all;
    }
    if (n == 0) {
      std::string caps;
      for (const auto& c : s.caps) caps += (caps.empty() ? "" : ", ") + c;
      out.push_back(s.suite + " (" + caps + ")");
    }
  }
  return out;
}

std::string case_name(const testing::TestParamInfo<BackendCase>& info) {
  std::string s = info.param.key;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

}  // namespace hone::functional
