// Zero-sized values in a oneDNN plan. A value with a zero dim holds no
// element, so it is known once its dims are: it is kept as a plan-time value
// (an empty tensor of its dtype), never bound to a buffer, and no primitive
// ever sees it. That is not only tidiness: oneDNN 2.6 divides by zero on
// zero dims (a reorder's execution, a matmul's primitive descriptor: SIGFPE),
// so an empty tensor must never reach it. Zero-sized tensors are legal ONNX
// and common at run time: a detector's NonZero over the boxes of an empty
// feature level ([1, 0] indices), a dynamic dim at 0.
//
// A node reading such a value (plan.h: reads_empty) is lowered here, by the
// rules onednn shares with blas (backends/common/empty_values.h):
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
#include <vector>

#include "backends/common/empty_values.h"
#include "backends/onednn/plan.h"

namespace hone::onednn {
namespace {

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

}  // namespace

bool reads_empty(const PlanBuilder& b, const Node& n) {
  for (ValueId v : n.inputs)
    if (v >= 0 && b.is_empty(v)) return true;
  return false;
}

Result<void> lower_empty(PlanBuilder& b, const Node& n) {
  host_eval::Env env;
  env.dims = [&](ValueId v) -> const std::vector<int64_t>* {
    if (b.has(v)) return &b.value(v).dims;
    const Tensor* t = b.constant(v);
    return t != nullptr ? &t->shape() : nullptr;
  };
  env.value = [&](ValueId v) { return b.constant(v); };
  HONE_TRY(empty_values::Outcome r,
           empty_values::evaluate(b.graph(), n, env, [&](ValueId v) { return b.dtype(v); }));
  if (r.known || r.all_empty()) {
    set_known_outputs(b, n, std::move(r.outputs));
    return {};
  }
  if (n.op_type == "Concat") return lower_shape(b, n);  // joins the parts that are not empty
  if (empty_values::scatter_without_index(n, [&](ValueId v) { return b.is_empty(v); }) &&
      b.has(n.inputs[0])) {
    alias(b, n, b.value(n.inputs[0]).dims);  // no index: the data as it is
    return {};
  }
  return fail(ErrorCode::kUnsupported,
              n.op_type +
                  " reads an empty tensor but its output is not empty, and it reads "
                  "values known only at run time: onednn has no rule for that");
}

}  // namespace hone::onednn
