// Attribute parsing of the layout, indexing, reduction, cast, pad, clip and
// Gelu ops (ops/attrs.h): ONNX's defaults and validity rules.
#include "ops/attrs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ops/axis.h"
#include "ops/window.h"

namespace hone::ops {

int64_t axis_attr(const Node& n) {
  const std::string& op = n.op_type;
  int64_t fallback = 0;
  if (op == "Flatten" || op == "Concat" || op == "QuantizeLinear" || op == "DequantizeLinear")
    fallback = 1;
  else if (op == "OneHot" || op == "TopK" || op == "LpNormalization" ||
           op == "LayerNormalization" || op == "RMSNormalization")
    fallback = -1;
  else if (op == "TensorScatter")
    fallback = -2;
  return n.attr_int("axis", fallback);
}

Result<std::string> scatter_reduction(const Node& n) {
  std::string r = n.attr_string("reduction", "none");
  if (r == "none" || r == "add" || r == "mul" || r == "max" || r == "min") return r;
  return fail(ErrorCode::kInvalidArgument,
              n.op_type + " reduction '" + r + "' is not one of none, add, mul, max, min");
}

Result<std::vector<int64_t>> transpose_perm(const Node& n, int64_t rank) {
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (!n.has_attr("perm")) {
    perm.resize(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = rank - 1 - i;
    return perm;
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return fail(attr_error(n, "perm",
                           list_to_string(perm) + " has " + std::to_string(perm.size()) +
                               " entries for an input of rank " + std::to_string(rank)));
  auto normalized = normalize_axes(perm, rank, "perm");
  if (!normalized)
    return fail(attr_error(n, "perm",
                           list_to_string(perm) + " is not a permutation of the " +
                               std::to_string(rank) + " axes: " + normalized.error().message()));
  return *normalized;
}

bool reshape_allowzero(const Node& n) {
  return n.attr_int("allowzero", 0) != 0;
}

ShapeRange shape_range(const Node& n, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  return {clamp(n.attr_int("start", 0)), clamp(n.attr_int("end", rank))};
}

bool keepdims_attr(const Node& n) {
  return n.attr_int("keepdims", 1) != 0;
}

Result<ReduceAttrs> reduce_attrs(const Node& n) {
  ReduceAttrs a;
  a.axes = n.attr_ints("axes");
  a.keepdims = keepdims_attr(n);
  a.noop_with_empty_axes = n.attr_int("noop_with_empty_axes", 0) != 0;
  a.select_last_index = n.attr_int("select_last_index", 0) != 0;
  return a;
}

int64_t cast_to(const Node& n) {
  return n.attr_int("to", 0);
}

Result<PadAttrs> pad_attrs(const Node& n) {
  PadAttrs a;
  a.mode = n.attr_string("mode", "constant");
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap")
    return fail(attr_error(n, "mode", "'" + a.mode + "' is not constant, reflect, edge or wrap"));
  a.pads = n.has_attr("pads") ? n.attr_ints("pads") : n.attr_ints("paddings");
  a.value = n.attr_float("value", 0.0f);
  return a;
}

ClipAttrs clip_attrs(const Node& n) {
  return {n.attr_float("min", std::numeric_limits<float>::lowest()),
          n.attr_float("max", std::numeric_limits<float>::max())};
}

Result<GeluApprox> gelu_approx(const Node& n) {
  const std::string approx = n.attr_string("approximate", "none");
  if (approx == "none") return GeluApprox::kNone;
  if (approx == "tanh") return GeluApprox::kTanh;
  return fail(
      attr_error(n, "approximate", "is '" + approx + "': approximate must be 'none' or 'tanh'"));
}

double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

TopKAttrs topk_attrs(const Node& n) {
  return {n.attr_int("largest", 1) != 0, n.attr_int("sorted", 1) != 0};
}

Result<DepthSpaceAttrs> depth_space_attrs(const Node& n) {
  DepthSpaceAttrs a;
  a.blocksize = n.attr_int("blocksize", 0);
  if (a.blocksize < 1)
    return fail(attr_error(n, "blocksize", "must be positive, got " + std::to_string(a.blocksize)));
  if (n.op_type == "DepthToSpace") {
    const std::string mode = n.attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return fail(attr_error(n, "mode", "is '" + mode + "', not DCR or CRD"));
    a.crd = mode == "CRD";
  }
  return a;
}

Result<std::string> einsum_equation(const Node& n) {
  std::string e = n.attr_string("equation", "");
  if (e.empty()) return fail(attr_error(n, "equation", "is missing or empty"));
  return e;
}

}  // namespace hone::ops
