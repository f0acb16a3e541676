// The functional suite's main: checks the BACKENDS table against the
// registry, resolves every feature-matrix marker (also when only listing
// tests), rejects empty capability sets, and records cell results.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "functional/backends.h"
#include "functional/matrix.h"
#include "hone-matrix/matrix_page.h"
#include "hone/logging.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  hone::set_log_level_from_env();

  std::ifstream in(HONE_FEATURES_JSON);
  nlohmann::json features = nlohmann::json::parse(in, nullptr, false);
  if (features.is_discarded()) {
    std::fprintf(stderr, "cannot read the feature list %s\n", HONE_FEATURES_JSON);
    return 1;
  }
  auto data = hone::matrix::data_from_features(features);
  if (!data) {
    std::fprintf(stderr, "bad feature list %s: %s\n", HONE_FEATURES_JSON,
                 data.error().to_string().c_str());
    return 1;
  }

  const auto problems = hone::functional::check_backend_table(
      hone::default_registry(), hone::functional::backend_cases(),
      features["backends"].get<std::vector<std::string>>());
  for (const auto& p : problems) std::fprintf(stderr, "BACKENDS table: %s\n", p.c_str());
  if (!problems.empty()) return 1;

  const auto empty = hone::functional::empty_suites();
  for (const auto& s : empty)
    std::fprintf(
        stderr, "HONE_WITH_BACKENDS(%s) selects no backend: no row has all of those capabilities\n",
        s.c_str());
  if (!empty.empty()) return 1;

  auto resolution = hone::functional::resolve_markers(*testing::UnitTest::GetInstance(),
                                                      hone::matrix::cell_ids(*data));
  if (!resolution.unknown.empty()) {
    std::string ids;
    for (const auto& id : resolution.unknown) ids += (ids.empty() ? "" : ", ") + id;
    std::fprintf(stderr, "Unknown feature-matrix cell IDs: %s\n", ids.c_str());
    return 1;
  }

  const char* results = std::getenv("HONE_MATRIX_RESULTS");
  testing::UnitTest::GetInstance()->listeners().Append(new hone::functional::MatrixRecorder(
      std::move(resolution.cells_by_test), results ? results : ""));
  return RUN_ALL_TESTS();
}
