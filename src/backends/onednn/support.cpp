// What the onednn backend accepts, node by node, with the reason for every
// refusal. Anything refused runs on the reference through CompilingBackend.
#include <cctype>
#include <set>

#include "backends/common/host_eval.h"
#include "backends/common/node_query.h"
#include "backends/onednn/onednn_backend.h"
#include "backends/onednn/own_index.h"
#include "backends/onednn/own_logic.h"
#include "backends/onednn/own_moves.h"
#include "backends/onednn/own_nms.h"
#include "backends/onednn/pattern.h"
#include "backends/onednn/plan.h"
#include "eval/kernel_util.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/kernel_shape.h"
#include "ops/nonzero.h"

namespace hone::onednn {
namespace {

/// "" when the schema accepts the node's attributes, else its reason.
template <class T>
std::string attrs_error(const Result<T>& r) {
  return r ? "" : r.error().message();
}

using host_eval::host_node;
using host_eval::host_value;
using node_query::extra_outputs_used;
using node_query::is_const;
using node_query::rank_of;
using node_query::val;

/// Refuses operand shapes that do not broadcast.
std::string binary_shapes(const Graph& g, const Node& n) {
  const Value* a = val(g, n, 0);
  const Value* b = val(g, n, 1);
  if (!a->shape || !b->shape) return {};
  const size_t r = std::max(a->shape->rank(), b->shape->rank());
  auto dim = [&](const Shape& s, size_t i) -> Dim {
    return i + s.rank() < r ? Dim(1) : s[i + s.rank() - r];
  };
  for (size_t i = 0; i < r; ++i) {
    const Dim da = dim(*a->shape, i), db = dim(*b->shape, i);
    if (da == db || da == Dim(1) || db == Dim(1)) continue;
    if (da.is_static() && db.is_static())
      return "shapes " + a->shape->to_string() + " and " + b->shape->to_string() +
             " do not broadcast";
  }
  // Either operand may broadcast, or both: a first operand short of the
  // output's shape is widened inside the step (lower_binary).
  return {};
}

std::string check_window_attrs(const Node& n, int64_t rank) {
  if (std::string e = attrs_error(ops::conv_attrs(n)); !e.empty()) return e;
  if (rank >= 0 && (rank < 3 || rank > 5))
    return "input rank " + std::to_string(rank) + " (needs 1-3 spatial dims)";
  return {};
}

bool i64_or_unknown(DType t) {
  return t == DType::kI64 || t == DType::kUndefined;
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// LSTM, GRU and RNN: what oneDNN's recurrent primitives cannot compute.
std::string rnn_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (n.inputs.size() < 3) return "needs X, W and R";
  for (size_t i : {size_t{0}, size_t{5}, size_t{6}, size_t{7}}) {
    const Value* v = val(g, n, i);
    if (v != nullptr && v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
      return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) +
             "; only f32 runs on oneDNN";
  }
  // Weights are permuted into oneDNN's gate order and packed once per plan.
  for (size_t i : {size_t{1}, size_t{2}, size_t{3}, size_t{7}})
    if (val(g, n, i) && (!is_const(g, n, i) || val(g, n, i)->dtype != DType::kF32))
      return std::string(i == 1   ? "W"
                         : i == 2 ? "R"
                         : i == 3 ? "B"
                                  : "P") +
             " must be an f32 constant";
  if (val(g, n, 4) && !is_const(g, n, 4))
    return "sequence_lens is computed at run time; oneDNN runs whole sequences only";
  const auto ra = ops::rnn_attrs(n);
  if (!ra) return ra.error().message();
  if (ra->layout != 0) return "layout 1 (batch first)";
  if (ra->clip) return "clip is not supported by oneDNN";
  if (ra->input_forget) return "input_forget=1";
  const std::vector<std::string>& acts = ra->activations;
  if (acts.empty()) return {};
  const size_t dirs = static_cast<size_t>(ra->directions());
  const std::vector<std::string> defaults =
      op == "LSTM"  ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
      : op == "GRU" ? std::vector<std::string>{"sigmoid", "tanh"}
                    : std::vector<std::string>{};
  if (op == "RNN") {
    // One activation, the same in both directions, from those oneDNN has.
    const std::string a = lowercase(acts[0]);
    if (a != "tanh" && a != "relu" && a != "sigmoid") return "RNN activation '" + acts[0] + "'";
    for (const std::string& other : acts)
      if (lowercase(other) != a) return "RNN directions with different activations";
    return {};
  }
  if (acts.size() != defaults.size() && acts.size() != defaults.size() * dirs)
    return "activations list of the wrong length";
  for (size_t i = 0; i < acts.size(); ++i)
    if (lowercase(acts[i]) != defaults[i % defaults.size()])
      return "activation '" + acts[i] + "' (oneDNN's " + op + " has the default ones only)";
  return {};
}

/// Resize: oneDNN's resampling where it computes exactly as ONNX does, else
/// hone's own step (lower_resize.cpp decides per shape); both need the scales
/// or sizes when the plan is built.
std::string resize_why_not(const Graph& g, const Node& n) {
  if (g.opset() < 11 || n.inputs.size() < 3)
    return "opset-10 Resize (floor or ceil by direction, no coordinate transformation)";
  const auto ra = ops::resize_attrs(n, g.opset());
  if (!ra) return ra.error().message();
  const std::string& mode = ra->mode;
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return "mode '" + mode + "' is not an ONNX value";
  if (n.has_attr("axes")) return "the axes attribute";
  if (ra->keep_aspect_ratio_policy != "stretch")
    return "keep_aspect_ratio_policy other than stretch";
  const std::string& ctm = ra->coordinate_transformation_mode;
  if (ctm == "tf_crop_and_resize") return "coordinate_transformation_mode 'tf_crop_and_resize'";
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" && ctm != "asymmetric" &&
      ctm != "align_corners" && ctm != "tf_half_pixel_for_nn" && ctm != "half_pixel_symmetric")
    return "coordinate_transformation_mode '" + ctm + "' is not an ONNX value";
  const std::string& nm = ra->nearest_mode;
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
    return "nearest_mode '" + nm + "' is not an ONNX value";
  const Value* scales = val(g, n, 2);
  const Value* sizes = val(g, n, 3);
  const bool scales_known = scales && is_const(g, n, 2);
  const bool sizes_known = sizes && (is_const(g, n, 3) || host_value(g, n.inputs[3], kHostPolicy));
  if (!scales_known && !sizes_known)
    return "scales or sizes are neither constants nor computed from dims";
  if (scales && !scales_known && !(is_const(g, n, 3) || host_value(g, n.inputs[3], kHostPolicy)))
    return "scales are computed at run time";
  return {};
}

/// ConvTranspose: 2-D with constant weights as a oneDNN deconvolution.
std::string conv_transpose_why_not(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !is_const(g, n, 1)) return "weights must be a constant";
  if (val(g, n, 2) && !is_const(g, n, 2)) return "bias must be a constant";
  if (g.value(n.inputs[1]).initializer->rank() != 4)
    return "weights rank " + std::to_string(g.value(n.inputs[1]).initializer->rank()) +
           " (only 2-D ConvTranspose is lowered)";
  const int64_t r = rank_of(val(g, n, 0));
  if (r >= 0 && r != 4) return "input rank " + std::to_string(r) + " (only 2-D)";
  const auto ca = ops::conv_attrs(n);
  if (!ca) return ca.error().message();
  if (ca->auto_pad == ops::AutoPad::kSameUpper || ca->auto_pad == ops::AutoPad::kSameLower)
    return "auto_pad SAME_UPPER/SAME_LOWER (the pad split is not lowered)";
  if (!ca->output_shape.empty()) return "the output_shape attribute";
  const auto& wd = g.value(n.inputs[1]).initializer->shape();
  if (auto k = ops::check_kernel_shape(ca->kernel_shape, wd); !k) return k.error().message();
  return {};
}

/// A dtype hone's own steps read and write in a block (own_steps.cpp);
/// kUndefined is a builder-made intermediate whose dtype the plan checks.
bool own_dtype(DType t) {
  return t == DType::kF32 || t == DType::kI64 || t == DType::kI32 || t == DType::kBool ||
         t == DType::kUndefined;
}

std::string dtype_text(DType t) {
  return std::string(dtype_name(t));
}

/// Where with a condition known at run time or from dims: hone's own step
/// (oneDNN 2.6 has no select; its binary_select came in 3.x).
std::string where_why_not(const Graph& g, const Node& n) {
  if (n.inputs.size() != 3 || !val(g, n, 0) || !val(g, n, 1) || !val(g, n, 2))
    return "needs a condition and two values";
  const DType c = val(g, n, 0)->dtype, x = val(g, n, 1)->dtype, y = val(g, n, 2)->dtype;
  if (c != DType::kBool && c != DType::kUndefined)
    return "the condition is " + dtype_text(c) + ", not bool";
  if (!own_dtype(x) || !own_dtype(y) ||
      (x != y && x != DType::kUndefined && y != DType::kUndefined))
    return "values of " + dtype_text(x) + " and " + dtype_text(y) +
           " (onednn selects f32, i64, i32 or bool)";
  return {};
}

/// Cast between f32, i64, i32 and bool: hone's own step (oneDNN 2.6 has no
/// 64-bit integers); a Cast of dims and masks computed from them is
/// evaluated at plan time instead.
std::string cast_why_not(const Graph& g, const Node& n) {
  const Value* x = val(g, n, 0);
  if (x == nullptr) return "no input";
  const auto to = eval::dtype_from_onnx(ops::cast_to(n));
  if (!to) return to.error().message();
  if (!own_dtype(x->dtype) || !own_dtype(*to))
    return "Cast from " + dtype_text(x->dtype) + " to " + dtype_text(*to) +
           " (onednn casts f32, i64, i32 and bool)";
  return {};
}

std::string why_not(const Graph& g, const Node& n) {
  static const std::set<std::string> kEltwise = {
      // Not Log: oneDNN's is an approximation (log(1) = -1.4e-6).
      "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "HardSwish", "HardSigmoid",
      "Clip", "Gelu",      "Sqrt",    "Exp",  "Abs", "Neg",       "Reciprocal"};
  static const std::set<std::string> kOps = {"Add",
                                             "Pow",
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
                                             "Max",
                                             "Min",
                                             "Sub",
                                             "Mul",
                                             "Div",
                                             "Conv",
                                             "Gemm",
                                             "MatMul",
                                             "MaxPool",
                                             "AveragePool",
                                             "GlobalAveragePool",
                                             "GlobalMaxPool",
                                             "Softmax",
                                             "LogSoftmax",
                                             "BatchNormalization",
                                             "LayerNormalization",
                                             "InstanceNormalization",
                                             "Flatten",
                                             "Reshape",
                                             "Squeeze",
                                             "Concat",
                                             "Slice",
                                             "Split",
                                             "Pad",
                                             "Unsqueeze",
                                             "Transpose",
                                             "Identity",
                                             "Erf",
                                             "Resize",
                                             "ConvTranspose",
                                             "Gather",
                                             "Expand"};
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return "domain '" + n.domain + "' is not ONNX's default";
  // Shape arithmetic and shape-only masks and tables are evaluated when a plan
  // is built (common/host_eval.h, kHostPolicy).
  if (host_node(g, n, kHostPolicy)) return {};
  if (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN") return rnn_why_not(g, n);
  if (n.op_type == "Where") return where_why_not(g, n);
  if (n.op_type == "Cast") return cast_why_not(g, n);
  if (auto why = misc_why_not(g, n)) return *why;       // lower_misc.cpp
  if (auto why = own_index_why_not(g, n)) return *why;  // own_index.cpp
  if (auto why = own_logic_why_not(g, n)) return *why;  // own_logic.cpp
  if (auto why = own_moves_why_not(g, n)) return *why;  // own_moves.cpp
  if (auto why = own_nms_why_not(g, n)) return *why;    // own_nms.cpp
  if (!kEltwise.count(n.op_type) && !kOps.count(n.op_type))
    return "no oneDNN lowering for " + n.op_type;
  // Data inputs and outputs must be f32 (Reshape's shape and Clip's bounds are checked below).
  const bool shape_op = n.op_type == "Reshape" || n.op_type == "Squeeze" ||
                        n.op_type == "Unsqueeze" || n.op_type == "Slice" || n.op_type == "Split" ||
                        n.op_type == "Pad" || n.op_type == "Resize" || n.op_type == "Gather" ||
                        n.op_type == "Expand" || n.op_type.rfind("Reduce", 0) == 0;
  const size_t data_inputs = shape_op ? 1 : n.inputs.size();
  // The views keep the bytes of an integer or bool tensor too (an attention
  // mask unsqueezed before its Cast); only own steps read those.
  const bool view = n.op_type == "Reshape" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze" ||
                    n.op_type == "Flatten" || n.op_type == "Identity" || n.op_type == "Gather";
  for (size_t i = 0; i < data_inputs; ++i) {
    const Value* v = val(g, n, i);
    // kUndefined: a builder-made intermediate; run() checks the real dtypes.
    if (v != nullptr && v->dtype != DType::kF32 && v->dtype != DType::kUndefined &&
        !(view && own_dtype(v->dtype)))
      return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) +
             "; only f32 runs on oneDNN";
    if (v != nullptr && v->kind != ValueKind::kTensor)
      return "input " + std::to_string(i) + " is not a tensor";
  }
  if (n.outputs.empty() || n.outputs[0] < 0) return "no output";
  if (const DType t = g.value(n.outputs[0]).dtype;
      t != DType::kF32 && t != DType::kUndefined && !(view && own_dtype(t)))
    return "output is " + std::string(dtype_name(t)) + "; only f32 runs on oneDNN";
  const std::string& op = n.op_type;
  if (op == "Erf")
    return gelu_start_of_erf(g, n)
               ? ""
               : "Erf outside the GELU pattern Div(sqrt2)-Erf-Add(1)-Mul(x)-Mul(0.5)";
  if (op == "Clip") {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0 &&
          (!is_const(g, n, i) || g.value(n.inputs[i]).initializer->numel() != 1))
        return "Clip bounds must be constant scalars";
    return {};
  }
  if (op == "Gelu") return attrs_error(ops::gelu_approx(n));
  if (kEltwise.count(op)) return {};
  if (op == "Pow") {
    // One exponent for every element: oneDNN's eltwise pow (alpha * x^beta).
    if (n.inputs.size() != 2 || !is_const(g, n, 1) ||
        g.value(n.inputs[1]).initializer->numel() != 1)
      return "the exponent must be a constant scalar";
    return {};
  }
  if (op.rfind("Reduce", 0) == 0) {
    // Axes as an attribute, or (ReduceSum from opset 13, the rest from 18) a
    // constant input; noop_with_empty_axes with none is the input itself
    // (lower_reduce.cpp).
    if (n.inputs.size() > 1 && n.inputs[1] >= 0 && !host_value(g, n.inputs[1], kHostPolicy))
      return "axes must be constant";
    if (const Value* axes = val(g, n, 1); axes != nullptr && axes->dtype != DType::kI64 &&
                                          axes->dtype != DType::kI32 &&
                                          axes->dtype != DType::kUndefined)
      return "axes are " + dtype_text(axes->dtype) + ", not integers";
    const auto ra = ops::reduce_attrs(n);
    return ra ? "" : ra.error().message();
  }
  if (op == "Max" || op == "Min") {
    if (n.inputs.size() != 2) return op + " of " + std::to_string(n.inputs.size()) + " inputs";
    return binary_shapes(g, n);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (n.inputs.size() != 2) return "needs two inputs";
    return binary_shapes(g, n);
  }
  if (op == "Conv") {
    // Constant weights are packed once at build; others are reordered per run.
    const int64_t wr = rank_of(val(g, n, 1));
    if (wr >= 0 && (wr < 3 || wr > 5))
      return "weights rank " + std::to_string(wr) + " (needs 1-3 spatial dims)";
    if (wr >= 0 && rank_of(val(g, n, 0)) >= 0 && rank_of(val(g, n, 0)) != wr)
      return "input and weights ranks differ";
    const auto ca = ops::conv_attrs(n);
    if (!ca) return ca.error().message();
    if (is_const(g, n, 1)) {
      const auto& wd = g.value(n.inputs[1]).initializer->shape();
      if (auto k = ops::check_kernel_shape(ca->kernel_shape, wd); !k) return k.error().message();
    }
    return check_window_attrs(n, wr >= 0 ? wr : rank_of(val(g, n, 0)));
  }
  if (op == "Gemm") {
    for (size_t i = 0; i < 2; ++i)
      if (rank_of(val(g, n, i)) >= 0 && rank_of(val(g, n, i)) != 2) return "A and B must be 2-D";
    const auto ga = ops::gemm_attrs(n);
    if (!ga) return ga.error().message();
    const float beta = ga->beta;
    if (val(g, n, 2)) {
      if (beta != 1.0f && beta != 0.0f && !is_const(g, n, 2))
        return "beta != 1 with a non-constant C";
      if (rank_of(val(g, n, 2)) > 2) return "C has rank > 2";
    }
    return {};
  }
  if (op == "MatMul") {
    const int64_t ra = rank_of(val(g, n, 0)), rb = rank_of(val(g, n, 1));
    if (ra == 0 || rb == 0) return "a scalar operand";
    if (ra > 12 || rb > 12) return "rank above oneDNN's 12";
    return {};
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (extra_outputs_used(n)) return "the Indices output is not supported";
    if (!n.has_attr("kernel_shape")) return "kernel_shape is missing";
    const auto pa = ops::pool_attrs(n);
    if (!pa) return pa.error().message();
    if (op == "AveragePool" && pa->ceil_mode && pa->count_include_pad)
      return "ceil_mode with count_include_pad";
    return check_window_attrs(n, rank_of(val(g, n, 0)));
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return check_window_attrs(n, rank_of(val(g, n, 0)));
  if (op == "Softmax" || op == "LogSoftmax")
    return rank_of(val(g, n, 0)) == 0 ? "a scalar input" : "";
  if (op == "BatchNormalization") {
    const auto ba = ops::batch_norm_attrs(n);
    if (!ba) return ba.error().message();
    if (ba->training_mode) return "training_mode=1";
    if (!ba->spatial) return "spatial=0";
    if (extra_outputs_used(n)) return "running mean/var outputs are not supported";
    for (size_t i = 1; i < 5; ++i)
      if (!is_const(g, n, i)) return "scale, bias, mean and var must be constants";
    const int64_t r = rank_of(val(g, n, 0));
    if (r >= 0 && (r < 2 || r > 5)) return "input rank " + std::to_string(r);
    return {};
  }
  if (op == "InstanceNormalization") {
    const auto na = ops::norm_attrs(n);
    if (!na) return na.error().message();
    if (!is_const(g, n, 1) || !is_const(g, n, 2)) return "scale and B must be constants";
    const int64_t r = rank_of(val(g, n, 0));
    if (r >= 0 && r < 3) return "input rank " + std::to_string(r) + " (no spatial axis)";
    return {};
  }
  if (op == "LayerNormalization") {
    if (extra_outputs_used(n)) return "Mean/InvStdDev outputs are not supported";
    const auto na = ops::norm_attrs(n);
    if (!na) return na.error().message();
    if (na->stash_type != 1) return "stash_type other than f32";
    if (!is_const(g, n, 1) || (val(g, n, 2) && !is_const(g, n, 2)))
      return "scale and bias must be constants";
    return {};
  }
  if (op == "Reshape") {
    if (!val(g, n, 1) || !i64_or_unknown(g.value(n.inputs[1]).dtype) ||
        !host_value(g, n.inputs[1], kHostPolicy))
      return "shape is neither a constant i64 tensor nor computed from dims and constants";
    return {};
  }
  if (op == "Pad") {
    // Constant mode with pads, value and axes known when the plan is built.
    const auto pa = ops::pad_attrs(n);
    if (!pa) return pa.error().message();
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (val(g, n, i) && !host_value(g, n.inputs[i], kHostPolicy))
        return "pads, value and axes must be constants or computed from dims";
    return rank_of(val(g, n, 0)) == 0 ? "a scalar input" : "";
  }
  if (op == "Split") {
    // Sizes known when the plan is built; every part an f32 tensor.
    if (n.inputs.size() > 1 && n.inputs[1] >= 0 && !host_value(g, n.inputs[1], kHostPolicy))
      return "split sizes must be constants or computed from dims";
    for (ValueId o : n.outputs)
      if (o >= 0 && g.value(o).dtype != DType::kF32 && g.value(o).dtype != DType::kUndefined)
        return "an output is not f32";
    return rank_of(val(g, n, 0)) == 0 ? "a scalar input" : "";
  }
  if (op == "Slice") {
    // Positions known when the plan is built (own_moves_why_not took those
    // read when it runs); steps must be positive.
    if (is_const(g, n, 4)) {
      const Tensor& steps = *g.value(n.inputs[4]).initializer;
      for (int64_t i = 0; i < steps.numel(); ++i)
        if ((steps.dtype() == DType::kI64 ? steps.data<int64_t>()[i] : steps.data<int32_t>()[i]) <=
            0)
          return "a step that is not positive";
    }
    return rank_of(val(g, n, 0)) == 0 ? "a scalar input" : "";
  }
  if (op == "Gather") {
    // Indices known when the plan is built: each run of consecutive ones is
    // a reorder of a view (lower_index.cpp); read at run time (token ids): an
    // own step (own_steps.cpp), as oneDNN 2.6 has no gather primitive.
    const Value* idx = val(g, n, 1);
    if (idx == nullptr) return "needs data and indices";
    if (idx->dtype != DType::kI64 && idx->dtype != DType::kI32 && idx->dtype != DType::kUndefined)
      return "indices are " + dtype_text(idx->dtype) + "; i64 or i32 only";
    const int64_t r = rank_of(val(g, n, 0));
    if (r == 0) return "a scalar input";
    if (r > 0 && !ops::try_normalize_axis(ops::axis_attr(n), r))
      return "axis " + std::to_string(ops::axis_attr(n)) + " out of range for rank " +
             std::to_string(r);
    return {};
  }
  if (op == "Expand") {
    // One reorder of a view with stride 0 on the broadcast axes (lower_index.cpp).
    if (!val(g, n, 1) || !i64_or_unknown(g.value(n.inputs[1]).dtype) ||
        !host_value(g, n.inputs[1], kHostPolicy))
      return "shape is neither a constant i64 tensor nor computed from dims and constants";
    return {};
  }
  if (op == "Resize") return resize_why_not(g, n);
  if (op == "ConvTranspose") return conv_transpose_why_not(g, n);
  if (op == "Concat" && n.inputs.empty()) return "no inputs";
  if (op == "Squeeze" || op == "Unsqueeze") {
    // Axes come from an attribute before opset 13, from a constant input after.
    if (val(g, n, 1) &&
        (!i64_or_unknown(g.value(n.inputs[1]).dtype) || !host_value(g, n.inputs[1], kHostPolicy)))
      return "axes is neither a constant i64 tensor nor computed from dims and constants";
    if (op == "Unsqueeze" && !val(g, n, 1) && !n.has_attr("axes")) return "axes is missing";
    return {};
  }
  return {};  // Flatten, Transpose, Identity
}

}  // namespace

NodeSupport supports_node(const Graph& g, const Node& node) {
  std::string why = why_not(g, node);
  return why.empty() ? NodeSupport::yes() : NodeSupport::no(std::move(why));
}

bool block_ends_after(const Graph& g, const Node& node) {
  return ops::length_known_after_run(node) || slice_reads_run_time(g, node);
}

}  // namespace hone::onednn
