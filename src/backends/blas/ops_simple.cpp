// Single-node units: pools, Softmax, LayerNormalization, reductions and the
// layout ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose,
// Concat). Each is created from its node (attributes validated, constants
// read) and planned per input-shape signature.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "backends/blas/kernels/layout.h"
#include "backends/blas/kernels/norm.h"
#include "backends/blas/kernels/pool.h"
#include "backends/blas/op.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/reduce.h"
#include "ops/shape_fn_tensor.h"
#include "ops/window.h"

namespace hone::blas {

std::string dims_str(const dims_t& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

namespace {

int64_t prod(const dims_t& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
  return p;
}

Result<size_t> norm_axis(int64_t axis, size_t rank, const Node& n) {
  // A scalar's one axis is 0.
  const auto a = ops::try_normalize_axis(axis, std::max<int64_t>(static_cast<int64_t>(rank), 1));
  if (!a)
    return fail(ErrorCode::kInvalidArgument, "axis " + std::to_string(axis) + " of node " +
                                                 n.describe() + " is out of range for rank " +
                                                 std::to_string(rank));
  return static_cast<size_t>(*a);
}

/// Integer list from attribute `key` (opset < `input_from`) or constant input 1.
bool int_list(const Graph& g, const Node& n, const char* key, int64_t input_from,
              std::vector<int64_t>* out, bool* present) {
  *present = false;
  if (g.opset() < input_from) {
    *present = n.has_attr(key);
    *out = n.attr_ints(key);
    return true;
  }
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return true;
  const Value& v = g.value(n.inputs[1]);
  if (!v.initializer || v.initializer->dtype() != DType::kI64) return false;
  *present = true;
  out->assign(v.initializer->data<int64_t>(),
              v.initializer->data<int64_t>() + v.initializer->numel());
  return true;
}

OpPlan copy_plan(dims_t out) {
  OpPlan p;
  p.outputs = {out};
  p.kernel = "copy.f32.blas.memcpy";
  const size_t bytes = static_cast<size_t>(prod(out)) * sizeof(float);
  p.in_place = {0};  // a reshape in place is no copy at all
  p.run = [bytes](const RunArgs& a) {
    if (a.outputs[0] != a.inputs[0]) std::memcpy(a.outputs[0], a.inputs[0], bytes);
  };
  return p;
}

Result<PlanFn> make_shape_op(const Graph& g, const Node& n) {
  const std::string op = n.op_type;
  if (op == "Identity")
    return PlanFn([](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
      return copy_plan(in[0]);
    });
  if (op == "Flatten") {
    const int64_t axis = ops::axis_attr(n);
    return PlanFn([axis, n](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
      const int64_t r = static_cast<int64_t>(in[0].size());
      const auto a = ops::try_normalize_boundary(axis, r);
      if (!a)
        return fail(ErrorCode::kInvalidArgument, "Flatten axis out of range in " + n.describe());
      return copy_plan(
          {prod(in[0], 0, static_cast<size_t>(*a)), prod(in[0], static_cast<size_t>(*a))});
    });
  }
  if (op == "Reshape") {
    // The target is a constant or a host value of this signature (support.cpp).
    const bool allowzero = ops::reshape_allowzero(n);
    return PlanFn(
        [allowzero, n](const std::vector<dims_t>& in, const PlanEnv& env) -> Result<OpPlan> {
          HONE_TRY(const dims_t want, host_eval::ints(n, 1, env.known, "Reshape shape"));
          auto out = ops::reshape_shape<int64_t>(in[0], want, allowzero);
          if (!out) return fail(std::move(out).error().add_context("in " + n.describe()));
          return copy_plan(*out);
        });
  }
  // Squeeze / Unsqueeze
  std::vector<int64_t> axes;
  bool present = false;
  if (!int_list(g, n, "axes", 13, &axes, &present))
    return fail(ErrorCode::kUnsupported, op + " axes must be a constant i64 tensor");
  const bool unsq = op == "Unsqueeze";
  return PlanFn([axes, present, unsq, n](const std::vector<dims_t>& in,
                                         const PlanEnv&) -> Result<OpPlan> {
    const dims_t& x = in[0];
    const int64_t r = static_cast<int64_t>(unsq ? x.size() + axes.size() : x.size());
    std::vector<bool> flag(static_cast<size_t>(r), false);
    for (int64_t a : axes) {
      const auto k = ops::try_normalize_axis(a, r);
      if (!k)
        return fail(ErrorCode::kInvalidArgument,
                    "axis " + std::to_string(a) + " out of range in " + n.describe());
      flag[static_cast<size_t>(*k)] = true;
    }
    dims_t out;
    if (unsq) {
      size_t j = 0;
      for (int64_t i = 0; i < r; ++i) out.push_back(flag[static_cast<size_t>(i)] ? 1 : x[j++]);
    } else {
      for (size_t i = 0; i < x.size(); ++i) {
        const bool drop = present ? flag[i] : x[i] == 1;
        if (drop && x[i] != 1)
          return fail(ErrorCode::kInvalidArgument,
                      "Squeeze of a dim of size " + std::to_string(x[i]) + " in " + n.describe());
        if (!drop) out.push_back(x[i]);
      }
    }
    return copy_plan(out);
  });
}

Result<PlanFn> make_pool(const Node& n) {
  const std::string op = n.op_type;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    const bool max = op == "GlobalMaxPool";
    return PlanFn([max, op](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
      const dims_t& x = in[0];
      if (x.size() < 3)
        return fail(ErrorCode::kInvalidArgument, op + " input " + dims_str(x) + " needs rank >= 3");
      dims_t out(x.size(), 1);
      out[0] = x[0];
      out[1] = x[1];
      OpPlan p;
      p.outputs = {out};
      p.kernel = "globalpool.f32.blas.direct";
      const int64_t planes = x[0] * x[1], hw = prod(x, 2);
      p.run = [=](const RunArgs& a) {
        kernels::global_pool(planes, hw, max, a.inputs[0], a.outputs[0], *a.pool);
      };
      return p;
    });
  }
  const bool max = op == "MaxPool";
  HONE_TRY(const ops::PoolAttrs pa, ops::pool_attrs(n));
  const dims_t kernel = pa.kernel_shape;
  const bool ceil = pa.ceil_mode;
  const bool include_pad = pa.count_include_pad;
  return PlanFn([=](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
    const dims_t& x = in[0];
    if (x.size() < 3 || x.size() > 4)
      return fail(ErrorCode::kUnsupported,
                  op + " input " + dims_str(x) + ": only 1-D and 2-D pools");
    const dims_t spatial(x.begin() + 2, x.end());
    HONE_TRY(ops::Window w, ops::make_window(n, spatial, kernel, ceil, op));
    const bool one = spatial.size() == 1;
    const size_t wd = one ? 0 : 1;
    kernels::Pool2dShape s;
    s.planes = x[0] * x[1];
    s.h = one ? 1 : spatial[0];
    s.w = spatial[wd];
    s.oh = one ? 1 : w.out[0];
    s.ow = w.out[wd];
    s.kh = one ? 1 : kernel[0];
    s.kw = kernel[wd];
    s.sh = one ? 1 : w.strides[0];
    s.sw = w.strides[wd];
    s.dh = one ? 1 : w.dilations[0];
    s.dw = w.dilations[wd];
    s.pt = one ? 0 : w.pad_begin[0];
    s.pb = one ? 0 : w.pad_end[0];
    s.pl = w.pad_begin[wd];
    s.pr = w.pad_end[wd];
    s.count_include_pad = include_pad;
    dims_t out{x[0], x[1]};
    out.insert(out.end(), w.out.begin(), w.out.end());
    OpPlan p;
    p.outputs = {out};
    p.kernel = max ? "maxpool2d.f32.blas.direct" : "avgpool2d.f32.blas.direct";
    p.run = [s, max](const RunArgs& a) {
      if (max)
        kernels::pool2d_max(s, a.inputs[0], a.outputs[0], *a.pool);
      else
        kernels::pool2d_average(s, a.inputs[0], a.outputs[0], *a.pool);
    };
    return p;
  });
}

Result<PlanFn> make_norm(const Graph& g, const Node& n) {
  const std::string op = n.op_type;
  if (op == "Softmax" || op == "LogSoftmax") {
    HONE_TRY(const ops::SoftmaxAttrs sa, ops::softmax_attrs(n, g.opset()));
    const bool legacy = sa.coerce_2d;
    const int64_t axis = sa.axis;
    const bool log = op == "LogSoftmax";
    return PlanFn([=](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
      const dims_t& x = in[0];
      HONE_TRY(size_t a, norm_axis(axis, x.size(), n));
      OpPlan p;
      p.outputs = {x};
      p.kernel = log ? "logsoftmax.f32.blas.rows" : "softmax.f32.blas.rows";
      const int64_t outer = prod(x, 0, a);
      const int64_t len = legacy ? prod(x, a) : x[a];
      const int64_t inner = legacy ? 1 : prod(x, a + 1);
      p.run = [=](const RunArgs& r) {
        kernels::softmax(outer, len, inner, log, r.inputs[0], r.outputs[0], *r.pool);
      };
      return p;
    });
  }
  if (op == "LayerNormalization") {
    HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(n));
    const int64_t axis = na.axis;
    const float eps = na.epsilon;
    const Tensor scale = *g.value(n.inputs[1]).initializer;
    const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
    const Tensor bias = has_bias ? *g.value(n.inputs[2]).initializer : Tensor();
    return PlanFn([=](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
      const dims_t& x = in[0];
      HONE_TRY(size_t a, norm_axis(axis, x.size(), n));
      const int64_t rows = prod(x, 0, a), size = prod(x, a);
      if (scale.numel() != size || (has_bias && bias.numel() != size))
        return fail(ErrorCode::kUnsupported,
                    "LayerNormalization scale/bias that broadcast over " + dims_str(x));
      OpPlan p;
      p.outputs = {x};
      p.kernel = "layernorm.f32.blas.rows";
      p.run = [=](const RunArgs& r) {
        kernels::layer_norm(rows, size, eps, r.inputs[0], scale.data<float>(),
                            has_bias ? bias.data<float>() : nullptr, r.outputs[0], *r.pool);
      };
      return p;
    });
  }
  // The Reduce* family (ops/reduce.h).
  const ops::ReduceKind kind = *ops::reduce_kind(op);
  std::vector<int64_t> axes;
  bool present = false;
  const int64_t input_from = op == "ReduceSum" ? 13 : 18;
  if (!int_list(g, n, "axes", input_from, &axes, &present))
    return fail(ErrorCode::kUnsupported, op + " axes must be a constant i64 tensor");
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  const bool keep = ra.keepdims;
  const bool noop = ra.noop_with_empty_axes;
  return PlanFn([=](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
    const dims_t& x = in[0];
    if (axes.empty() && noop) return copy_plan(x);
    std::vector<bool> red(x.size(), axes.empty());
    for (int64_t ax : axes) {
      HONE_TRY(size_t a, norm_axis(ax, x.size(), n));
      red[a] = true;
    }
    dims_t out;
    for (size_t i = 0; i < x.size(); ++i)
      if (!red[i] || keep) out.push_back(red[i] ? 1 : x[i]);
    OpPlan p;
    p.outputs = {out};
    p.kernel = "reduce.f32.blas.strided";
    p.run = [=](const RunArgs& r) {
      kernels::reduce(x, red, kind, r.inputs[0], r.outputs[0], *r.pool);
    };
    return p;
  });
}

Result<PlanFn> make_layout(const Node& n) {
  if (n.op_type == "Transpose") {
    return PlanFn([=](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
      const dims_t& x = in[0];
      HONE_TRY(std::vector<int64_t> perm, ops::transpose_perm(n, static_cast<int64_t>(x.size())));
      dims_t out;
      for (int64_t p : perm) out.push_back(x[static_cast<size_t>(p)]);
      OpPlan p;
      p.outputs = {out};
      p.kernel = "transpose.f32.blas.strided";
      p.run = [x, perm](const RunArgs& r) {
        kernels::transpose(x, perm, r.inputs[0], r.outputs[0], *r.pool);
      };
      return p;
    });
  }
  // Concat
  const int64_t axis = ops::axis_attr(n);
  return PlanFn([=](const std::vector<dims_t>& in, const PlanEnv&) -> Result<OpPlan> {
    HONE_TRY(size_t a, norm_axis(axis, in[0].size(), n));
    dims_t out = in[0];
    out[a] = 0;
    std::vector<int64_t> inner;
    for (const dims_t& d : in) {
      if (d.size() != out.size())
        return fail(ErrorCode::kInvalidArgument,
                    "Concat inputs of " + n.describe() + " differ in rank");
      for (size_t i = 0; i < d.size(); ++i)
        if (i != a && d[i] != out[i])
          return fail(ErrorCode::kInvalidArgument,
                      "Concat inputs of " + n.describe() + " differ in dim " + std::to_string(i));
      out[a] += d[a];
      inner.push_back(prod(d, a));
    }
    const int64_t outer = prod(out, 0, a);
    OpPlan p;
    p.outputs = {out};
    p.kernel = "concat.f32.blas.copy";
    p.run = [outer, inner](const RunArgs& r) {
      kernels::concat(outer, inner, r.inputs, r.outputs[0], *r.pool);
    };
    return p;
  });
}

}  // namespace

Result<Unit> create_simple(const BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  const std::string& op = n.op_type;
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  Result<PlanFn> f = fail(ErrorCode::kUnsupported, "no blas kernel for " + op);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Identity") {
    u.inputs = {n.inputs[0]};
    f = make_shape_op(g, n);
  } else if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
             op == "GlobalMaxPool") {
    u.inputs = {n.inputs[0]};
    f = make_pool(n);
  } else if (op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization" ||
             ops::reduce_kind(op)) {
    u.inputs = {n.inputs[0]};
    f = make_norm(g, n);
  } else if (op == "Transpose") {
    u.inputs = {n.inputs[0]};
    f = make_layout(n);
  } else if (op == "Concat") {
    u.inputs = n.inputs;
    f = make_layout(n);
  }
  if (!f) return fail(std::move(f).error());
  u.op = std::make_unique<FnOp>(std::move(*f));
  return u;
}

Result<Unit> create_unit(const BlockInfo& b, const Node& n, std::vector<NodeId>* absorbed) {
  const std::string& op = n.op_type;
  if (host_eval::host_node(b.g, n, kHostPolicy, b.known)) return create_host(b, n);
  if (op == "Gather" || op == "GatherND" || op == "Slice" || op == "Split" || op == "Expand" ||
      op == "Where")
    return create_index(b, n);
  if (op == "Pad") return create_pad(b, n);
  if (op == "Conv" || op == "Gemm" || op == "MatMul") return create_dense(b, n, absorbed);
  kernels::EwInstr in;
  kernels::EwOp bop;
  if (op == "BatchNormalization" || unary_instr(b.g, n, &in) || binary_op(n, &bop))
    return create_eltwise(b, n, absorbed);
  return create_simple(b, n);
}

const Node* BlockInfo::sole_consumer(ValueId v) const {
  const size_t i = static_cast<size_t>(v);
  if (v < 0 || is_output[i] || consumers[i] != 1 || used[static_cast<size_t>(consumer[i])])
    return nullptr;
  return &g.node(consumer[i]);
}

}  // namespace hone::blas
