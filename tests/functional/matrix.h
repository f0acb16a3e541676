// Feature-matrix markers for the functional suite: a test declares the cells
// it proves, the run records each cell's worst result, and the results are
// written as JSON for `hone-matrix update`.
//
//   HONE_MATRIX_TEST_P(Lifecycle, BuildAndInfer, "lifecycle.build", "lifecycle.infer") {...}
//   // "lifecycle.build" means "lifecycle.build/{backend}"; {backend} is the case key.
//
// IDs are resolved against tests/functional/features.json when the binary
// starts, before tests run or are listed: an unknown ID fails the binary with
// "Unknown feature-matrix cell IDs: ...".
#pragma once

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace hone::functional {

/// Records that test Suite.Name proves the cells in `templates`. Returns true
/// so it can initialize a namespace-scope constant next to the test.
bool declare_matrix(const char* suite, const char* name,
                    std::initializer_list<const char*> templates);

/// "lifecycle.infer" + {backend: reference} -> "lifecycle.infer/reference";
/// "topology.{backend}/single-device" -> "topology.reference/single-device".
std::string expand_cell_template(const std::string& tmpl,
                                 const std::map<std::string, std::string>& params);

/// Cell IDs per registered test (key: "Suite.Name" as gtest prints it).
struct MarkerResolution {
  std::map<std::string, std::vector<std::string>> cells_by_test;
  std::set<std::string> unknown;
};
/// Expands every declared marker for every registered test.
MarkerResolution resolve_markers(const testing::UnitTest& unit,
                                 const std::set<std::string>& known_ids);

enum class Outcome { kPassed, kSkipped, kFailed };
/// One cell's aggregate: the worst outcome of its tests (failed > skipped > passed).
struct CellResult {
  Outcome outcome = Outcome::kPassed;
  std::vector<std::string> reasons;
  std::vector<std::string> tests;
};
void record_cell(std::map<std::string, CellResult>& cells, const std::string& id, Outcome outcome,
                 const std::string& reason, const std::string& test);

/// Listens to the run and writes {"run": ..., "cells": ...} to `results_path` at the end.
class MatrixRecorder : public testing::EmptyTestEventListener {
 public:
  MatrixRecorder(std::map<std::string, std::vector<std::string>> cells_by_test,
                 std::string results_path);
  void OnTestEnd(const testing::TestInfo& info) override;
  void OnTestProgramEnd(const testing::UnitTest& unit) override;
  const std::map<std::string, CellResult>& cells() const { return cells_; }

 private:
  std::map<std::string, std::vector<std::string>> cells_by_test_;
  std::string results_path_;
  std::map<std::string, CellResult> cells_;
};

/// Skips the running test; an empty reason fails it instead.
void fail_if_no_reason(const std::string& reason);

}  // namespace hone::functional

#define HONE_MATRIX_CONCAT_(a, b) a##b
#define HONE_MATRIX_TEST_P(Suite, Name, ...)                            \
  static const bool HONE_MATRIX_CONCAT_(hone_matrix_, Suite##_##Name) = \
      ::hone::functional::declare_matrix(#Suite, #Name, {__VA_ARGS__}); \
  TEST_P(Suite, Name)

/// Skips with a reason the feature matrix shows; a skip without one fails.
#define HONE_SKIP(reason)                                    \
  do {                                                       \
    const std::string hone_reason_ = (reason);               \
    ::hone::functional::fail_if_no_reason(hone_reason_);     \
    if (!hone_reason_.empty()) GTEST_SKIP() << hone_reason_; \
    return;                                                  \
  } while (0)
