// Internals of `hone conformance`: finding ONNX backend tests on disk and
// comparing a run's values with the expected ones.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hone/tensor.h"
#include "hone/value.h"

namespace hone::cli::conformance {

/// One ONNX backend test: a folder with model.onnx and test_data_set_*/.
struct TestCase {
  std::string category;  // name of the folder holding the test ("node")
  std::string name;      // the test folder's name ("test_abs")
  std::filesystem::path dir;
};

/// Every test folder at or below `root`, sorted by category then name.
std::vector<TestCase> discover_tests(const std::filesystem::path& root);
/// The test_data_set_* folders of a test, sorted by their number.
std::vector<std::filesystem::path> data_sets(const std::filesystem::path& test_dir);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// nullopt when `got` matches `want`: same dtype and shape, floats within
/// |a-e| <= atol + rtol*|e| (NaN matches NaN, infinities must be equal),
/// integers and bools exact. Otherwise why not: the worst element with its
/// index, both values and the error.
std::optional<std::string> compare_tensors(const Tensor& got, const Tensor& want, Tolerance tol);
/// As compare_tensors, for tensors, sequences and optionals.
std::optional<std::string> compare_values(const RunValue& got, const RunValue& want, Tolerance tol);

}  // namespace hone::cli::conformance
