#include "backends/aot/typed_values.h"

#include <set>

#include "eval/kernel_util.h"
#include "ops/attrs.h"

namespace hone::aot {

bool aot_dtype(DType t) {
  return t == DType::kF32 || t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

const char* c_type(DType t) {
  switch (t) {
    case DType::kI64:
      return "int64_t";
    case DType::kI32:
      return "int32_t";
    case DType::kBool:
      return "uint8_t";
    default:
      return "float";
  }
}

bool carries_any_dtype(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Reshape",   "Flatten", "Squeeze", "Unsqueeze",      "Identity",        "Cast",
      "Gather",    "Slice",   "Expand",  "Split",          "Transpose",       "Concat",
      "Add",       "Sub",     "Mul",     "ArgMax",         "ArgMin",          "GatherND",
      "Where",     "Clip",    "CumSum",  "GatherElements", "ScatterElements", "OneHot",
      "ScatterND", "NonZero"};
  return kOps.count(op) != 0 || is_compare_op(op) || is_logic_op(op);
}

bool is_compare_op(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
         op == "GreaterOrEqual";
}

bool is_logic_op(const std::string& op) {
  return op == "And" || op == "Or" || op == "Xor" || op == "Not";
}

namespace {

/// Input `i` of `op` holds indices (i64 or i32, checked apart from the data).
bool index_slot(const std::string& op, size_t i) {
  if (op == "OneHot") return i == 0;
  return i == 1 && (op == "Gather" || op == "GatherND" || op == "GatherElements" ||
                    op == "ScatterElements" || op == "ScatterND");
}

}  // namespace

std::string types_problem(const Graph& g, const Node& n, size_t data) {
  const std::string& op = n.op_type;
  const bool any = carries_any_dtype(op);
  auto what = [](DType t) { return std::string(dtype_name(t)); };
  std::set<DType> seen;
  for (size_t i = 0; i < data && i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) continue;
    const Value& v = g.value(n.inputs[i]);
    if (v.kind != ValueKind::kTensor) return "input " + std::to_string(i) + " is not a tensor";
    // kUndefined: a builder-made intermediate; lowering checks the real types.
    if (v.dtype == DType::kUndefined || v.dtype == DType::kF32) continue;
    if (op == "RoiAlign" && i == 2) {  // the batch indices
      if (v.dtype != DType::kI64 && v.dtype != DType::kI32)
        return "the batch indices are " + what(v.dtype) + "; RoiAlign takes i64 or i32";
      continue;
    }
    if (!any)
      return "input " + std::to_string(i) + " is " + what(v.dtype) + "; aot runs f32 only for " +
             op;
    if (!aot_dtype(v.dtype))
      return "input " + std::to_string(i) + " is " + what(v.dtype) +
             "; aot runs f32, i64, i32 and bool";
    if (index_slot(op, i)) continue;  // the indices, checked below
    if (op == "Where" && i == 0) {    // the condition
      if (v.dtype != DType::kBool) return "the condition is " + what(v.dtype) + ", not bool";
      continue;
    }
    if (is_logic_op(op) && v.dtype != DType::kBool)
      return op + " of " + what(v.dtype) + " (bool only)";
    seen.insert(v.dtype);
  }
  if (n.outputs.empty() || n.outputs[0] < 0) return "no output";
  if (const DType t = g.value(n.outputs[0]).dtype; t != DType::kF32 && t != DType::kUndefined) {
    const bool indices = op == "NonMaxSuppression" && t == DType::kI64;  // its selected boxes
    if (!any && !indices) return "output is " + what(t) + "; aot runs f32 only for " + op;
    if (!aot_dtype(t)) return "output is " + what(t) + "; aot runs f32, i64, i32 and bool";
  }
  if ((op == "Gather" || op == "GatherND" || op == "GatherElements" || op == "ScatterElements" ||
       op == "ScatterND" || op == "OneHot") &&
      n.inputs.size() > 1 && n.inputs[op == "OneHot" ? 0 : 1] >= 0) {
    const size_t slot = op == "OneHot" ? 0 : 1;
    const DType t = g.value(n.inputs[slot]).dtype;
    if (t != DType::kI64 && t != DType::kI32 && t != DType::kUndefined)
      return "the indices are " + what(t) + "; " + op + " takes i64 or i32";
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "ArgMax" || op == "ArgMin" ||
       op == "Clip" || op == "CumSum") &&
      seen.count(DType::kBool))
    return op + " of bool";
  return "";
}

DType result_dtype(const Program& p, const Node& n, ValueId v) {
  const DType t = p.graph->value(v).dtype;
  if (t != DType::kUndefined) return t;
  if (n.op_type == "ArgMax" || n.op_type == "ArgMin" || n.op_type == "NonZero" ||
      n.op_type == "NonMaxSuppression")
    return DType::kI64;
  if (is_compare_op(n.op_type) || is_logic_op(n.op_type)) return DType::kBool;
  if (n.op_type == "Where" && n.inputs.size() > 1 && n.inputs[1] >= 0)
    return p.values[static_cast<size_t>(n.inputs[1])].dtype;
  if (n.op_type == "OneHot" && n.inputs.size() > 2 && n.inputs[2] >= 0)
    return p.values[static_cast<size_t>(n.inputs[2])].dtype;
  if (n.op_type == "Cast") {
    if (const auto to = eval::dtype_from_onnx(ops::cast_to(n))) return *to;
  }
  if (!n.inputs.empty() && n.inputs[0] >= 0 && carries_any_dtype(n.op_type))
    return p.values[static_cast<size_t>(n.inputs[0])].dtype;
  return DType::kF32;
}

std::string cast_c_expr(DType from, DType to, const std::string& x) {
  const std::string ct = c_type(to);
  if (from == to) return x;
  if (to == DType::kBool) return "(uint8_t)(" + x + " != 0)";  // NaN != 0: true
  if (to == DType::kF32 || from != DType::kF32) return "(" + ct + ")(" + x + ")";
  // f32 to an integer: NaN to 0, out of range saturates (limits compared as doubles).
  const bool i64 = to == DType::kI64;
  const std::string lo = i64 ? "-9223372036854775808.0" : "-2147483648.0";
  const std::string hi = i64 ? "9223372036854775808.0" : "2147483648.0";
  const std::string mn = i64 ? "INT64_MIN" : "INT32_MIN", mx = i64 ? "INT64_MAX" : "INT32_MAX";
  return "(" + x + " != " + x + " ? (" + ct + ")0 : (double)" + x + " <= " + lo + " ? " + mn +
         " : (double)" + x + " >= " + hi + " ? " + mx + " : (" + ct + ")" + x + ")";
}

}  // namespace hone::aot
