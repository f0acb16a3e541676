// What the cuda backend accepts, node by node, with the reason for every
// refusal. Anything refused runs on the reference through CompilingBackend.
// Shape subgraphs (common/host_eval.h) are accepted as host nodes: they run
// when a plan is built, so the block around them stays on the device.
#include <set>

#include "backends/common/host_eval.h"
#include "backends/common/node_query.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cudnn_api.h"
#include "backends/cuda/op.h"
#include "eval/kernel_util.h"
#include "ops/attrs.h"
#include "ops/unary.h"

namespace hone::cuda {
namespace {

using node_query::check_f32_io;
using node_query::extra_outputs_used;
using node_query::is_const;
using node_query::rank_of;
using node_query::val;

/// Inputs that carry data (f32), not shapes, indices or axes (read when planning).
size_t data_inputs(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Reshape" || op == "Gather" || op == "Slice" || op == "Expand" || op == "Split" ||
      op == "Pad")
    return 1;
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && g.opset() >= 13) return 1;
  if (op.starts_with("Reduce") && g.opset() >= 18) return 1;
  if (op == "Clip") return 1;
  return n.inputs.size();
}

/// What input `i` of a data op holds, for refusal messages.
std::string param_name(const std::string& op, size_t i) {
  if (op == "Reshape" || op == "Expand") return "shape";
  if (op == "Gather") return "indices";
  if (op == "Split") return "split";
  if (op == "Pad") return i == 1 ? "pads" : i == 2 ? "constant_value" : "axes";
  if (op == "Slice") return i == 1 ? "starts" : i == 2 ? "ends" : i == 3 ? "axes" : "steps";
  return "axes";
}

/// Input 0 of `n` is an i64, i32 or bool tensor made at run time.
bool integer_data(const Graph& g, const Node& n) {
  if (n.inputs.empty()) return false;
  const DType t = known_dtype(g, n.inputs[0]);
  return t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

/// Cast, Clip of integers or by bounds made at run time, and Gather with
/// run-time indices (ops_int.cpp).
std::string int_op_why_not(const Graph& g, const Node& n) {
  if (extra_outputs_used(n)) return "more than one output";
  const Value* x = val(g, n, 0);
  if (x == nullptr) return "input 0 is missing";
  const DType xt = known_dtype(g, n.inputs[0]);
  if (n.op_type == "Cast") {
    const Result<DType> to = eval::dtype_from_onnx(ops::cast_to(n));
    const char* kinds = " (cuda casts between f32, f16, bf16, i64, i32 and bool)";
    if (!to || element_code(*to) < 0)
      return "Cast to " + (to ? dtype_word(*to) : std::string("an unknown dtype")) + kinds;
    // An input of unknown dtype is f32, as everywhere in cuda.
    if (element_code(moved_dtype(g, n.inputs[0])) < 0) return "Cast from " + dtype_word(xt) + kinds;
    // A Cast of a known value is a host node; this one's input is made at run time.
    return {};
  }
  if (n.op_type == "Clip") {
    const DType t = moved_dtype(g, n.inputs[0]);
    if (t != DType::kF32 && t != DType::kI64 && t != DType::kI32)
      return "Clip of " + dtype_word(t) + " (cuda clips f32, i64 and i32)";
    for (size_t i = 1; i < 3 && i < n.inputs.size(); ++i)
      if (const DType b = known_dtype(g, n.inputs[i]);
          n.inputs[i] >= 0 && b != t && b != DType::kUndefined)
        return "Clip " + std::string(i == 1 ? "min" : "max") + " is " + dtype_word(b) +
               ", its input " + dtype_word(t);
    return {};
  }
  if (xt != DType::kF32 && xt != DType::kI64 && xt != DType::kI32 && xt != DType::kUndefined)
    return "data is " + dtype_word(xt) + "; cuda gathers f32, i64 and i32 data";
  const DType it = known_dtype(g, n.inputs[1]);
  if (it != DType::kI64 && it != DType::kI32)
    return "indices are " + std::string(dtype_name(it)) + "; cuda gathers by i64 or i32";
  return {};
}

/// Ops that only move their input's elements (ops_index.cpp, ops_misc.cpp).
bool moves_data(const std::string& op) {
  static const std::set<std::string> k = {"Reshape",  "Flatten",   "Squeeze", "Unsqueeze",
                                          "Identity", "Transpose", "Slice",   "Expand",
                                          "Split",    "Gather"};
  return k.count(op) > 0;
}

/// A data-movement op of an integer or bool tensor: the same plans as f32's
/// over its elements (strided_copy_of); a view keeps its dtype.
std::string moves_why_not(const Graph& g, const Node& n) {
  const DType t = known_dtype(g, n.inputs[0]);
  if (!movable(t)) return "data is " + dtype_word(t) + " (cuda moves f32, i64, i32 and bool)";
  if (n.op_type == "Split") {
    for (ValueId v : n.outputs)
      if (v < 0) return "an output of the Split is left out";
  } else if (extra_outputs_used(n)) {
    return "more than one output";
  }
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !host_eval::host_value(g, n.inputs[i], host_eval::Policy::kAnyDtype))
      return "input " + std::to_string(i) + " (" + param_name(n.op_type, i) +
             ") is neither a constant nor computed from shapes";
  // Many indices are gathered by a kernel over 4-byte words (ops_index.cpp).
  if (n.op_type == "Gather" && t == DType::kBool && gather_reads_indices(g, n))
    return "a Gather of bool data by indices computed from shapes or by over " +
           std::to_string(kGatherCopies) + " constants (cuda copies rows of bools one index each)";
  return {};
}

std::string why_not(const Graph& g, const Node& n) {
  static const std::set<std::string> kOps = {"Conv",
                                             "Gemm",
                                             "MatMul",
                                             "MaxPool",
                                             "AveragePool",
                                             "GlobalAveragePool",
                                             "GlobalMaxPool",
                                             "Softmax",
                                             "LogSoftmax",
                                             "LayerNormalization",
                                             "ReduceMean",
                                             "ReduceSum",
                                             "ReduceMax",
                                             "ReduceMin",
                                             "ReduceProd",
                                             "ReduceL1",
                                             "ReduceL2",
                                             "ReduceLogSum",
                                             "ReduceLogSumExp",
                                             "ReduceSumSquare",
                                             "Reshape",
                                             "Flatten",
                                             "Squeeze",
                                             "Unsqueeze",
                                             "Transpose",
                                             "Concat",
                                             "Gather",
                                             "Slice",
                                             "Expand",
                                             "Split",
                                             "BatchNormalization",
                                             "Pad"};
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return "domain '" + n.domain + "' is not ONNX's default";
  if (host_eval::host_node(g, n, host_eval::Policy::kAnyDtype)) return {};
  const std::string& op = n.op_type;
  if (op == "Cast" || gathers_on_device(g, n) || clips_on_device(g, n)) return int_op_why_not(g, n);
  if (tensor_op(g, n)) return tensor_op_why_not(g, n);
  if (element_op(op)) return element_op_why_not(g, n);
  if (moves_data(op) && integer_data(g, n)) return moves_why_not(g, n);
  const bool eltwise = !eltwise_expr(g, n, std::vector<std::string>(eltwise_arity(n), "x")).empty();
  if (!eltwise && !kOps.count(op)) {
    if (const ops::UnaryFormula* f = ops::find_unary(op))
      if (Result<ops::UnaryParams> p = ops::unary_params(n, *f); !p) return p.error().message();
    if (op == "Gelu") return "Gelu approximate must be 'none' or 'tanh'";
    if (op == "Max" || op == "Min") return op + " with other than two inputs";
    return "no cuda kernel for " + op;
  }
  if (op == "Where") {
    // A condition known when the plan is built (a Where made at run time is
    // a tensor op): uploaded as 0/1 floats, read by the element-wise chain.
    const Value* c = val(g, n, 0);
    if (c != nullptr && c->dtype != DType::kBool && c->dtype != DType::kUndefined)
      return "condition is " + std::string(dtype_name(c->dtype)) + ", not bool";
    if (n.inputs.empty() || n.inputs[0] < 0) return "input 0 is missing";
    for (size_t i = 1; i < 3; ++i)
      if (const Value* v = val(g, n, i);
          v != nullptr && v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
        return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) +
               "; cuda runs f32 only";
  } else if (std::string io = check_f32_io(g, n, data_inputs(g, n), "cuda runs f32 only");
             !io.empty()) {
    return io;
  }
  if (op == "Split") {
    for (ValueId v : n.outputs)
      if (v < 0) return "an output of the Split is left out";
  } else if (extra_outputs_used(n)) {
    return "more than one output";
  }
  if (eltwise) {
    for (size_t i = 0; i < eltwise_arity(n); ++i)
      if (val(g, n, i) == nullptr) return "input " + std::to_string(i) + " is missing";
    return {};
  }
  if (op == "Conv") {
    const int64_t wr = rank_of(val(g, n, 1));
    if (wr >= 0 && wr != 3 && wr != 4 && wr != 5)
      return "weights rank " + std::to_string(wr) + " (cuda runs 1-D, 2-D and 3-D convs)";
    if (wr == 5)  // 3-D convs run on cuDNN only (ops_conv.cpp)
      if (auto dnn = Cudnn::get(); !dnn)
        return "a 3-D conv runs on cuDNN only, which is not loaded: " + dnn.error().message();
    if (n.has_attr("kernel_shape") && is_const(g, n, 1)) {
      const auto ks = n.attr_ints("kernel_shape");
      const auto& wd = g.value(n.inputs[1]).initializer->shape();
      if (wd.size() < 2 || ks != std::vector<int64_t>(wd.begin() + 2, wd.end()))
        return "kernel_shape disagrees with the weights";
    }
    return {};
  }
  if (op == "Gemm") {
    if (rank_of(val(g, n, 2)) > 2) return "C has rank > 2";
    return {};
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (!n.has_attr("kernel_shape")) return "kernel_shape is missing";
    const int64_t r = rank_of(val(g, n, 0));
    if (r >= 0 && r != 3 && r != 4 && r != 5)
      return "input rank " + std::to_string(r) + " (cuda runs 1-D, 2-D and 3-D pools)";
    return {};
  }
  if (op == "LayerNormalization") {
    const Result<ops::NormAttrs> a = ops::norm_attrs(n);
    if (!a) return a.error().message();
    if (a->stash_type != 1) return "stash_type other than f32";
    return {};
  }
  if (op == "BatchNormalization") {
    if (n.inputs.size() != 5) return "BatchNormalization with other than 5 inputs";
    const Result<ops::BatchNormAttrs> a = ops::batch_norm_attrs(n);
    if (!a) return a.error().message();
    if (a->training_mode) return "BatchNormalization in training mode";
    return {};
  }
  if (op == "Pad") {
    const Result<ops::PadAttrs> a = ops::pad_attrs(n);
    if (!a) return a.error().message();
    // reflect, edge and wrap read the input only; constant's fill value is
    // read when the plan is built too, as a float.
    if (a->mode == "constant" && n.inputs.size() > 2 && n.inputs[2] >= 0 &&
        !host_eval::host_value(g, n.inputs[2], host_eval::Policy::kAnyDtype))
      return "input 2 (constant_value) is neither a constant nor computed from shapes";
  }
  // Shapes, indices, bounds and axes are read when the plan is built.
  for (size_t i = data_inputs(g, n); i < n.inputs.size(); ++i) {
    const ValueId v = n.inputs[i];
    if (v < 0 || (op == "Pad" && i == 2)) continue;
    if (!host_eval::host_value(g, v, host_eval::Policy::kAnyDtype))
      return "input " + std::to_string(i) + " (" + param_name(op, i) +
             ") is neither a constant nor computed from shapes";
    const DType t = g.value(v).dtype;
    if (t != DType::kI64 && t != DType::kI32 && t != DType::kUndefined)
      return "input " + std::to_string(i) + " (" + param_name(op, i) + ") is " +
             std::string(dtype_name(t)) + ", not an integer tensor";
  }
  return {};
}

}  // namespace

NodeSupport supports_node(const Graph& g, const Node& node) {
  return node_query::support_from(why_not(g, node));
}

}  // namespace hone::cuda
