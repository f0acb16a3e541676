// LayerNormalization on the cuda backend (fixed NVRTC kernels: one warp a row
// for rows of up to 1024, else one block): alone, or with the residual Add
// before it as one add+layernorm unit, and with the [1, 0, 2] Transposes of a
// batch-first attention beside it read or written through its rows (LnSwap).
// Its half-precision plan is ops_half.cpp's.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/op.h"
#include "backends/cuda/storage.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"

namespace hone::cuda {
namespace {

/// LayerNormalization `n` of in = [x, scale, bias?], or, with `residual`, of
/// x + z for in = [x, z, scale, bias?] (the Add before it fused); `keep_sum`:
/// x + z is an output too, before the normalised one. Operands of the Add
/// that differ in shape (a broadcast, which the unit's matching cannot rule
/// out where shapes are symbolic) are first summed by hone_add_bcast. `sw`:
/// z is read, the normalised output written, through a swap of the two
/// leading axes of rank-3 rows (LnSwap).
Result<OpPlan> plan_layernorm(const Node& n, const std::vector<dims_t>& in, bool residual,
                              bool keep_sum, LnSwap sw = {}) {
  if (sw.z && (!residual || in[1].size() != 3))
    return fail(ErrorCode::kInternal, "a swapped residual operand of rank other than 3");
  const dims_t zdims = sw.z ? swap_leading(in[1]) : residual ? in[1] : dims_t{};
  if (sw.z && zdims != in[0]) {
    // The transposed operand broadcasts: transpose it into the workspace,
    // then the plan of an unswapped operand reads it there.
    std::vector<dims_t> logical = in;
    logical[1] = zdims;
    HONE_TRY(OpPlan inner, plan_layernorm(n, logical, residual, keep_sum, {false, sw.y}));
    const size_t at = round256(inner.workspace_bytes);
    const dims_t src = swap_leading(strides_of(in[1])), dst = strides_of(zdims);
    OpPlan p = std::move(inner);
    p.kernel += " transposed-in";
    p.workspace_bytes = at + round256(static_cast<size_t>(numel_of(zdims)) * sizeof(float));
    p.run = [=, run = std::move(p.run)](const ExecCtx& c, const Bind& b) -> Result<void> {
      Bind nb = b;
      nb.in[1] = b.workspace + at;
      HONE_CHECK_OK(strided_copy(c, b.in[1], nb.in[1], zdims, src, dst));
      return run(c, nb);
    };
    return p;
  }
  if (residual && !sw.z && in[1] != in[0]) {
    HONE_TRY(dims_t x, broadcast(in[0], in[1]));
    HONE_TRY(const EwArgs args, ew_args({in[0], in[1]}, x));
    std::vector<dims_t> rest = {x};
    rest.insert(rest.end(), in.begin() + 2, in.end());
    HONE_TRY(OpPlan ln, plan_layernorm(n, rest, false, false, {false, sw.y}));
    const long long count = numel_of(x);
    const size_t sum_bytes = keep_sum ? 0 : round256(static_cast<size_t>(count) * sizeof(float));
    OpPlan p;
    p.outputs = keep_sum ? std::vector<dims_t>{x, ln.outputs[0]} : ln.outputs;
    p.kernel = "add+" + ln.kernel;
    p.workspace_bytes = sum_bytes;
    p.run = [=, norm = std::move(ln.run)](const ExecCtx& c, const Bind& b) -> Result<void> {
      HONE_TRY(CUfunction f, c.fixed.function("hone_add_bcast"));
      EwArgs a = args;
      a.in[0] = b.in[0];
      a.in[1] = b.in[1];
      CUdeviceptr sum = keep_sum ? b.out[0] : b.workspace;
      long long cnt = count;
      HONE_CHECK_OK(launch_1d(c.d, f, c.stream, count, {&sum, &a, &cnt}));
      Bind nb;
      nb.in = {sum};
      nb.in.insert(nb.in.end(), b.in.begin() + 2, b.in.end());
      nb.out = {b.out.back()};
      return norm(c, nb);
    };
    return p;
  }
  const dims_t& x = in[0];
  const size_t at = residual ? 2 : 1;  // scale
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
  HONE_TRY(int64_t axis,
           ops::normalize_axis(na.axis, static_cast<int64_t>(x.size()), "LayerNormalization axis"));
  if ((sw.z || sw.y) && (x.size() != 3 || axis != 2))
    return fail(ErrorCode::kInternal, "swapped LayerNormalization rows need rank 3, axis 2");
  long long rows = 1, r = 1;
  for (size_t d = 0; d < x.size(); ++d) (static_cast<int64_t>(d) < axis ? rows : r) *= x[d];
  const bool has_bias = in.size() > at + 1;
  if (numel_of(in[at]) != r || (has_bias && numel_of(in[at + 1]) != r))
    return fail(ErrorCode::kUnsupported, "LayerNormalization scale/bias that broadcast");
  const float eps = na.epsilon;
  const bool warp = r % 4 == 0 && r <= 1024;
  const dims_t y = sw.y ? swap_leading(x) : x;
  const long long zb = sw.z ? x[1] : 0, yb = sw.y ? x[1] : 0;
  OpPlan p;
  p.outputs = keep_sum ? std::vector<dims_t>{x, y} : std::vector<dims_t>{y};
  p.kernel = std::string(residual ? "add+layernorm" : "layernorm") + ".f32.cuda." +
             (warp ? "warp" : "rows") + swap_note(sw);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    CUdeviceptr xi = b.in[0], zi = residual ? b.in[1] : 0, s = b.in[at];
    CUdeviceptr bi = has_bias ? b.in[at + 1] : 0, sum = keep_sum ? b.out[0] : 0, yo = b.out.back();
    long long ro = rows, rr = r, zs = zb, ys = yb;
    float e = eps;
    const bool aligned = ((xi | zi | s | bi | sum | yo) & 15) == 0;
    if (warp && aligned) {
      HONE_TRY(CUfunction f, c.fixed.function("hone_layernorm_warp"));
      int ri = static_cast<int>(r);
      const long long blocks = std::min<long long>((rows + 7) / 8, 65535LL * 8);
      return launch(c.d, f, c.stream, static_cast<unsigned>(blocks), 256,
                    {&xi, &zi, &s, &bi, &sum, &yo, &ro, &ri, &e, &zs, &ys});
    }
    HONE_TRY(CUfunction f, c.fixed.function("hone_layernorm"));
    return launch(c.d, f, c.stream, static_cast<unsigned>(std::min<long long>(rows, 65535)), 256,
                  {&xi, &zi, &s, &bi, &sum, &yo, &ro, &rr, &e, &zs, &ys});
  };
  return p;
}

}  // namespace

NodeId layernorm_after(BlockInfo& b, const Node& add) {
  const Graph& g = b.g;
  if (!add.domain.empty() || add.inputs.size() != 2 || add.outputs.size() != 1 ||
      add.inputs[0] < 0 || add.inputs[1] < 0)
    return -1;
  const Value &x = g.value(add.inputs[0]), &z = g.value(add.inputs[1]);
  // Two computed f32 values (a residual stream and a branch); a broadcast
  // between them is rare, and handled when planned (plan_layernorm).
  auto f32 = [](const Value& v) { return v.dtype == DType::kF32 || v.dtype == DType::kUndefined; };
  if (!f32(x) || !f32(z) || x.initializer || z.initializer || add.inputs[0] == add.inputs[1])
    return -1;
  const ValueId sum = add.outputs[0];
  NodeId ln = -1;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& c = g.nodes()[i];
    if (c.op_type == "LayerNormalization" && c.domain.empty() && !b.used[i] && !c.inputs.empty() &&
        c.inputs[0] == sum && c.outputs.size() == 1 &&
        std::count(c.inputs.begin(), c.inputs.end(), sum) == 1) {
      ln = static_cast<NodeId>(i);
      break;
    }
  }
  if (ln < 0) return -1;
  // The unit runs at the LayerNormalization's place: every other reader of
  // the sum must come after it.
  const size_t at = b.position(ln);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& c = g.nodes()[i];
    if (static_cast<NodeId>(i) == ln ||
        std::find(c.inputs.begin(), c.inputs.end(), sum) == c.inputs.end())
      continue;
    if (b.position(static_cast<NodeId>(i)) <= at) return -1;
  }
  return ln;
}

namespace {

/// Whether `t` is a Transpose swapping the two leading axes of a rank-3 value.
bool swaps_leading_axes(const Graph& g, const Node& t) {
  if (t.op_type != "Transpose" || !t.domain.empty() || t.inputs.empty() || t.inputs[0] < 0 ||
      t.outputs.size() != 1)
    return false;
  const Value& x = g.value(t.inputs[0]);
  if (!x.shape || x.shape->rank() != 3) return false;
  auto perm = ops::transpose_perm(t, 3);
  return perm && *perm == std::vector<int64_t>{1, 0, 2};
}

/// Whether LayerNormalization `ln` normalises the last axis of a rank-3 value alone.
bool normalises_last_of_rank3(const Graph& g, const Node& ln) {
  if (ln.inputs.empty() || ln.inputs[0] < 0) return false;
  const Value& x = g.value(ln.inputs[0]);
  const int64_t axis = ln.attr_int("axis", -1);
  return x.shape && x.shape->rank() == 3 && (axis == -1 || axis == 2);
}

/// The swapping Transpose that alone reads `ln`'s output, absorbed into its
/// unit (marked used); -1 when there is none.
NodeId absorb_swap_after(BlockInfo& b, const Node& ln, std::vector<NodeId>* absorbed) {
  if (b.inside_attention || ln.outputs.size() != 1 || !normalises_last_of_rank3(b.g, ln)) return -1;
  const NodeId t = b.sole_consumer(ln.outputs[0]);
  if (t < 0 || !swaps_leading_axes(b.g, b.g.node(t))) return -1;
  b.used[static_cast<size_t>(t)] = true;
  absorbed->push_back(t);
  return t;
}

}  // namespace

NodeId transposed_into_layernorm(BlockInfo& b, const Node& t, NodeId* ln) {
  if (b.inside_attention || !swaps_leading_axes(b.g, t)) return -1;
  const NodeId add = b.sole_consumer(t.outputs[0]);
  if (add < 0) return -1;
  const Node& a = b.g.node(add);
  if (a.op_type != "Add" || !a.domain.empty()) return -1;
  const NodeId l = layernorm_after(b, a);
  if (l < 0 || !normalises_last_of_rank3(b.g, b.g.node(l))) return -1;
  *ln = l;
  return add;
}

Result<Unit> create_add_layernorm(BlockInfo& b, const Node& add, NodeId ln,
                                  std::vector<NodeId>* absorbed, const Node* transposed) {
  const Node& n = b.g.node(ln);
  const ValueId sum = add.outputs[0];
  // The sum stays a value of its own when anything else reads it (a
  // pre-norm transformer's residual stream).
  const bool keep_sum =
      b.is_output[static_cast<size_t>(sum)] || b.consumers[static_cast<size_t>(sum)] > 1;
  Unit u;
  u.label = add.describe() + "+LayerNormalization";
  LnSwap sw;
  ValueId x = add.inputs[0], z = add.inputs[1];
  if (transposed) {
    // Add commutes: the transposed operand becomes z, read through the swap.
    if (x == transposed->outputs[0]) std::swap(x, z);
    z = transposed->inputs[0];
    sw.z = true;
    const NodeId a = b.node_id(add);
    b.used[static_cast<size_t>(a)] = true;
    absorbed->push_back(a);
    u.label = transposed->describe() + "+" + u.label;
  }
  u.inputs = {x, z, n.inputs[1]};
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) u.inputs.push_back(n.inputs[2]);
  b.used[static_cast<size_t>(ln)] = true;
  absorbed->push_back(ln);
  ValueId y = n.outputs[0];
  if (const NodeId t = absorb_swap_after(b, n, absorbed); t >= 0) {
    sw.y = true;
    y = b.g.node(t).outputs[0];
    u.label += "+Transpose";
  }
  u.outputs = keep_sum ? std::vector<ValueId>{sum, y} : std::vector<ValueId>{y};
  const Node node = n;
  u.op = std::make_unique<FnOp>(
      [node, keep_sum, sw](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_layernorm(node, in, true, keep_sum, sw);
      },
      add_layernorm_half_planner(node, keep_sum, b.settings.math.half, sw));
  return u;
}

Result<Unit> create_layernorm(BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0], n.inputs[1]};
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) u.inputs.push_back(n.inputs[2]);
  LnSwap sw;
  u.outputs = {n.outputs[0]};
  if (const NodeId t = absorb_swap_after(b, n, absorbed); t >= 0) {
    sw.y = true;
    u.outputs = {b.g.node(t).outputs[0]};
    u.label += "+Transpose";
  }
  const Node node = n;
  u.op = std::make_unique<FnOp>(
      [node, sw](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_layernorm(node, in, false, false, sw);
      },
      b.inside_attention ? nullptr : layernorm_half_planner(node, b.settings.math.half, sw));
  return u;
}

}  // namespace hone::cuda
