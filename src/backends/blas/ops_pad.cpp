// Pad with a constant: the output filled with the value, the input's kept
// part (after negative pads crop it) copied into its window. The pads, the
// value and the axes are known when the plan is built (constants, or host
// values computed from dims), and ops::pad_window resolves them the ONNX way.
#include <algorithm>

#include "backends/blas/op.h"
#include "ops/attrs.h"
#include "ops/pad.h"

namespace hone::blas {
namespace {

dims_t row_major_strides(const dims_t& d) {
  dims_t s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

/// Copies the `window` box from `x` (strides `xs`) to `y` (strides `ys`),
/// the innermost axis as one contiguous run.
void copy_box(const dims_t& window, const dims_t& xs, const dims_t& ys, const float* x, float* y,
              ThreadPool& pool) {
  const size_t r = window.size();
  if (r == 0) {
    *y = *x;
    return;
  }
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < r; ++a) rows *= window[a];
  const int64_t run = window[r - 1];
  pool.parallel_for(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t xo = 0, yo = 0, rest = row;
          for (size_t a = r - 1; a-- > 0;) {
            const int64_t i = rest % window[a];
            rest /= window[a];
            xo += i * xs[a];
            yo += i * ys[a];
          }
          std::copy(x + xo, x + xo + run, y + yo);
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(run, 1)));
}

/// The constant_value input (opset 11 on), known when planning, or the
/// value attribute before it; 0 when neither is given.
Result<float> pad_value(const Node& n, int64_t opset, const ops::PadAttrs& a,
                        const host_eval::Env& env) {
  if (opset < 11) return a.value;
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return 0.0f;
  const Tensor* t = env.value ? env.value(n.inputs[2]) : nullptr;
  if (t == nullptr)
    return fail(ErrorCode::kInternal, n.describe() + ": constant_value is not known at plan time");
  if (t->numel() > 1)
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": constant_value has " +
                                                 std::to_string(t->numel()) +
                                                 " elements, expected one");
  return t->numel() == 0 ? 0.0f : static_cast<float>(tensor_element_as_double(*t, 0));
}

Result<OpPlan> plan_pad(const Node& n, int64_t opset, const std::vector<dims_t>& in,
                        const PlanEnv& env) {
  HONE_TRY(const ops::PadAttrs a, ops::pad_attrs(n));
  if (a.mode != "constant")
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": Pad mode '" + a.mode + "' (blas pads with a constant)");
  const dims_t& x = in[0];
  std::vector<int64_t> pads = a.pads, axes;
  const bool has_axes = opset >= 18 && n.inputs.size() > 3 && n.inputs[3] >= 0;
  if (opset >= 11) {
    HONE_TRY(pads, host_eval::ints(n, 1, env.known, "Pad pads"));
    if (has_axes) {
      HONE_TRY(axes, host_eval::ints(n, 3, env.known, "Pad axes"));
    }
  }
  HONE_TRY(const float value, pad_value(n, opset, a, env.known));
  auto w = ops::pad_window(x, pads, has_axes ? &axes : nullptr);
  if (!w) return fail(std::move(w).error().add_context("in " + n.describe()));
  const dims_t xs = row_major_strides(x), ys = row_major_strides(w->out);
  int64_t src = 0, dst = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    src += w->kept_from[d] * xs[d];
    dst += std::max<int64_t>(0, w->begin[d]) * ys[d];
  }
  const bool padded = w->pads_any();
  int64_t total = 1, kept = 1;
  for (size_t d = 0; d < x.size(); ++d) total *= w->out[d], kept *= w->kept[d];
  OpPlan p;
  p.outputs = {w->out};
  p.kernel = padded ? "pad.f32.blas.fill+strided_copy" : "pad.f32.blas.strided_copy";
  p.run = [=, window = w->kept](const RunArgs& r) {
    if (padded) std::fill(r.outputs[0], r.outputs[0] + total, value);
    if (kept > 0) copy_box(window, xs, ys, r.inputs[0] + src, r.outputs[0] + dst, *r.pool);
  };
  return p;
}

}  // namespace

Result<Unit> create_pad(const BlockInfo& b, const Node& n) {
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  u.inputs = {n.inputs[0]};  // pads, value and axes are read when planning
  const int64_t opset = b.g.opset();
  const Node node = n;
  u.op = std::make_unique<FnOp>([node, opset](const std::vector<dims_t>& in, const PlanEnv& env) {
    return plan_pad(node, opset, in, env);
  });
  return u;
}

}  // namespace hone::blas
