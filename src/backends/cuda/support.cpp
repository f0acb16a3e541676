// What the cuda backend accepts, node by node, with the reason for every
// refusal. Anything refused runs on the reference through CompilingBackend.
#include <set>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/op.h"

namespace hone::cuda {
namespace {

const Value* val(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? &g.value(n.inputs[i]) : nullptr;
}

bool is_const(const Graph& g, const Node& n, size_t i) {
  const Value* v = val(g, n, i);
  return v != nullptr && v->initializer.has_value();
}

bool is_const_i64(const Graph& g, const Node& n, size_t i) {
  return is_const(g, n, i) && g.value(n.inputs[i]).initializer->dtype() == DType::kI64;
}

int64_t rank_of(const Value* v) {
  return v && v->shape ? static_cast<int64_t>(v->shape->rank()) : -1;
}

bool extra_outputs_used(const Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return true;
  return false;
}

/// Inputs that carry data (f32), not shapes or axes (i64).
size_t data_inputs(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Reshape") return 1;
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && g.opset() >= 13) return 1;
  if ((op == "ReduceMean" || op == "ReduceMax") && g.opset() >= 18) return 1;
  if (op == "Clip") return 1;
  return n.inputs.size();
}

std::string why_not(const Graph& g, const Node& n) {
  static const std::set<std::string> kOps = {"Conv",          "Gemm",
                                             "MatMul",        "MaxPool",
                                             "AveragePool",   "GlobalAveragePool",
                                             "GlobalMaxPool", "Softmax",
                                             "LogSoftmax",    "LayerNormalization",
                                             "ReduceMean",    "ReduceSum",
                                             "ReduceMax",     "Reshape",
                                             "Flatten",       "Squeeze",
                                             "Unsqueeze",     "Transpose",
                                             "Concat"};
  if (!n.domain.empty() && n.domain != "ai.onnx")
    return "domain '" + n.domain + "' is not ONNX's default";
  const std::string& op = n.op_type;
  const bool eltwise = !eltwise_expr(g, n, std::vector<std::string>(eltwise_arity(n), "x")).empty();
  if (!eltwise && !kOps.count(op)) {
    if (op == "Clip") return "Clip bounds must be constant f32 scalars";
    if (op == "Gelu") return "Gelu approximate must be 'none' or 'tanh'";
    if (op == "Max" || op == "Min") return op + " with other than two inputs";
    return "no cuda kernel for " + op;
  }
  for (size_t i = 0; i < data_inputs(g, n); ++i) {
    const Value* v = val(g, n, i);
    if (v != nullptr && v->dtype != DType::kF32 && v->dtype != DType::kUndefined)
      return "input " + std::to_string(i) + " is " + std::string(dtype_name(v->dtype)) +
             "; cuda runs f32 only";
    if (v != nullptr && v->kind != ValueKind::kTensor)
      return "input " + std::to_string(i) + " is not a tensor";
  }
  if (n.outputs.empty() || n.outputs[0] < 0) return "no output";
  if (const DType t = g.value(n.outputs[0]).dtype; t != DType::kF32 && t != DType::kUndefined)
    return "output is " + std::string(dtype_name(t)) + "; cuda runs f32 only";
  if (extra_outputs_used(n)) return "more than one output";
  if (eltwise) {
    for (size_t i = 0; i < eltwise_arity(n); ++i)
      if (val(g, n, i) == nullptr) return "input " + std::to_string(i) + " is missing";
    return {};
  }
  if (op == "Conv") {
    const int64_t wr = rank_of(val(g, n, 1));
    if (wr >= 0 && wr != 3 && wr != 4)
      return "weights rank " + std::to_string(wr) + " (cuda runs 1-D and 2-D convs)";
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
    if (r >= 0 && r != 3 && r != 4)
      return "input rank " + std::to_string(r) + " (cuda runs 1-D and 2-D pools)";
    return {};
  }
  if (op == "LayerNormalization") {
    if (n.attr_int("stash_type", 1) != 1) return "stash_type other than f32";
    return {};
  }
  if (op == "Reshape") return is_const_i64(g, n, 1) ? "" : "shape is not a constant i64 tensor";
  if (data_inputs(g, n) == 1 && n.inputs.size() > 1 && n.inputs[1] >= 0 && !is_const_i64(g, n, 1))
    return "axes must be a constant i64 tensor";
  return {};
}

}  // namespace

NodeSupport supports_node(const Graph& g, const Node& node) {
  std::string why = why_not(g, node);
  return why.empty() ? NodeSupport::yes() : NodeSupport::no(std::move(why));
}

}  // namespace hone::cuda
