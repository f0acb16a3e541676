// Zero-sized values in a oneDNN plan. A value with a zero dim holds no
// element, so it is known once its dims are: it is kept as a plan-time value
// (an empty tensor of its dtype), never bound to a buffer, and no primitive
// ever sees it. That is not only tidiness: oneDNN 2.6 divides by zero on
// zero dims (a reorder's execution, a matmul's primitive descriptor: SIGFPE),
// so an empty tensor must never reach it. Zero-sized tensors are legal ONNX
// and common at run time: a detector's NonZero over the boxes of an empty
// feature level ([1, 0] indices), a dynamic dim at 0.
//
// A node reading such a value (plan.h: reads_empty) is lowered here:
// - every input known at plan time (the empty ones, constants, host values):
//   the node is evaluated now on the reference (host_eval), whatever its
//   output; a Gemm of K = 0 gives its bias, a ReduceSum of an empty axis 0;
// - else its outputs' dims come from the reference run on zeros in place of
//   the inputs known only at run time (their dims are what counts); empty
//   outputs are empty values again, with no step;
// - else the output is not empty though some input is and another is known
//   only at run time: Concat joins its non-empty parts (lower_shape), and
//   Scatter/ScatterElements/ScatterND with no index is its data; any other
//   op is refused (kUnsupported, so the block runs on the reference).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/onednn/plan.h"

namespace hone::onednn {
namespace {

/// The first input slot of `op` whose values (not dims) its output's shape
/// depends on (a Reshape's target, Slice's bounds, TopK's K...), or none.
/// Zeros in place of such an input known only at run time would give a
/// wrong shape, so such a node is refused.
std::optional<size_t> shape_from_values(const std::string& op) {
  static const std::map<std::string, size_t> kFrom = {{"Reshape", 1},
                                                      {"Expand", 1},
                                                      {"Tile", 1},
                                                      {"Slice", 1},
                                                      {"Pad", 1},
                                                      {"Resize", 1},
                                                      {"Upsample", 1},
                                                      {"Split", 1},
                                                      {"Squeeze", 1},
                                                      {"Unsqueeze", 1},
                                                      {"TopK", 1},
                                                      {"OneHot", 1},
                                                      {"CenterCropPad", 1},
                                                      {"Compress", 1},
                                                      {"ReduceSum", 1},
                                                      {"ReduceMean", 1},
                                                      {"ReduceMax", 1},
                                                      {"ReduceMin", 1},
                                                      {"ReduceProd", 1},
                                                      {"ReduceL1", 1},
                                                      {"ReduceL2", 1},
                                                      {"ReduceLogSum", 1},
                                                      {"ReduceLogSumExp", 1},
                                                      {"ReduceSumSquare", 1},
                                                      {"ConstantOfShape", 0},
                                                      {"Range", 0},
                                                      {"NonZero", 0},
                                                      {"Unique", 0},
                                                      {"NonMaxSuppression", 0}};
  auto it = kFrom.find(op);
  return it == kFrom.end() ? std::nullopt : std::optional(it->second);
}

/// Sets `n`'s outputs from tensors computed at plan time (one per wired
/// output): an empty one is an empty value; an f32 one gets a constant buffer
/// the primitives read, as a host node's does.
void set_known_outputs(PlanBuilder& b, const Node& n, std::vector<Tensor> outs) {
  size_t k = 0;
  for (ValueId v : n.outputs) {
    if (v < 0) continue;
    Tensor t = std::move(outs[k++]);
    if (t.numel() == 0) {
      b.set_empty(v, std::move(t));
      continue;
    }
    if (t.dtype() == DType::kF32)
      b.set(v, PValue{t.shape(), {b.new_constant(t), plain_md(t.shape())}});
    b.set_host(v, std::move(t));
  }
}

/// `n` evaluated on the reference now, `value` giving each input.
Result<std::vector<Tensor>> evaluate_now(const PlanBuilder& b, const Node& n,
                                         const std::function<const Tensor*(ValueId)>& value) {
  host_eval::Env env;
  env.dims = [&](ValueId v) -> const std::vector<int64_t>* {
    if (b.has(v)) return &b.value(v).dims;
    const Tensor* t = b.constant(v);
    return t != nullptr ? &t->shape() : nullptr;
  };
  env.value = value;
  return host_eval::evaluate(b.graph(), n, env);
}

}  // namespace

bool reads_empty(const PlanBuilder& b, const Node& n) {
  for (ValueId v : n.inputs)
    if (v >= 0 && b.is_empty(v)) return true;
  return false;
}

Result<void> lower_empty(PlanBuilder& b, const Node& n) {
  bool all_known = true;
  for (ValueId v : n.inputs) all_known = all_known && (v < 0 || b.constant(v) != nullptr);
  if (all_known) {
    HONE_TRY(std::vector<Tensor> outs,
             evaluate_now(b, n, [&](ValueId v) { return b.constant(v); }));
    set_known_outputs(b, n, std::move(outs));
    return {};
  }
  // Zeros stand for the inputs known only at run time: only their dims count.
  std::map<ValueId, Tensor> zeros;
  const std::optional<size_t> from = shape_from_values(n.op_type);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ValueId v = n.inputs[i];
    if (v < 0 || b.constant(v) != nullptr || zeros.count(v)) continue;
    if (from && i >= *from)
      return fail(ErrorCode::kUnsupported,
                  n.op_type + " reads an empty tensor, and its output's shape depends on input '" +
                      b.graph().value(v).name + "', known only at run time");
    const DType t = b.dtype(v) == DType::kUndefined ? DType::kF32 : b.dtype(v);
    HONE_TRY(Tensor z, Tensor::allocate(t, value_dims(b, v)));
    zeros.emplace(v, std::move(z));
  }
  HONE_TRY(std::vector<Tensor> outs, evaluate_now(b, n, [&](ValueId v) -> const Tensor* {
             auto it = zeros.find(v);
             return it != zeros.end() ? &it->second : b.constant(v);
           }));
  bool all_empty = true;
  for (const Tensor& t : outs) all_empty = all_empty && t.numel() == 0;
  if (all_empty) {
    set_known_outputs(b, n, std::move(outs));
    return {};
  }
  if (n.op_type == "Concat") return lower_shape(b, n);  // joins the parts that are not empty
  if ((n.op_type == "ScatterElements" || n.op_type == "ScatterND" || n.op_type == "Scatter") &&
      n.inputs.size() > 1 && n.inputs[1] >= 0 && b.is_empty(n.inputs[1]) && b.has(n.inputs[0])) {
    alias(b, n, b.value(n.inputs[0]).dims);  // no index: the data as it is
    return {};
  }
  return fail(ErrorCode::kUnsupported,
              n.op_type +
                  " reads an empty tensor but its output is not empty, and it reads "
                  "values known only at run time: onednn has no rule for that");
}

}  // namespace hone::onednn
