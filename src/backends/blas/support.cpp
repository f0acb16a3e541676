// What the blas backend accepts, node by node, with the reason for every
// refusal. Anything refused runs on the reference through CompilingBackend.
#include <set>

#include "backends/blas/blas_backend.h"
#include "backends/blas/op.h"
#include "backends/common/host_eval.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"
#include "ops/kernel_shape.h"
#include "ops/reduce.h"

namespace hone::blas {
namespace {

using node_query::check_f32_io;
using node_query::extra_outputs_used;
using node_query::is_const;
using node_query::is_const_i64;
using node_query::rank_of;
using node_query::val;

/// "" when the schema accepts the node's attributes, else its reason.
template <class T>
std::string attrs_error(const Result<T>& r) {
  return r ? "" : r.error().message();
}

std::string check_window(const Node& n, int64_t rank) {
  if (std::string e = attrs_error(ops::conv_attrs(n)); !e.empty()) return e;
  if (rank >= 0 && rank != 3 && rank != 4)
    return "input rank " + std::to_string(rank) + " (blas runs 1-D and 2-D windows)";
  return {};
}

/// Inputs that carry shapes or axes (i64), not data.
size_t data_inputs(const Node& n, int64_t opset) {
  const std::string& op = n.op_type;
  if (op == "Reshape") return 1;
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && opset >= 13) return 1;
  if (ops::reduce_kind(op) && opset >= 18) return 1;
  return n.inputs.size();
}

/// Ops whose indices, bounds, shape or condition must be known at plan time.
bool op_reads_known(const std::string& op) {
  return op == "Gather" || op == "GatherND" || op == "Slice" || op == "Split" || op == "Expand" ||
         op == "Where";
}

/// Input `i` is a constant or a host value (known when the plan is built).
bool known_at_plan(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 &&
         host_eval::host_value(g, n.inputs[i], kHostPolicy);
}

std::string why_not_index(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Where") {
    if (!known_at_plan(g, n, 0))
      return "the condition is computed at run time (blas selects by a constant or a mask made "
             "from dims)";
    for (size_t i = 1; i < 3; ++i) {
      const Value* v = val(g, n, i);
      if (v == nullptr) return "input " + std::to_string(i) + " is missing";
      if (v->kind != ValueKind::kTensor) return "input " + std::to_string(i) + " is not a tensor";
      if (v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
        return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) +
               "; blas runs f32 only";
    }
    if (n.outputs.empty() || n.outputs[0] < 0) return "no output";
    if (const DType t = g.value(n.outputs[0]).dtype; t != DType::kF32 && t != DType::kUndefined)
      return "output is " + std::string(dtype_name(t)) + "; blas runs f32 only";
    return {};
  }
  if (std::string io = check_f32_io(g, n, 1, "blas runs f32 only"); !io.empty()) return io;
  if (op == "Slice" && g.opset() < 10) return "Slice before opset 10 (bounds as attributes)";
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !known_at_plan(g, n, i))
      return "input " + std::to_string(i) +
             (op == "Gather" || op == "GatherND"
                  ? " (indices) is computed at run time (blas gathers by indices known when the "
                    "plan is built)"
                  : " is computed at run time, not from constants and dims");
  if ((op == "Gather" || op == "GatherND") && !known_at_plan(g, n, 1))
    return "the indices are missing";
  if (op == "Expand" && !known_at_plan(g, n, 1)) return "the shape is missing";
  if (op == "Split") {
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (n.outputs[i] < 0)
        return "output " + std::to_string(i) + " is not wired";
      else if (const DType t = g.value(n.outputs[i]).dtype;
               t != DType::kF32 && t != DType::kUndefined)
        return "output " + std::to_string(i) + " is " + std::string(dtype_name(t)) +
               "; blas runs f32 only";
  } else if (extra_outputs_used(n)) {
    return "more than one output";
  }
  return {};
}

/// Pad: a constant fill around a copy, its pads, value and axes known at plan time.
std::string why_not_pad(const Graph& g, const Node& n) {
  const auto a = ops::pad_attrs(n);
  if (!a) return a.error().message();
  if (a->mode != "constant") return "Pad mode '" + a->mode + "' (blas pads with a constant)";
  if (std::string io = check_f32_io(g, n, 1, "blas runs f32 only"); !io.empty()) return io;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && !known_at_plan(g, n, i))
      return "input " + std::to_string(i) +
             " (pads, value or axes) is computed at run time, not from constants and dims";
  return extra_outputs_used(n) ? "more than one output" : "";
}

std::string why_not(const Graph& g, const Node& n) {
  static const std::set<std::string> kOps = {"Conv",
                                             "Gemm",
                                             "MatMul",
                                             "BatchNormalization",
                                             "MaxPool",
                                             "AveragePool",
                                             "GlobalAveragePool",
                                             "GlobalMaxPool",
                                             "Softmax",
                                             "LogSoftmax",
                                             "LayerNormalization",
                                             "Reshape",
                                             "Flatten",
                                             "Squeeze",
                                             "Unsqueeze",
                                             "Identity",
                                             "Transpose",
                                             "Concat"};
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return "domain '" + n.domain + "' is not ONNX's default";
  // Shape arithmetic and shape-only masks and tables are evaluated when a
  // signature is planned (common/host_eval.h, kHostPolicy).
  if (host_eval::host_node(g, n, kHostPolicy)) return {};
  if (op_reads_known(n.op_type)) return why_not_index(g, n);
  if (n.op_type == "Pad") return why_not_pad(g, n);
  kernels::EwInstr instr;
  kernels::EwOp bop;
  const bool unary = unary_instr(g, n, &instr);
  const bool binary = binary_op(n, &bop);
  const std::string& op = n.op_type;
  if (!unary && !binary && !kOps.count(op) && !ops::reduce_kind(op)) {
    if (op == "Clip") return "Clip bounds must be constant f32 scalars";
    if (op == "Gelu") return "Gelu approximate must be 'none' or 'tanh'";
    return "no blas kernel for " + op;
  }
  const size_t data = data_inputs(n, g.opset());
  if (std::string io = check_f32_io(g, n, data, "blas runs f32 only"); !io.empty()) return io;
  if (unary) return extra_outputs_used(n) ? "more than one output" : "";
  if (binary) {
    if (n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return "needs two inputs";
    if (op == "PRelu" && g.opset() < 7) return "PRelu before opset 7 (per-channel slope)";
    return {};
  }
  if (op == "Conv") {
    const int64_t wr = rank_of(val(g, n, 1));
    if (wr >= 0 && wr != 3 && wr != 4)
      return "weights rank " + std::to_string(wr) + " (blas runs 1-D and 2-D convs)";
    if (val(g, n, 2) && !is_const(g, n, 2)) return "the bias must be a constant";
    const auto ca = ops::conv_attrs(n);
    if (!ca) return ca.error().message();
    if (is_const(g, n, 1)) {
      const auto& wd = g.value(n.inputs[1]).initializer->shape();
      if (auto k = ops::check_kernel_shape(ca->kernel_shape, wd); !k) return k.error().message();
    }
    return check_window(n, wr >= 0 ? wr : rank_of(val(g, n, 0)));
  }
  if (op == "Gemm") {
    for (size_t i = 0; i < 2; ++i)
      if (rank_of(val(g, n, i)) >= 0 && rank_of(val(g, n, i)) != 2) return "A and B must be 2-D";
    const auto ga = ops::gemm_attrs(n);
    if (!ga) return ga.error().message();
    const float beta = ga->beta;
    if (val(g, n, 2) && beta != 1.0f && beta != 0.0f && !is_const(g, n, 2))
      return "beta != 1 with a non-constant C";
    if (rank_of(val(g, n, 2)) > 2) return "C has rank > 2";
    return {};
  }
  if (op == "MatMul") {
    if (rank_of(val(g, n, 0)) == 0 || rank_of(val(g, n, 1)) == 0) return "a scalar operand";
    return {};
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (extra_outputs_used(n)) return "the Indices output is not supported";
    if (!n.has_attr("kernel_shape")) return "kernel_shape is missing";
    if (std::string e = attrs_error(ops::pool_attrs(n)); !e.empty()) return e;
    return check_window(n, rank_of(val(g, n, 0)));
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    const int64_t r = rank_of(val(g, n, 0));
    return r >= 0 && r < 3 ? "input rank " + std::to_string(r) + " (needs N, C and spatial dims)"
                           : "";
  }
  if (op == "BatchNormalization") {
    const auto ba = ops::batch_norm_attrs(n);
    if (!ba) return ba.error().message();
    if (ba->training_mode) return "training_mode=1";
    if (!ba->spatial) return "spatial=0";
    if (extra_outputs_used(n)) return "running mean/var outputs are not supported";
    for (size_t i = 1; i < 5; ++i)
      if (!is_const(g, n, i)) return "scale, bias, mean and var must be constants";
    const int64_t r = rank_of(val(g, n, 0));
    return r >= 0 && r < 2 ? "input rank " + std::to_string(r) + " (needs N and C)" : "";
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
  if (op == "Reshape")
    return known_at_plan(g, n, 1)
               ? ""
               : "the shape is computed at run time, not from constants and dims";
  if (op == "Squeeze" || op == "Unsqueeze" || ops::reduce_kind(op)) {
    if (data < n.inputs.size() && n.inputs.size() > 1 && n.inputs[1] >= 0 && !is_const_i64(g, n, 1))
      return "axes must be a constant i64 tensor";
    return {};
  }
  return {};  // Softmax, LogSoftmax, Flatten, Identity, Transpose, Concat
}

}  // namespace

NodeSupport supports_node(const Graph& g, const Node& node) {
  return node_query::support_from(why_not(g, node));
}

}  // namespace hone::blas
