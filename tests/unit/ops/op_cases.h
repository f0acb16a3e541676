// The op-case table: each ONNX op's cases (shapes, attributes, dtypes, edge
// values) written once, and run by op_cases_test.cpp on every backend that
// claims the op, against the reference interpreter in f64 (as ggml's
// test-backend-ops). A backend-specific behaviour (fusion, layout, fallback,
// errors) stays in tests/unit/backends/<name>/.
//
//   OpCase c{"Elu_alpha", "Elu", 6, {edge({2, 3, 4})}, {{"alpha", 0.5f}}};
//   HONE_TRY(Graph g, build_case_graph(c));           // one node, its inputs
//   std::vector<Tensor> xs = case_inputs(c, seed);    // the non-constant inputs
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/tensor.h"

namespace hone::op_cases {

/// How an input's values are made (seeded, so each run sees the same values).
enum class Fill : uint8_t {
  kUniform,   ///< uniform in [-1, 1)
  kPositive,  ///< uniform in [0.1, 2): Log, Sqrt, divisors, variances
  kEdge,      ///< 0, -0, ±0.5, ±1, ±2.5, large (±30), tiny (1e-7), then uniform in [-4, 4)
  kEdgeNan,   ///< kEdge with NaN and ±inf among them, for ops whose formula propagates them
  kValues,    ///< exactly `values` (indices, axes, shapes, scales, pads)
  kBool,      ///< alternating true/false with a seeded twist
};

struct OpInput {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape = {};
  Fill fill = Fill::kUniform;
  /// An initializer (weights, axes, target shapes); else a graph input.
  bool constant = false;
  std::vector<double> values = {};  ///< Fill::kValues
  /// An omitted optional input (kNoValue), e.g. Resize's roi.
  bool absent = false;
};

struct OpCase {
  std::string name;  ///< test name: "Conv_dilated_3x3"
  std::string op;    ///< ONNX op type
  int64_t opset = 17;
  std::vector<OpInput> inputs = {};
  std::map<std::string, Attribute> attrs = {};
  int outputs = 1;
  /// Widens the backend's bound where the f32 error legitimately grows
  /// (long sums); the bound used is max(backend's, this).
  double rtol = 0.0, atol = 0.0;
  /// Backend name -> why that backend's answer is allowed to differ (a case
  /// it claims but defines otherwise); the test skips it with the reason.
  std::map<std::string, std::string> exclude = {};
};

/// Every case, in a fixed order; names are unique.
const std::vector<OpCase>& all_cases();

/// A graph of the case's one node: graph inputs for the non-constant
/// inputs (named x0, x1, ...), initializers for the constant ones.
[[nodiscard]] Result<Graph> build_case_graph(const OpCase& c);

/// The values of the case's non-constant inputs, in order.
std::vector<Tensor> case_inputs(const OpCase& c, uint32_t seed);

// Spellings for the table.
inline OpInput in(std::vector<int64_t> shape, Fill fill = Fill::kUniform) {
  return {DType::kF32, std::move(shape), fill};
}
inline OpInput edge(std::vector<int64_t> shape) {
  return in(std::move(shape), Fill::kEdge);
}
inline OpInput edge_nan(std::vector<int64_t> shape) {
  return in(std::move(shape), Fill::kEdgeNan);
}
inline OpInput pos(std::vector<int64_t> shape) {
  return in(std::move(shape), Fill::kPositive);
}
/// A constant f32 of uniform values (weights).
inline OpInput weight(std::vector<int64_t> shape, Fill fill = Fill::kUniform) {
  OpInput i = in(std::move(shape), fill);
  i.constant = true;
  return i;
}
/// A constant 1-D tensor of `values` (axes, pads, starts; i64 by default).
inline OpInput values(std::vector<double> v, DType dtype = DType::kI64) {
  const auto n = static_cast<int64_t>(v.size());
  return {dtype, {n}, Fill::kValues, true, std::move(v)};
}
/// A graph input of `dtype` holding exactly `v` in `shape`.
inline OpInput given(DType dtype, std::vector<int64_t> shape, std::vector<double> v) {
  return {dtype, std::move(shape), Fill::kValues, false, std::move(v)};
}
inline OpInput absent() {
  OpInput i;
  i.absent = true;
  return i;
}

/// The table's parts (op_cases_eltwise.cpp, op_cases_nn.cpp, op_cases_tensor.cpp,
/// op_cases_index.cpp).
std::vector<OpCase> eltwise_cases();
std::vector<OpCase> nn_cases();
std::vector<OpCase> tensor_cases();
std::vector<OpCase> index_cases();

}  // namespace hone::op_cases
