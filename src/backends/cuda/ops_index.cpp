// The cuda backend's indexing ops and host nodes. Gather, Slice, Expand and
// Split read their indices, bounds and target shape when the plan is built (each is
// a constant or a host value: supports() checked), and move f32 data or i64,
// i32 and bool data made at run time (strided_copy_of), so on the device they are
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

/// `data`: the gathered tensor's dtype, f32 or (a column of token ids
/// selected by a constant index, a one-hot mask's row) i64 / i32 / bool.
/// The copies move elements of its size; the device-index kernel moves
/// 4-byte words (an i64 is two of them) and so refuses bool data.
Result<OpPlan> plan_gather(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env,
                           bool device_indices, DType data) {
  HONE_TRY(std::vector<int64_t> indices, host_eval::ints(n, 1, env, "Gather indices"));
  HONE_TRY(const ops::GatherRows g, ops::gather_rows(in[0], ops::axis_attr(n), std::move(indices),
                                                     env.value(n.inputs[1])->shape()));
  const dims_t& out = g.out;
  const std::vector<int64_t>& idx = g.idx;
  const int64_t outer = g.outer;
  // One index with nothing outside it (q = qkv[0]): the same bytes.
  if (idx.size() == 1 && outer == 1) return view(out, "gather.f32.cuda.view", idx[0] * g.inner);
  const auto count = static_cast<int64_t>(idx.size());
  const int64_t dim = g.dim;
  const std::string type = dtype_word(data);
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {data};
  if (count > kGatherCopies) {
    const int64_t words = data == DType::kI64 ? 2 : 1, inner = g.inner * words;
    if (data == DType::kBool)
      return fail(ErrorCode::kUnsupported, "Gather of bool data by " + std::to_string(count) +
                                               " indices (cuda copies up to " +
                                               std::to_string(kGatherCopies) + " rows of bools)");
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
  const int64_t inner = g.inner;
  const auto size = static_cast<CUdeviceptr>(dtype_size(data));
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    for (int64_t j = 0; j < count; ++j)
      HONE_CHECK_OK(strided_copy_of(c, data,
                                    b.in[0] + static_cast<CUdeviceptr>(idx[j] * inner) * size,
                                    b.out[0] + static_cast<CUdeviceptr>(j * inner) * size,
                                    {outer, inner}, {dim * inner, 1}, {count * inner, 1}));
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

/// Slice, Expand and Split move elements of `t` (moved_dtype).
Result<OpPlan> plan_slice(const Graph& g, const Node& n, const std::vector<dims_t>& in,
                          const PlanEnv& env, DType t) {
  HONE_TRY(const ops::SliceWindow w, host_eval::slice_window(n, g.opset(), in[0], env));
  if (contiguous(w.out, w.strides)) return view(w.out, "slice.f32.cuda.view", w.base);
  if (w.out.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "Slice of rank " + std::to_string(w.out.size()));
  OpPlan p;
  p.outputs = {w.out};
  p.dtypes = {t};
  p.kernel = "slice." + dtype_word(t) + ".cuda.strided_copy";
  const dims_t out = w.out, src = w.strides, dst = strides_of(w.out);
  const auto start = static_cast<CUdeviceptr>(w.base) * dtype_size(t);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    return strided_copy_of(c, t, b.in[0] + start, b.out[0], out, src, dst);
  };
  return p;
}

Result<OpPlan> plan_expand(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env,
                           DType t) {
  HONE_TRY(dims_t shape, host_eval::ints(n, 1, env, "Expand shape"));
  HONE_TRY(dims_t out, broadcast(in[0], shape));
  if (out.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "Expand to rank " + std::to_string(out.size()));
  if (out == in[0]) return view(out, "expand.view");
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {t};
  p.kernel = "expand." + dtype_word(t) + ".cuda.strided_copy";
  const dims_t src = broadcast_strides(in[0], out), dst = strides_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    return strided_copy_of(c, t, b.in[0], b.out[0], out, src, dst);
  };
  return p;
}

/// Split: every part is a view when nothing lies outside the axis (the
/// parts are contiguous runs of the input), else one strided copy per part.
Result<OpPlan> plan_split(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env,
                          DType t) {
  HONE_TRY(const ops::SplitParts parts, host_eval::split_parts(n, in[0], env));
  const std::vector<int64_t>&sizes = parts.sizes, &starts = parts.starts;
  const int64_t outer = parts.outer, inner = parts.inner;
  OpPlan p;
  p.outputs = parts.outs;
  p.dtypes.assign(parts.outs.size(), t);
  if (outer == 1) {
    p.kernel = "split.f32.cuda.view";
    p.alias.assign(sizes.size(), 0);
    for (const int64_t s : starts) p.alias_offset.push_back(s * inner);
    return p;
  }
  p.kernel = "split." + dtype_word(t) + ".cuda.strided_copy";
  const int64_t dim = parts.dim;
  const auto size = static_cast<CUdeviceptr>(dtype_size(t));
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    for (size_t j = 0; j < sizes.size(); ++j) {
      const int64_t row = sizes[j] * inner;
      if (row == 0) continue;
      HONE_CHECK_OK(strided_copy_of(c, t,
                                    b.in[0] + static_cast<CUdeviceptr>(starts[j] * inner) * size,
                                    b.out[j], {outer, row}, {dim * inner, 1}, {row, 1}));
    }
    return {};
  };
  return p;
}

}  // namespace

bool gather_reads_indices(const Graph& g, const Node& n) {
  const Value& v = g.value(n.inputs[1]);
  return !v.initializer || v.initializer->numel() > kGatherCopies;
}

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
  const DType t = moved_dtype(g, n.inputs[0]);
  if (n.op_type == "Gather") {
    const bool device_indices = gather_reads_indices(g, n);
    if (device_indices) u.inputs.push_back(n.inputs[1]);
    p = [node, device_indices, t](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_gather(node, in, env, device_indices, t);
    };
  } else if (n.op_type == "Slice")
    p = [&g, node, t](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_slice(g, node, in, env, t);
    };
  else if (n.op_type == "Split")
    p = [node, t](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_split(node, in, env, t);
    };
  else if (n.op_type == "Expand")
    p = [node, t](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_expand(node, in, env, t);
    };
  else
    return fail(ErrorCode::kInternal, "cuda: no indexing unit for " + n.describe());
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
