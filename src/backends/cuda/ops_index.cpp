// The cuda backend's indexing ops and host nodes. Gather, Slice and Expand
// read their indices, bounds and target shape when the plan is built (each is
// a constant or a host value: supports() checked), so on the device they are
// views (one index or a contiguous range of the outermost non-trivial axis),
// strided copies (up to 64 indices), or one gather kernel reading the
// indices from their device copy (more indices). Host nodes (common/host_eval.h) are
// evaluated here too, once per shape signature, and launch nothing.
#include <algorithm>

#include "backends/cuda/kernels.h"
#include "backends/cuda/op.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/gather.h"
#include "ops/slice.h"
#include "ops/split.h"

namespace hone::cuda {
namespace {

/// A host node: its outputs are computed on the reference when planned.
class HostOp final : public Op {
 public:
  HostOp(const Graph& g, Node n) : g_(g), node_(std::move(n)) {}

  Result<OpPlan> plan(const std::vector<dims_t>&, const PlanEnv& env) const override {
    HONE_TRY(std::vector<Tensor> outs, host_eval::evaluate(g_, node_, env));
    OpPlan p;
    for (Tensor& t : outs) {
      p.outputs.push_back(t.shape());
      p.host.push_back(std::make_shared<const Tensor>(std::move(t)));
    }
    return p;
  }

 private:
  const Graph& g_;
  Node node_;
};

/// At most this many indices are gathered by one strided copy each; more by
/// one kernel reading the indices on the device.
constexpr int64_t kGatherCopies = 64;

/// Whether Gather `n`'s unit takes its indices as a device input: they are
/// computed from shapes (their count is known only when planned) or a
/// constant of more than kGatherCopies indices.
bool gather_reads_indices(const Graph& g, const Node& n) {
  const Value& v = g.value(n.inputs[1]);
  return !v.initializer || v.initializer->numel() > kGatherCopies;
}

/// `data`: the gathered tensor's dtype, f32 or (a column of token ids
/// selected by a constant index) i64 / i32; rows move as 4-byte words, so
/// an i64 element is two of them.
Result<OpPlan> plan_gather(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env,
                           bool device_indices, DType data) {
  HONE_TRY(std::vector<int64_t> indices, host_eval::ints(n, 1, env, "Gather indices"));
  HONE_TRY(const ops::GatherRows g, ops::gather_rows(in[0], ops::axis_attr(n), std::move(indices),
                                                     env.value(n.inputs[1])->shape()));
  const dims_t& out = g.out;
  const std::vector<int64_t>& idx = g.idx;
  const int64_t words = data == DType::kI64 ? 2 : 1;
  const int64_t outer = g.outer, inner = g.inner * words;
  // One index with nothing outside it (q = qkv[0]): the same bytes.
  if (idx.size() == 1 && outer == 1) return view(out, "gather.f32.cuda.view", idx[0] * g.inner);
  const auto count = static_cast<int64_t>(idx.size());
  const int64_t dim = g.dim;
  const std::string type(data == DType::kF32 ? std::string_view("f32") : dtype_name(data));
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {data};
  if (count > kGatherCopies) {
    // Many indices (a relative-position table's 768): one kernel reading the
    // indices from their device copy (the unit's input 1; ops::gather_rows
    // has checked them), not one copy per index.
    if (!device_indices)
      return fail(ErrorCode::kInternal,
                  "Gather of " + std::to_string(count) + " indices without their device copy");
    const DType t = env.value(n.inputs[1])->dtype();
    if (t != DType::kI64 && t != DType::kI32)
      return fail(ErrorCode::kUnsupported,
                  "Gather indices are " + std::string(dtype_name(t)) + "; cuda reads i64 or i32");
    p.kernel = "gather." + type + ".cuda.device_indices_" + (t == DType::kI64 ? "i64" : "i32");
    const long long total = outer * count * inner;
    const int is64 = t == DType::kI64 ? 1 : 0;
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      if (total == 0) return {};
      HONE_TRY(CUfunction f, c.fixed.function("hone_gather_indices"));
      CUdeviceptr xi = b.in[0], ii = b.in[1], y = b.out[0];
      long long o = outer, k = count, d = dim, r = inner;
      int w = is64;
      CUdeviceptr err = c.errors;  // ops::gather_rows checked them: never set here
      unsigned long long code = run_error_code(kRunErrorIndex, b.step);
      return launch_1d(c.d, f, c.stream, total, {&xi, &ii, &y, &o, &k, &d, &r, &w, &err, &code});
    };
    return p;
  }
  p.kernel = "gather." + type + ".cuda.copy";
  // Each index is one strided copy of [outer, inner] (few indices here: the
  // indices that exporters gather data with are a handful of constants).
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    for (int64_t j = 0; j < count; ++j)
      HONE_CHECK_OK(strided_copy(c, b.in[0] + static_cast<CUdeviceptr>(idx[j] * inner) * 4,
                                 b.out[0] + static_cast<CUdeviceptr>(j * inner) * 4, {outer, inner},
                                 {dim * inner, 1}, {count * inner, 1}));
    return {};
  };
  return p;
}

/// Strides of `w` (Slice's window) read as one contiguous run of its output.
bool contiguous(const dims_t& out, const dims_t& strides) {
  const dims_t want = strides_of(out);
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] > 1 && strides[d] != want[d]) return false;
  return true;
}

Result<OpPlan> plan_slice(const Graph& g, const Node& n, const std::vector<dims_t>& in,
                          const PlanEnv& env) {
  HONE_TRY(const ops::SliceWindow w, host_eval::slice_window(n, g.opset(), in[0], env));
  if (contiguous(w.out, w.strides)) return view(w.out, "slice.f32.cuda.view", w.base);
  if (w.out.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "Slice of rank " + std::to_string(w.out.size()));
  OpPlan p;
  p.outputs = {w.out};
  p.kernel = "slice.f32.cuda.strided_copy";
  const dims_t out = w.out, src = w.strides, dst = strides_of(w.out);
  const int64_t base = w.base;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    return strided_copy(c, b.in[0] + static_cast<CUdeviceptr>(base * 4), b.out[0], out, src, dst);
  };
  return p;
}

Result<OpPlan> plan_expand(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  HONE_TRY(dims_t shape, host_eval::ints(n, 1, env, "Expand shape"));
  HONE_TRY(dims_t out, broadcast(in[0], shape));
  if (out.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "Expand to rank " + std::to_string(out.size()));
  if (out == in[0]) return view(out, "expand.view");
  OpPlan p;
  p.outputs = {out};
  p.kernel = "expand.f32.cuda.strided_copy";
  const dims_t src = broadcast_strides(in[0], out), dst = strides_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    return strided_copy(c, b.in[0], b.out[0], out, src, dst);
  };
  return p;
}

/// Split: every part is a view when nothing lies outside the axis (the
/// parts are contiguous runs of the input), else one strided copy per part.
Result<OpPlan> plan_split(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  HONE_TRY(const ops::SplitParts parts, host_eval::split_parts(n, in[0], env));
  const std::vector<int64_t>&sizes = parts.sizes, &starts = parts.starts;
  const int64_t outer = parts.outer, inner = parts.inner;
  OpPlan p;
  p.outputs = parts.outs;
  if (outer == 1) {
    p.kernel = "split.f32.cuda.view";
    p.alias.assign(sizes.size(), 0);
    for (const int64_t s : starts) p.alias_offset.push_back(s * inner);
    return p;
  }
  p.kernel = "split.f32.cuda.strided_copy";
  const int64_t dim = parts.dim;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    for (size_t j = 0; j < sizes.size(); ++j) {
      const int64_t row = sizes[j] * inner;
      if (row == 0) continue;
      HONE_CHECK_OK(strided_copy(c, b.in[0] + static_cast<CUdeviceptr>(starts[j] * inner * 4),
                                 b.out[j], {outer, row}, {dim * inner, 1}, {row, 1}));
    }
    return {};
  };
  return p;
}

}  // namespace

Result<Unit> create_host(const BlockInfo& b, const Node& n) {
  Unit u;
  u.label = n.describe();
  for (ValueId v : n.outputs)
    if (v >= 0) u.outputs.push_back(v);
  u.op = std::make_unique<HostOp>(b.g, n);
  return u;
}

Result<Unit> create_index(const BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0]};  // the data; the rest is read when planning
  u.outputs = n.op_type == "Split" ? n.outputs : std::vector<ValueId>{n.outputs[0]};
  const Node node = n;
  Planner p;
  if (n.op_type == "Gather") {
    const bool device_indices = gather_reads_indices(g, n);
    if (device_indices) u.inputs.push_back(n.inputs[1]);
    const DType known = known_dtype(g, n.inputs[0]);
    const DType data = known == DType::kI64 || known == DType::kI32 ? known : DType::kF32;
    p = [node, device_indices, data](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_gather(node, in, env, device_indices, data);
    };
  } else if (n.op_type == "Slice")
    p = [&g, node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_slice(g, node, in, env);
    };
  else if (n.op_type == "Split")
    p = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_split(node, in, env);
    };
  else if (n.op_type == "Expand")
    p = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_expand(node, in, env);
    };
  else
    return fail(ErrorCode::kInternal, "cuda: no indexing unit for " + n.describe());
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
