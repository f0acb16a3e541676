// The BACKENDS table: one row per backend in the registry, with the
// capabilities the functional suite parametrizes over.
//
//   HONE_WITH_BACKENDS(Lifecycle);                    // every row
//   HONE_WITH_BACKENDS(Dynamic, "dynamic-shapes");    // rows with all these capabilities
//
// A registered backend without a row, or a row without a registered backend,
// fails the binary at start (main.cpp calls check_backend_table()).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hone/backend.h"
#include "hone/registry.h"
#include "hone/tensor.h"

namespace hone::functional {

/// assert_close: |actual - expected| <= atol + rtol * |expected| everywhere,
/// same dtype and shape, NaN only where expected has NaN. Reports the worst element.
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  testing::AssertionResult assert_close(const Tensor& actual, const Tensor& expected) const;
};

struct BackendCase {
  std::string key;  // the feature-matrix column
  std::function<Result<std::unique_ptr<Backend>>()> factory;
  Tolerance tolerance;
  std::set<std::string> capabilities;  // "dynamic-shapes", "tune", "save-load", "export", ...
  std::string artifact_format;         // required when capabilities has "export"
  bool has(const std::string& cap) const { return capabilities.count(cap) != 0; }
  /// Why this machine cannot run the backend ("no CUDA device"), or "".
  std::string unavailable() const;
};

/// The base of every test parameterized over BACKENDS rows: it skips, with
/// the reason the feature matrix shows, when this machine cannot run the
/// row's backend (BackendRegistry::Entry::unavailable_reason).
class BackendTest : public testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override;
};
void PrintTo(const BackendCase& c, std::ostream* os);

/// Every row. HONE_BREAK_BACKEND=<key> (a test-only flag) makes that row's
/// backend perturb its outputs, to show the suite and the matrix catch it.
const std::vector<BackendCase>& backend_cases();
/// Rows that have every capability in `caps`.
std::vector<BackendCase> cases_with(std::initializer_list<const char*> caps);
/// Registry and table agree, exports declare a format, and the keys are the
/// matrix's backend columns. Returns the problems, empty when consistent.
std::vector<std::string> check_backend_table(const BackendRegistry& registry,
                                             const std::vector<BackendCase>& cases,
                                             const std::vector<std::string>& matrix_backends);

/// Records HONE_WITH_BACKENDS(Suite, caps...) so main() can reject empty sets.
bool declare_suite(const char* suite, std::initializer_list<const char*> caps);
/// Suites whose capability set selects no row, as "Suite (caps)".
std::vector<std::string> empty_suites();

std::string case_name(const testing::TestParamInfo<BackendCase>& info);

}  // namespace hone::functional

#define HONE_WITH_BACKENDS(Suite, ...)                                                             \
  static const bool hone_suite_##Suite = ::hone::functional::declare_suite(#Suite, {__VA_ARGS__}); \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                                        \
                           ::testing::ValuesIn(::hone::functional::cases_with({__VA_ARGS__})),     \
                           ::hone::functional::case_name);                                         \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite)
