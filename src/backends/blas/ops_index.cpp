// Host nodes and the ops that read indices, bounds, shapes or masks known
// when the plan is built. Host nodes (common/host_eval.h: the shape
// arithmetic, masks and tables exporters compute from dims) are evaluated
// once per input-shape signature and run nothing. Gather, GatherND, Slice,
// Split, Expand and Where then read their indices, bounds, target shape or
// condition as plan constants (support.cpp checked that each is a constant or
// a host value) and run as strided copies or one select pass.
#include <algorithm>

#include "backends/blas/kernels/layout.h"
#include "backends/blas/op.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/gather.h"
#include "ops/shape_fn_tensor.h"
#include "ops/slice.h"
#include "ops/split.h"

namespace hone::blas {
namespace {

/// A host node: its outputs are computed on the reference when planned.
class HostOp final : public Op {
 public:
  HostOp(const Graph& g, Node n) : g_(g), node_(std::move(n)) {}

  Result<OpPlan> plan(const std::vector<dims_t>&, const PlanEnv& env) const override {
    HONE_TRY(std::vector<Tensor> outs, host_eval::evaluate(g_, node_, env.known));
    OpPlan p;
    p.kernel = "host";
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

/// A copy of the input read through `strides` from element `base`.
OpPlan strided_plan(dims_t out, dims_t strides, int64_t base, const char* kernel) {
  OpPlan p;
  p.outputs = {out};
  p.kernel = kernel;
  p.run = [out = std::move(out), strides = std::move(strides), base](const RunArgs& a) {
    kernels::strided_copy(out, strides, a.inputs[0] + base, a.outputs[0], *a.pool);
  };
  return p;
}

Result<OpPlan> plan_gather(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  HONE_TRY(std::vector<int64_t> idx, host_eval::ints(n, 1, env.known, "Gather indices"));
  const Tensor* idx_t = env.known.value(n.inputs[1]);
  auto g = ops::gather_rows(in[0], ops::axis_attr(n), std::move(idx), idx_t->shape());
  if (!g) return fail(std::move(g).error().add_context("in " + n.describe()));
  OpPlan p;
  p.outputs = {g->out};
  p.kernel = "gather.f32.blas.rows";
  p.run = [g = std::move(*g)](const RunArgs& r) {
    kernels::gather_rows(g.outer, g.dim, g.inner, g.idx, r.inputs[0], r.outputs[0], *r.pool);
  };
  return p;
}

/// GatherND by index tuples known when the plan is built (DLRM's pairs):
/// each tuple starts a slice at a multiple of the slice's size, so the data
/// is read as rows of that size and the slices are copied as Gather's rows.
Result<OpPlan> plan_gather_nd(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  HONE_TRY(std::vector<int64_t> idx, host_eval::ints(n, 1, env.known, "GatherND indices"));
  const Tensor* idx_t = env.known.value(n.inputs[1]);
  auto l = ops::gather_nd_layout(in[0], idx_t->shape(), n.attr_int("batch_dims", 0));
  if (!l) return fail(std::move(l).error().add_context("in " + n.describe()));
  auto off = ops::gather_nd_offsets(*l, idx);
  if (!off) return fail(std::move(off).error().add_context("in " + n.describe()));
  const int64_t slice = l->slice;
  std::vector<int64_t> rows;
  for (int64_t o : *off) rows.push_back(slice == 0 ? 0 : o / slice);
  OpPlan p;
  p.outputs = {l->out};
  p.kernel = "gathernd.f32.blas.rows";
  p.run = [rows = std::move(rows), slice](const RunArgs& r) {
    kernels::gather_rows(1, 0, slice, rows, r.inputs[0], r.outputs[0], *r.pool);
  };
  return p;
}

Result<OpPlan> plan_slice(const Graph& g, const Node& n, const std::vector<dims_t>& in,
                          const PlanEnv& env) {
  HONE_TRY(const ops::SliceWindow w, host_eval::slice_window(n, g.opset(), in[0], env.known));
  return strided_plan(w.out, w.strides, w.base, "slice.f32.blas.strided_copy");
}

Result<OpPlan> plan_expand(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  HONE_TRY(const dims_t shape, host_eval::ints(n, 1, env.known, "Expand shape"));
  auto out = ops::broadcast_shapes({in[0], shape});
  if (!out) return fail(std::move(out).error().add_context("in " + n.describe()));
  return strided_plan(*out, ops::broadcast_strides(in[0], *out), 0, "expand.f32.blas.strided_copy");
}

Result<OpPlan> plan_split(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  HONE_TRY(const ops::SplitParts parts, host_eval::split_parts(n, in[0], env.known));
  OpPlan p;
  p.kernel = "split.f32.blas.strided_copy";
  p.outputs = parts.outs;
  const dims_t strides = ops::strides_of(in[0]);
  const auto a = static_cast<size_t>(parts.axis);
  p.run = [outs = p.outputs, starts = parts.starts, strides, a](const RunArgs& r) {
    for (size_t j = 0; j < outs.size(); ++j)
      kernels::strided_copy(outs[j], strides, r.inputs[0] + starts[j] * strides[a], r.outputs[j],
                            *r.pool);
  };
  return p;
}

/// Where. With `runtime_cond`, the condition (bool) is the unit's input 0,
/// read when it runs (a mask another block made), and x and y are inputs 1
/// and 2; else it is known when the plan is built (a constant or a mask
/// computed from dims) and x and y are inputs 0 and 1.
Result<OpPlan> plan_where(const Node& n, bool runtime_cond, const std::vector<dims_t>& in,
                          const PlanEnv& env) {
  std::shared_ptr<const Tensor> cond;
  dims_t cdims;
  if (runtime_cond) {
    cdims = in[0];
  } else {
    const Tensor* c = env.known.value(n.inputs[0]);
    if (c == nullptr)
      return fail(ErrorCode::kInternal,
                  n.describe() + ": the condition is not known when the plan is built");
    if (c->dtype() != DType::kBool)
      return fail(ErrorCode::kInvalidArgument, n.describe() + ": the condition is " +
                                                   std::string(dtype_name(c->dtype())) +
                                                   ", not bool");
    cond = std::make_shared<const Tensor>(*c);  // the plan keeps it: host values die with the build
    cdims = c->shape();
  }
  const size_t x = runtime_cond ? 1 : 0;
  auto out = ops::broadcast_shapes({cdims, in[x], in[x + 1]});
  if (!out) return fail(std::move(out).error().add_context("in " + n.describe()));
  OpPlan p;
  p.outputs = {*out};
  p.kernel = "where.f32.blas.select";
  std::vector<std::vector<int64_t>> strides = {ops::broadcast_strides(cdims, *out),
                                               ops::broadcast_strides(in[x], *out),
                                               ops::broadcast_strides(in[x + 1], *out)};
  p.run = [dims = *out, strides = std::move(strides), cond, x](const RunArgs& r) {
    // A run-time condition is a bool tensor: its bytes are read as such.
    const auto* c = cond ? cond->data<uint8_t>() : reinterpret_cast<const uint8_t*>(r.inputs[0]);
    kernels::select(dims, strides, c, r.inputs[x], r.inputs[x + 1], r.outputs[0], *r.pool);
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
  const std::string& op = n.op_type;
  Unit u;
  u.label = n.describe();
  u.inputs = {n.inputs[0]};  // the data; the rest is read when planning
  u.outputs = {n.outputs[0]};
  const Node node = n;
  PlanFn f;
  if (op == "Gather") {
    f = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_gather(node, in, env);
    };
  } else if (op == "GatherND") {
    f = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_gather_nd(node, in, env);
    };
  } else if (op == "Slice") {
    f = [&g, node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_slice(g, node, in, env);
    };
  } else if (op == "Split") {
    u.outputs = n.outputs;
    f = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_split(node, in, env);
    };
  } else if (op == "Expand") {
    f = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_expand(node, in, env);
    };
  } else if (op == "Where") {
    const bool runtime_cond = !host_eval::host_value(g, n.inputs[0], kHostPolicy, b.known);
    u.inputs = {n.inputs[1], n.inputs[2]};
    if (runtime_cond) u.inputs.insert(u.inputs.begin(), n.inputs[0]);
    f = [node, runtime_cond](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_where(node, runtime_cond, in, env);
    };
  } else {
    return fail(ErrorCode::kInternal, "blas: no indexing unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(f));
  return u;
}

}  // namespace hone::blas
