// Reference kernels for ONNX control flow: If, Loop and Scan. Bodies run
// through KernelContext::run_subgraph, so names they capture resolve in the
// enclosing graphs. Sequence and optional ops live in ops_control_sequence.cpp.
#include "eval/ops.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "eval/control_flow.h"
#include "eval/kernel_util.h"
#include "eval/ops_control_internal.h"
#include "hone/shape.h"
#include "ops/axis.h"

namespace hone::eval {
namespace control {

namespace {

int64_t product(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

}  // namespace

Tensor slice_along(const Tensor& t, int64_t axis, int64_t index) {
  std::vector<int64_t> shape = t.shape();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = product(shape, 0, a);
  const int64_t n = shape[a];
  const size_t inner =
      static_cast<size_t>(product(shape, a + 1, shape.size())) * dtype_size(t.dtype());
  shape.erase(shape.begin() + axis);
  Tensor out = Tensor::zeros(t.dtype(), shape);
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.raw());
  if (inner == 0) return out;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * inner,
                src + static_cast<size_t>(o * n + index) * inner, inner);
  return out;
}

Tensor narrow_along(const Tensor& t, int64_t axis, int64_t begin, int64_t count) {
  std::vector<int64_t> shape = t.shape();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = product(shape, 0, a);
  const int64_t n = shape[a];
  const size_t inner =
      static_cast<size_t>(product(shape, a + 1, shape.size())) * dtype_size(t.dtype());
  shape[a] = count;
  Tensor out = Tensor::zeros(t.dtype(), shape);
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.raw());
  const size_t chunk = inner * static_cast<size_t>(count);
  if (chunk == 0) return out;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * chunk,
                src + (static_cast<size_t>(o * n + begin)) * inner, chunk);
  return out;
}

Result<Tensor> stack_along(const std::vector<Tensor>& parts, int64_t axis,
                           const std::string& what) {
  const Tensor& first = parts.front();
  for (size_t k = 1; k < parts.size(); ++k)
    if (parts[k].dtype() != first.dtype() || parts[k].shape() != first.shape())
      return fail(ErrorCode::kInvalidArgument,
                  what + ": element " + std::to_string(k) + " is " + parts[k].describe() +
                      " but element 0 is " + first.describe() + "; they must match to be stacked");
  std::vector<int64_t> shape = first.shape();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = product(shape, 0, a);
  const size_t inner =
      static_cast<size_t>(product(shape, a, shape.size())) * dtype_size(first.dtype());
  shape.insert(shape.begin() + axis, static_cast<int64_t>(parts.size()));
  HONE_TRY(Tensor out, Tensor::allocate(first.dtype(), shape));
  auto* dst = static_cast<unsigned char*>(out.raw());
  if (inner == 0) return out;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < parts.size(); ++k)
      std::memcpy(
          dst + (static_cast<size_t>(o) * parts.size() + k) * inner,
          static_cast<const unsigned char*>(parts[k].raw()) + static_cast<size_t>(o) * inner,
          inner);
  return out;
}

Result<Tensor> concat_along(const std::vector<Tensor>& parts, int64_t axis,
                            const std::string& what) {
  const Tensor& first = parts.front();
  const size_t a = static_cast<size_t>(axis);
  std::vector<int64_t> shape = first.shape();
  int64_t total = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const Tensor& p = parts[k];
    bool ok = p.dtype() == first.dtype() && p.rank() == first.rank();
    for (size_t d = 0; ok && d < p.rank(); ++d) ok = d == a || p.dim(d) == first.dim(d);
    if (!ok)
      return fail(ErrorCode::kInvalidArgument, what + ": element " + std::to_string(k) + " is " +
                                                   p.describe() + " but element 0 is " +
                                                   first.describe() + "; all dims except axis " +
                                                   std::to_string(axis) + " must match");
    total += p.dim(a);
  }
  shape[a] = total;
  HONE_TRY(Tensor out, Tensor::allocate(first.dtype(), shape));
  const int64_t outer = product(shape, 0, a);
  const size_t inner =
      static_cast<size_t>(product(shape, a + 1, shape.size())) * dtype_size(first.dtype());
  auto* dst = static_cast<unsigned char*>(out.raw());
  size_t offset = 0;
  const size_t row = inner * static_cast<size_t>(total);
  for (const Tensor& p : parts) {
    const size_t chunk = inner * static_cast<size_t>(p.dim(a));
    if (chunk != 0)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + static_cast<size_t>(o) * row + offset,
                    static_cast<const unsigned char*>(p.raw()) + static_cast<size_t>(o) * chunk,
                    chunk);
    offset += chunk;
  }
  return out;
}

Result<int64_t> scalar_int(const Tensor& t, const std::string& what) {
  if (t.numel() != 1 || !(is_integer(t.dtype()) || t.dtype() == DType::kBool))
    return fail(ErrorCode::kInvalidArgument,
                what + " must be a one-element integer tensor, got " + t.describe());
  return tensor_element_as_int64(t, 0);
}

Result<bool> scalar_bool(const Tensor& t, const std::string& what) {
  if (t.numel() != 1)
    return fail(ErrorCode::kInvalidArgument, what + " must have one element, got " + t.describe());
  if (t.dtype() == DType::kBool) return t.data<bool>()[0];
  if (is_integer(t.dtype())) return tensor_element_as_int64(t, 0) != 0;
  return fail(ErrorCode::kInvalidArgument, what + " must be a bool tensor, got " + t.describe());
}

std::string describe_value(const RuntimeValue& v) {
  switch (v.kind) {
    case RuntimeValue::Kind::kNone:
      return v.optional ? "an empty optional" : "no value";
    case RuntimeValue::Kind::kTensor:
      return "tensor " + v.tensor.describe();
    case RuntimeValue::Kind::kSequence:
      return "sequence of " + std::to_string(v.sequence.size()) + " " +
             std::string(dtype_name(v.elem_type));
  }
  return "?";
}

namespace {

// --- If ------------------------------------------------------------------------------

Result<void> if_op(KernelContext& ctx) {
  HONE_TRY(const Tensor* cond_t, ctx.tensor(0));
  HONE_TRY(bool cond, scalar_bool(*cond_t, "If condition"));
  const char* key = cond ? "then_branch" : "else_branch";
  const Graph* branch = ctx.node().attr_graph(key);
  if (branch == nullptr)
    return fail(ErrorCode::kInvalidArgument, std::string("If is missing its '") + key + "' graph");
  if (!branch->inputs().empty())
    return fail(ErrorCode::kInvalidArgument, std::string("If ") + key +
                                                 " must take no inputs, it takes " +
                                                 std::to_string(branch->inputs().size()));
  HONE_TRY(std::vector<RuntimeValue> outs, ctx.run_subgraph(*branch, {}));
  if (outs.size() != ctx.num_outputs())
    return fail(ErrorCode::kInvalidArgument,
                std::string("If ") + key + " returns " + std::to_string(outs.size()) +
                    " values but the node has " + std::to_string(ctx.num_outputs()) + " outputs");
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output_value(i, std::move(outs[i]));
  return {};
}

// --- Loop ------------------------------------------------------------------------------

// Shape of a stacked scan output when the loop ran zero times: [0] followed by
// the body output's declared shape if it is fully static, else just [0].
std::vector<int64_t> empty_scan_shape(const Graph& body, size_t output) {
  std::vector<int64_t> shape{0};
  const Value& v = body.value(body.outputs()[output]);
  if (v.shape && v.shape->is_static())
    for (size_t a = 0; a < v.shape->rank(); ++a) shape.push_back((*v.shape)[a].value());
  return shape;
}

DType declared_dtype(const Graph& body, size_t output, DType fallback) {
  const DType d = body.value(body.outputs()[output]).dtype;
  return d == DType::kUndefined ? fallback : d;
}

Result<void> loop_op(KernelContext& ctx) {
  const Graph* body = ctx.node().attr_graph("body");
  if (body == nullptr) return fail(ErrorCode::kInvalidArgument, "Loop is missing its 'body' graph");
  // M and cond may be omitted at the end too (a node with inputs [M] only).
  const size_t n_carried = ctx.num_inputs() > 2 ? ctx.num_inputs() - 2 : 0;
  if (ctx.num_outputs() < n_carried)
    return fail(ErrorCode::kInvalidArgument, "Loop has " + std::to_string(n_carried) +
                                                 " loop-carried inputs but only " +
                                                 std::to_string(ctx.num_outputs()) + " outputs");
  const size_t n_scan = ctx.num_outputs() - n_carried;
  if (body->inputs().size() != 2 + n_carried)
    return fail(ErrorCode::kInvalidArgument,
                "Loop body must take 2 + " + std::to_string(n_carried) +
                    " inputs (iteration_num, cond, loop-carried), it takes " +
                    std::to_string(body->inputs().size()));
  if (body->outputs().size() != 1 + n_carried + n_scan)
    return fail(ErrorCode::kInvalidArgument,
                "Loop body must return 1 + " + std::to_string(n_carried) + " + " +
                    std::to_string(n_scan) +
                    " values (cond, loop-carried, scan outputs), it returns " +
                    std::to_string(body->outputs().size()));

  const bool has_m = ctx.has_input(0);
  const bool has_cond = ctx.has_input(1);
  int64_t max_trips = 0;
  if (has_m) {
    HONE_TRY(const Tensor* m, ctx.tensor(0));
    HONE_TRY(max_trips, scalar_int(*m, "Loop trip count M"));
  }
  bool cond = true;
  if (has_cond) {
    HONE_TRY(const Tensor* c, ctx.tensor(1));
    HONE_TRY(cond, scalar_bool(*c, "Loop condition"));
  }
  if (!has_m && !has_cond)
    return fail(ErrorCode::kUnsupported,
                "Loop with neither a trip count M nor a condition never stops");

  std::vector<RuntimeValue> carried(n_carried);
  for (size_t i = 0; i < n_carried; ++i) {
    const RuntimeValue* v = ctx.value(2 + i);
    if (v == nullptr)
      return fail(ErrorCode::kInvalidArgument,
                  "Loop loop-carried input " + std::to_string(i) + " is missing");
    carried[i] = *v;
  }
  std::vector<std::vector<Tensor>> scans(n_scan);
  // ONNX makes iteration_num a scalar; PyTorch's TorchScript exporter declares
  // it [1] (torch.tensor_split's Loop) and its body computes with that shape,
  // as ONNX Runtime runs it. A body declaring one element of rank 1 gets it so.
  const Value& iter_decl = body->value(body->inputs()[0]);
  const bool iter_1d = iter_decl.shape && iter_decl.shape->rank() == 1 &&
                       (*iter_decl.shape)[0].is_static() && (*iter_decl.shape)[0].value() == 1;

  for (int64_t iter = 0; (!has_m || iter < max_trips) && cond; ++iter) {
    std::vector<RuntimeValue> ins;
    ins.reserve(2 + n_carried);
    ins.push_back(RuntimeValue::of(iter_1d ? Tensor::from<int64_t>({1}, {iter})
                                           : Tensor::scalar<int64_t>(iter)));
    ins.push_back(RuntimeValue::of(Tensor::scalar<bool>(cond)));
    for (RuntimeValue& v : carried) ins.push_back(std::move(v));
    HONE_TRY(std::vector<RuntimeValue> outs, ctx.run_subgraph(*body, std::move(ins)));
    const std::string where = "Loop iteration " + std::to_string(iter);
    if (has_cond) {
      if (!outs[0].is_tensor())
        return fail(ErrorCode::kInvalidArgument,
                    where + ": body condition must be a tensor, got " + describe_value(outs[0]));
      HONE_TRY(cond, scalar_bool(outs[0].tensor, where + ": body condition"));
    }
    for (size_t i = 0; i < n_carried; ++i) carried[i] = std::move(outs[1 + i]);
    for (size_t k = 0; k < n_scan; ++k) {
      RuntimeValue& s = outs[1 + n_carried + k];
      if (!s.is_tensor())
        return fail(ErrorCode::kInvalidArgument, where + ": scan output " + std::to_string(k) +
                                                     " must be a tensor, got " + describe_value(s));
      scans[k].push_back(std::move(s.tensor));
    }
  }

  for (size_t i = 0; i < n_carried; ++i) ctx.set_output_value(i, std::move(carried[i]));
  for (size_t k = 0; k < n_scan; ++k) {
    if (!ctx.wants_output(n_carried + k)) continue;
    if (scans[k].empty()) {
      const DType dt = declared_dtype(*body, 1 + n_carried + k, DType::kF32);
      ctx.set_output(n_carried + k, Tensor::zeros(dt, empty_scan_shape(*body, 1 + n_carried + k)));
      continue;
    }
    HONE_TRY(Tensor stacked, stack_along(scans[k], 0, "Loop scan output " + std::to_string(k)));
    ctx.set_output(n_carried + k, std::move(stacked));
  }
  return {};
}

// --- Scan ----------------------------------------------------------------------------------

struct ScanConfig {
  size_t n_state = 0, n_in = 0, n_out = 0;
  std::vector<int64_t> in_axes, in_reverse, out_axes, out_reverse;
};

// One scan over `states` and `inputs` (already sliced to the batch row for
// opset 8), stacking each scan output along its axis.
Result<void> scan_once(KernelContext& ctx, const Graph& body, const ScanConfig& c,
                       std::vector<RuntimeValue>& states, const std::vector<const Tensor*>& inputs,
                       int64_t length, std::vector<Tensor>& out_scans) {
  std::vector<std::vector<Tensor>> parts(c.n_out);
  for (int64_t step = 0; step < length; ++step) {
    std::vector<RuntimeValue> ins;
    ins.reserve(c.n_state + c.n_in);
    for (RuntimeValue& s : states) ins.push_back(std::move(s));
    for (size_t j = 0; j < c.n_in; ++j) {
      const int64_t t = c.in_reverse[j] ? length - 1 - step : step;
      ins.push_back(RuntimeValue::of(slice_along(*inputs[j], c.in_axes[j], t)));
    }
    HONE_TRY(std::vector<RuntimeValue> outs, ctx.run_subgraph(body, std::move(ins)));
    for (size_t i = 0; i < c.n_state; ++i) states[i] = std::move(outs[i]);
    for (size_t k = 0; k < c.n_out; ++k) {
      RuntimeValue& v = outs[c.n_state + k];
      if (!v.is_tensor())
        return fail(ErrorCode::kInvalidArgument, "Scan step " + std::to_string(step) +
                                                     ": scan output " + std::to_string(k) +
                                                     " must be a tensor, got " + describe_value(v));
      parts[k].push_back(std::move(v.tensor));
    }
  }
  out_scans.assign(c.n_out, Tensor());
  for (size_t k = 0; k < c.n_out; ++k) {
    if (parts[k].empty()) {
      std::vector<int64_t> shape = empty_scan_shape(body, c.n_state + k);
      out_scans[k] = Tensor::zeros(declared_dtype(body, c.n_state + k, DType::kF32), shape);
      continue;
    }
    if (c.out_reverse[k]) std::reverse(parts[k].begin(), parts[k].end());
    const int64_t rank = static_cast<int64_t>(parts[k][0].rank());
    int64_t axis = c.out_axes[k];
    if (axis < -(rank + 1) || axis > rank)
      return fail(ErrorCode::kInvalidArgument,
                  "Scan scan_output_axes[" + std::to_string(k) + "] = " + std::to_string(axis) +
                      " is out of range for rank-" + std::to_string(rank) + " outputs");
    axis = *ops::try_normalize_axis(axis, rank + 1);  // an axis of the stacked outputs
    HONE_TRY(out_scans[k], stack_along(parts[k], axis, "Scan output " + std::to_string(k)));
  }
  return {};
}

Result<std::vector<int64_t>> per_input_attr(const Node& node, const char* key, size_t n,
                                            int64_t fallback) {
  std::vector<int64_t> v = node.attr_ints(key);
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  if (v.size() != n)
    return fail(ErrorCode::kInvalidArgument, std::string("Scan ") + key + " has " +
                                                 std::to_string(v.size()) + " entries, expected " +
                                                 std::to_string(n));
  return v;
}

Result<void> scan_op(KernelContext& ctx) {
  const Node& node = ctx.node();
  const Graph* body = node.attr_graph("body");
  if (body == nullptr) return fail(ErrorCode::kInvalidArgument, "Scan is missing its 'body' graph");
  const bool v8 = ctx.opset() < 9;
  const size_t first = v8 ? 1 : 0;  // opset 8 starts with sequence_lens
  ScanConfig c;
  const int64_t m = node.attr_int("num_scan_inputs", -1);
  if (m < 0 || static_cast<size_t>(m) + first > ctx.num_inputs())
    return fail(ErrorCode::kInvalidArgument, "Scan num_scan_inputs = " + std::to_string(m) +
                                                 " does not fit its " +
                                                 std::to_string(ctx.num_inputs()) + " inputs");
  c.n_in = static_cast<size_t>(m);
  c.n_state = ctx.num_inputs() - first - c.n_in;
  if (ctx.num_outputs() < c.n_state)
    return fail(ErrorCode::kInvalidArgument, "Scan has " + std::to_string(c.n_state) +
                                                 " state inputs but " +
                                                 std::to_string(ctx.num_outputs()) + " outputs");
  c.n_out = ctx.num_outputs() - c.n_state;
  if (body->inputs().size() != c.n_state + c.n_in || body->outputs().size() != c.n_state + c.n_out)
    return fail(ErrorCode::kInvalidArgument,
                "Scan body takes " + std::to_string(body->inputs().size()) +
                    " inputs and returns " + std::to_string(body->outputs().size()) +
                    ", expected " + std::to_string(c.n_state + c.n_in) + " and " +
                    std::to_string(c.n_state + c.n_out));

  std::vector<RuntimeValue> states(c.n_state);
  for (size_t i = 0; i < c.n_state; ++i) {
    const RuntimeValue* v = ctx.value(first + i);
    if (v == nullptr || !v->is_tensor())
      return fail(ErrorCode::kInvalidArgument,
                  "Scan state input " + std::to_string(i) + " must be a tensor");
    states[i] = *v;
  }
  std::vector<const Tensor*> inputs(c.n_in);
  for (size_t j = 0; j < c.n_in; ++j) {
    HONE_TRY(inputs[j], ctx.tensor(first + c.n_state + j));
  }

  if (!v8) {
    HONE_TRY(c.in_axes, per_input_attr(node, "scan_input_axes", c.n_in, 0));
    HONE_TRY(c.in_reverse, per_input_attr(node, "scan_input_directions", c.n_in, 0));
    HONE_TRY(c.out_axes, per_input_attr(node, "scan_output_axes", c.n_out, 0));
    HONE_TRY(c.out_reverse, per_input_attr(node, "scan_output_directions", c.n_out, 0));
    int64_t length = -1;
    for (size_t j = 0; j < c.n_in; ++j) {
      HONE_TRY(c.in_axes[j], normalize_axis(c.in_axes[j], static_cast<int64_t>(inputs[j]->rank()),
                                            "Scan scan_input_axes"));
      const int64_t len = inputs[j]->dim(static_cast<size_t>(c.in_axes[j]));
      if (length >= 0 && len != length)
        return fail(ErrorCode::kInvalidArgument,
                    "Scan inputs disagree on the sequence length: input " + std::to_string(j) +
                        " " + inputs[j]->describe() + " has " + std::to_string(len) +
                        " along axis " + std::to_string(c.in_axes[j]) + ", earlier inputs have " +
                        std::to_string(length));
      length = len;
    }
    if (length < 0) length = 0;
    std::vector<Tensor> scans;
    HONE_CHECK_OK(scan_once(ctx, *body, c, states, inputs, length, scans));
    for (size_t i = 0; i < c.n_state; ++i) ctx.set_output_value(i, std::move(states[i]));
    for (size_t k = 0; k < c.n_out; ++k) ctx.set_output(c.n_state + k, std::move(scans[k]));
    return {};
  }

  // Opset 8: every input has a leading batch axis; the sequence axis is 1.
  c.in_axes.assign(c.n_in, 0);  // after the batch row is sliced off
  HONE_TRY(c.in_reverse, per_input_attr(node, "directions", c.n_in, 0));
  c.out_axes.assign(c.n_out, 0);
  c.out_reverse.assign(c.n_out, 0);
  int64_t batch = -1, seq = -1;
  auto check_batch = [&](const Tensor& t, const std::string& what, bool sequence) -> Result<void> {
    if (t.rank() < (sequence ? 2u : 1u))
      return fail(ErrorCode::kInvalidArgument,
                  "Scan (opset 8) " + what + " must have a batch axis" +
                      (sequence ? " and a sequence axis" : "") + ", got " + t.describe());
    if (batch >= 0 && t.dim(0) != batch)
      return fail(ErrorCode::kInvalidArgument, "Scan (opset 8) " + what + " " + t.describe() +
                                                   " has batch " + std::to_string(t.dim(0)) +
                                                   ", expected " + std::to_string(batch));
    batch = t.dim(0);
    if (sequence) {
      if (seq >= 0 && t.dim(1) != seq)
        return fail(ErrorCode::kInvalidArgument,
                    "Scan (opset 8) " + what + " " + t.describe() + " has sequence length " +
                        std::to_string(t.dim(1)) + ", expected " + std::to_string(seq));
      seq = t.dim(1);
    }
    return {};
  };
  for (size_t i = 0; i < c.n_state; ++i)
    HONE_CHECK_OK(check_batch(states[i].tensor, "state input " + std::to_string(i), false));
  for (size_t j = 0; j < c.n_in; ++j)
    HONE_CHECK_OK(check_batch(*inputs[j], "scan input " + std::to_string(j), true));
  if (batch < 0)
    return fail(ErrorCode::kInvalidArgument,
                "Scan (opset 8) needs at least one state or scan input");
  if (seq < 0) seq = 0;
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (ctx.has_input(0)) {
    HONE_TRY(const Tensor* sl, ctx.tensor(0));
    if (!is_integer(sl->dtype()) || sl->numel() != batch)
      return fail(ErrorCode::kInvalidArgument, "Scan sequence_lens must be " +
                                                   std::to_string(batch) + " integers, got " +
                                                   sl->describe());
    lens = to_int64s(*sl);
    for (int64_t len : lens)
      if (len < 0 || len > seq)
        return fail(ErrorCode::kInvalidArgument, "Scan sequence_lens value " + std::to_string(len) +
                                                     " is outside [0, " + std::to_string(seq) +
                                                     "]");
  }

  std::vector<std::vector<Tensor>> final_states(c.n_state), final_scans(c.n_out);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens[static_cast<size_t>(b)];
    std::vector<RuntimeValue> row_states(c.n_state);
    for (size_t i = 0; i < c.n_state; ++i)
      row_states[i] = RuntimeValue::of(slice_along(states[i].tensor, 0, b));
    std::vector<Tensor> row_inputs(c.n_in);
    std::vector<const Tensor*> row_ptrs(c.n_in);
    for (size_t j = 0; j < c.n_in; ++j) {
      // Only the first lens[b] steps take part (reversed within them).
      row_inputs[j] = narrow_along(slice_along(*inputs[j], 0, b), 0, 0, len);
      row_ptrs[j] = &row_inputs[j];
    }
    std::vector<Tensor> scans;
    HONE_CHECK_OK_CTX(scan_once(ctx, *body, c, row_states, row_ptrs, len, scans),
                      "in Scan batch row " + std::to_string(b));
    for (size_t i = 0; i < c.n_state; ++i) {
      if (!row_states[i].is_tensor())
        return fail(ErrorCode::kInvalidArgument,
                    "Scan state " + std::to_string(i) + " must stay a tensor");
      final_states[i].push_back(std::move(row_states[i].tensor));
    }
    for (size_t k = 0; k < c.n_out; ++k) final_scans[k].push_back(std::move(scans[k]));
  }
  for (size_t i = 0; i < c.n_state; ++i) {
    if (batch == 0) {
      std::vector<int64_t> shape = states[i].tensor.shape();
      ctx.set_output(i, Tensor::zeros(states[i].tensor.dtype(), shape));
      continue;
    }
    HONE_TRY(Tensor t, stack_along(final_states[i], 0, "Scan state output " + std::to_string(i)));
    ctx.set_output(i, std::move(t));
  }
  for (size_t k = 0; k < c.n_out; ++k) {
    // Rows shorter than the sequence are padded with zeros; the element shape
    // comes from a row that ran at least one step.
    std::vector<int64_t> full = empty_scan_shape(*body, c.n_state + k);
    DType dt = declared_dtype(*body, c.n_state + k, DType::kF32);
    for (const Tensor& s : final_scans[k])
      if (s.rank() >= 1 && s.dim(0) > 0) {
        full = s.shape();
        dt = s.dtype();
        break;
      }
    full[0] = seq;
    std::vector<Tensor> rows;
    rows.reserve(final_scans[k].size());
    for (Tensor& s : final_scans[k]) {
      if (s.shape() == full) {
        rows.push_back(std::move(s));
        continue;
      }
      Tensor padded = Tensor::zeros(dt, full);
      if (s.dim(0) > 0) {
        if (s.dtype() != dt || s.rank() != full.size() ||
            !std::equal(s.shape().begin() + 1, s.shape().end(), full.begin() + 1))
          return fail(ErrorCode::kInvalidArgument, "Scan output " + std::to_string(k) +
                                                       " rows differ: " + s.describe() + " vs " +
                                                       shape_to_string(full));
        std::memcpy(padded.raw(), s.raw(), s.nbytes());
      }
      rows.push_back(std::move(padded));
    }
    if (rows.empty()) {
      full.insert(full.begin(), 0);
      ctx.set_output(c.n_state + k, Tensor::zeros(dt, full));
      continue;
    }
    HONE_TRY(Tensor t, stack_along(rows, 0, "Scan output " + std::to_string(k)));
    ctx.set_output(c.n_state + k, std::move(t));
  }
  return {};
}

}  // namespace

void register_flow_ops(OpRegistry& r) {
  r.add("If", if_op);
  r.add("Loop", loop_op);
  r.add("Scan", scan_op);
}

}  // namespace control

bool is_control_flow(const Node& node) {
  return (node.domain.empty() || node.domain == "ai.onnx") &&
         (node.op_type == "If" || node.op_type == "Loop" || node.op_type == "Scan");
}

Result<std::vector<RuntimeValue>> run_control_flow(const Node& node, const Graph& graph,
                                                   std::vector<const RuntimeValue*> inputs,
                                                   const SubgraphRunner& bodies,
                                                   const Scope* scope) {
  if (!is_control_flow(node))
    return fail(ErrorCode::kUnsupported, node.describe() + " is not control flow (If, Loop, Scan)");
  const auto kernel = node.op_type == "If"     ? control::if_op
                      : node.op_type == "Loop" ? control::loop_op
                                               : control::scan_op;
  std::vector<RuntimeValue> outs(node.outputs.size());
  KernelContext ctx(node, graph, std::move(inputs), &outs, bodies, scope);
  try {
    HONE_CHECK_OK_CTX(kernel(ctx), "while running node " + node.describe());
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kOutOfMemory, "out of memory while running node " + node.describe());
  }
  return outs;
}

void register_control_ops(OpRegistry& r) {
  control::register_flow_ops(r);
  control::register_sequence_ops(r);
  control::register_optional_ops(r);
}

}  // namespace hone::eval
