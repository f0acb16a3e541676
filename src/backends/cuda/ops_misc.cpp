// The cuda backend's other ops: pools, reductions, Softmax/LogSoftmax
// (fixed NVRTC kernels), Transpose and Concat (strided copies), and views
// (Reshape, Flatten, Squeeze, Unsqueeze), which alias their input's device
// memory and launch nothing. LayerNormalization: ops_layernorm.cpp.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "backends/cuda/op.h"
#include "backends/cuda/storage.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/window.h"

namespace hone::cuda {
namespace {

/// ONNX axis normalisation (ops/axis.h); the error names the op.
Result<int64_t> norm_axis(int64_t axis, size_t rank, const std::string& what) {
  return ops::normalize_axis(axis, static_cast<int64_t>(rank), (what + " axis").c_str());
}

int64_t prod(const dims_t& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

/// Axes from attribute `axes` or, when `from_input`, input 1 (a constant or
/// host value: supports() checked); nullopt when absent.
Result<std::optional<std::vector<int64_t>>> axes_of(const Node& n, bool from_input,
                                                    const PlanEnv& env) {
  if (!from_input) return n.has_attr("axes") ? std::optional(n.attr_ints("axes")) : std::nullopt;
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return std::optional<std::vector<int64_t>>();
  HONE_TRY(std::vector<int64_t> axes, host_eval::ints(n, 1, env, "axes"));
  return std::optional(std::move(axes));
}

Result<CUfunction> fn(const ExecCtx& c, const char* name) {
  return c.fixed.function(name);
}

/// The reductions' codes in the kernels (kernels/fixed.cu, hone_reduce_pre).
constexpr int kReduceLogSumExp = 8;
int reduce_code(const std::string& op) {
  static const std::map<std::string, int> kCodes = {
      {"ReduceSum", 0},   {"ReduceMean", 1},      {"ReduceMax", 2},
      {"ReduceMin", 3},   {"ReduceProd", 4},      {"ReduceL1", 5},
      {"ReduceL2", 6},    {"ReduceSumSquare", 7}, {"ReduceLogSumExp", kReduceLogSumExp},
      {"ReduceLogSum", 9}};
  const auto it = kCodes.find(op);
  return it == kCodes.end() ? -1 : it->second;
}

/// Reduction `op` (reduce_code) of x viewed as [outer, r, inner] along r.
/// Contiguous rows (inner 1) of up to 16384 take a warp each (8 a block,
/// float4 loads where aligned), but for log-sum-exp, whose max comes first;
/// the rest a block per output.
Result<void> run_reduce(const ExecCtx& c, CUdeviceptr x, CUdeviceptr y, long long outer,
                        long long r, long long inner, int op) {
  if (inner == 1 && r <= 16384 && op != kReduceLogSumExp) {
    HONE_TRY(CUfunction f, fn(c, "hone_reduce_rows"));
    int vec = r % 4 == 0 && x % 16 == 0 ? 1 : 0;
    return launch(c.d, f, c.stream,
                  static_cast<unsigned>(std::min<long long>((outer + 7) / 8, 65535)), 256,
                  {&x, &y, &outer, &r, &op, &vec});
  }
  HONE_TRY(CUfunction f, fn(c, "hone_reduce"));
  return launch(c.d, f, c.stream, static_cast<unsigned>(std::min<long long>(outer * inner, 65535)),
                256, {&x, &y, &outer, &r, &inner, &op});
}

}  // namespace

Result<PoolWindow> pool_window(const Node& n, const dims_t& x) {
  const bool is_max = n.op_type.find("Max") != std::string::npos;
  const dims_t spatial(x.begin() + 2, x.end());
  HONE_TRY(const ops::PoolAttrs pa, ops::pool_attrs(n));
  const dims_t& kernel = pa.kernel_shape;
  HONE_TRY(ops::Window w, ops::make_window(n, spatial, kernel, pa.ceil_mode, n.op_type));
  if (!is_max && w.dilations != dims_t(w.rank(), 1))
    return fail(ErrorCode::kUnsupported, "AveragePool with dilations");
  const bool one_d = x.size() == 3;
  auto at = [&](const dims_t& v, int d, int64_t one) -> int {
    return int(one_d ? (d == 0 ? one : v[0]) : v[d]);
  };
  PoolWindow pw;
  pw.args = {at(spatial, 0, 1),     at(spatial, 1, 1),
             at(w.out, 0, 1),       at(w.out, 1, 1),
             at(kernel, 0, 1),      at(kernel, 1, 1),
             at(w.strides, 0, 1),   at(w.strides, 1, 1),
             at(w.pad_begin, 0, 0), at(w.pad_begin, 1, 0),
             at(w.pad_end, 0, 0),   at(w.pad_end, 1, 0),
             at(w.dilations, 0, 1), at(w.dilations, 1, 1),
             is_max ? 1 : 0,        pa.count_include_pad ? 1 : 0};
  pw.out = {x[0], x[1]};
  pw.out.insert(pw.out.end(), w.out.begin(), w.out.end());
  return pw;
}

namespace {

/// Host mirror of hone_pool3d's HonePool3 (kernels/sample_ops.cu).
struct Pool3 {
  int in[3], out[3], k[3], s[3], pb[3], pe[3], dil[3];
  int is_max, include_pad;
};

/// MaxPool and AveragePool over three spatial dims (MViT's pooled skip path,
/// video nets): hone_pool3d, one thread an output element.
Result<OpPlan> plan_pool3d(const Node& n, const dims_t& x) {
  const bool is_max = n.op_type == "MaxPool";
  const dims_t spatial(x.begin() + 2, x.end());
  HONE_TRY(const ops::PoolAttrs pa, ops::pool_attrs(n));
  HONE_TRY(ops::Window w, ops::make_window(n, spatial, pa.kernel_shape, pa.ceil_mode, n.op_type));
  if (!is_max && w.dilations != dims_t(w.rank(), 1))
    return fail(ErrorCode::kUnsupported, "AveragePool with dilations");
  for (int64_t d : spatial)
    if (d > std::numeric_limits<int>::max())
      return fail(ErrorCode::kUnsupported, n.op_type + " of " + shape_to_string(x) +
                                               " (cuda indexes a 3-D pool's dims in 32 bits)");
  Pool3 a{};
  for (size_t d = 0; d < 3; ++d) {
    a.in[d] = static_cast<int>(spatial[d]);
    a.out[d] = static_cast<int>(w.out[d]);
    a.k[d] = static_cast<int>(pa.kernel_shape[d]);
    a.s[d] = static_cast<int>(w.strides[d]);
    a.pb[d] = static_cast<int>(w.pad_begin[d]);
    a.pe[d] = static_cast<int>(w.pad_end[d]);
    a.dil[d] = static_cast<int>(w.dilations[d]);
  }
  a.is_max = is_max ? 1 : 0;
  a.include_pad = pa.count_include_pad ? 1 : 0;
  OpPlan p;
  dims_t out = {x[0], x[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  p.outputs = {out};
  p.kernel = is_max ? "maxpool3d.f32.cuda.direct" : "avgpool3d.f32.cuda.direct";
  const long long total = numel_of(out), NC = x[0] * x[1];
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, fn(c, "hone_pool3d"));
    CUdeviceptr xi = b.in[0], yo = b.out[0];
    long long nc = NC;
    Pool3 args = a;
    return launch_1d(c.d, f, c.stream, total, {&xi, &yo, &nc, &args});
  };
  return p;
}

Result<OpPlan> plan_pool(const Node& n, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  if (x.size() == 5 && !n.op_type.starts_with("Global")) return plan_pool3d(n, x);
  if (x.size() != 3 && x.size() != 4 && !(x.size() == 5 && n.op_type.starts_with("Global")))
    return fail(ErrorCode::kUnsupported, n.op_type + " input rank " + std::to_string(x.size()));
  const bool global = n.op_type.starts_with("Global");
  const bool is_max = n.op_type.find("Max") != std::string::npos;
  const int64_t NC = x[0] * x[1];
  const dims_t spatial(x.begin() + 2, x.end());
  OpPlan p;
  if (global) {
    dims_t out = {x[0], x[1]};
    out.resize(x.size(), 1);
    p.outputs = {out};
    p.kernel = is_max ? "globalmaxpool.f32.cuda.reduce" : "globalavgpool.f32.cuda.reduce";
    const long long outer = NC, r = numel_of(spatial);
    const int op = is_max ? 2 : 1;
    p.run = [=](const ExecCtx& c, const Bind& b) {
      return run_reduce(c, b.in[0], b.out[0], outer, r, 1, op);
    };
    return p;
  }
  HONE_TRY(const PoolWindow pw, pool_window(n, x));
  const std::array<int, 16> args = pw.args;
  const dims_t& out = pw.out;
  p.outputs = {out};
  p.kernel = is_max ? "maxpool.f32.cuda.direct" : "avgpool.f32.cuda.direct";
  const long long total = numel_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    HONE_TRY(CUfunction f, fn(c, "hone_pool2d"));
    CUdeviceptr xi = b.in[0], yo = b.out[0];
    long long nc = NC;
    int a[16];
    std::copy(std::begin(args), std::end(args), a);
    std::vector<void*> ptrs = {&xi, &yo, &nc};
    for (int& v : a) ptrs.push_back(&v);
    return launch_1d(c.d, f, c.stream, total, ptrs);
  };
  return p;
}

/// Launches a [outer, r, inner] row kernel (hone_reduce, hone_softmax) with a trailing int.
Result<void> rows_kernel(const ExecCtx& c, const char* name, CUdeviceptr x, CUdeviceptr y,
                         long long outer, long long r, long long inner, int flag) {
  HONE_TRY(CUfunction f, fn(c, name));
  return launch(c.d, f, c.stream, static_cast<unsigned>(std::min<long long>(outer * inner, 65535)),
                256, {&x, &y, &outer, &r, &inner, &flag});
}

Result<OpPlan> plan_softmax(const Graph& g, const Node& n, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  HONE_TRY(const ops::SoftmaxAttrs sa, ops::softmax_attrs(n, g.opset()));
  const bool v13 = !sa.coerce_2d;
  HONE_TRY(int64_t axis, norm_axis(sa.axis, std::max<size_t>(x.size(), 1), n.op_type));
  const long long outer = prod(x, 0, axis),
                  r = v13 ? prod(x, axis, axis + 1) : prod(x, axis, x.size());
  const long long inner = v13 ? prod(x, axis + 1, x.size()) : 1;
  const int log = n.op_type == "LogSoftmax" ? 1 : 0;
  OpPlan p;
  p.outputs = {x};
  if (inner == 1 && r <= 2048) {
    // Contiguous rows short enough for one warp each (attention scores).
    p.kernel = log ? "logsoftmax.f32.cuda.warp_rows" : "softmax.f32.cuda.warp_rows";
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      HONE_TRY(CUfunction f, fn(c, "hone_softmax_warp"));
      CUdeviceptr xi = b.in[0], yo = b.out[0];
      long long rows = outer, rr = r;
      int flag = log;
      const long long blocks = std::min<long long>((rows + 7) / 8, 65535);  // 8 warps a block
      return launch(c.d, f, c.stream, static_cast<unsigned>(blocks), 256,
                    {&xi, &yo, &rows, &rr, &flag});
    };
    return p;
  }
  p.kernel = log ? "logsoftmax.f32.cuda.rows" : "softmax.f32.cuda.rows";
  p.run = [=](const ExecCtx& c, const Bind& b) {
    return rows_kernel(c, "hone_softmax", b.in[0], b.out[0], outer, r, inner, log);
  };
  return p;
}

Result<OpPlan> plan_reduce(const Graph& g, const Node& n, const std::vector<dims_t>& in,
                           const PlanEnv& env) {
  const dims_t& x = in[0];
  const bool from_input = g.opset() >= (n.op_type == "ReduceSum" ? 13 : 18);
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  HONE_TRY(std::optional<std::vector<int64_t>> axes, axes_of(n, from_input, env));
  if ((!axes || axes->empty()) && ra.noop_with_empty_axes) return view(x, "reduce.f32.cuda.noop");
  std::vector<int64_t> ax;
  if (!axes || axes->empty()) {
    ax.resize(x.size());
    std::iota(ax.begin(), ax.end(), 0);
  } else {
    for (int64_t a : *axes) {
      HONE_TRY(int64_t d, norm_axis(a, x.size(), n.op_type));
      ax.push_back(d);
    }
  }
  std::sort(ax.begin(), ax.end());
  ax.erase(std::unique(ax.begin(), ax.end()), ax.end());
  // Axes with gaps between them: the input is first copied, transposed, into
  // the workspace as [kept axes..., reduced axes...], whose rows are reduced.
  const bool gaps = !ax.empty() && ax.back() - ax.front() + 1 != static_cast<int64_t>(ax.size());
  if (gaps && x.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported,
                n.op_type + " over non-adjacent axes of rank " + std::to_string(x.size()));
  const bool keep = ra.keepdims;
  dims_t out;
  for (size_t d = 0; d < x.size(); ++d) {
    const bool reduced = std::binary_search(ax.begin(), ax.end(), static_cast<int64_t>(d));
    if (!reduced)
      out.push_back(x[d]);
    else if (keep)
      out.push_back(1);
  }
  const int op = reduce_code(n.op_type);
  if (op < 0) return fail(ErrorCode::kInternal, "cuda: no reduction " + n.op_type);
  OpPlan p;
  p.outputs = {out};
  if (gaps) {
    dims_t moved, src;  // [kept..., reduced...] and where each reads x
    const dims_t xs = strides_of(x);
    long long kept = 1, r = 1;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t d = 0; d < x.size(); ++d) {
        const bool reduced = std::binary_search(ax.begin(), ax.end(), static_cast<int64_t>(d));
        if (reduced != (pass == 1)) continue;
        moved.push_back(x[d]);
        src.push_back(xs[d]);
        (reduced ? r : kept) *= x[d];
      }
    const dims_t dst = strides_of(moved);
    p.kernel = "reduce.f32.cuda.transpose+rows";
    p.workspace_bytes = round256(static_cast<size_t>(numel_of(x)) * sizeof(float));
    p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
      HONE_CHECK_OK(strided_copy(c, b.in[0], b.workspace, moved, src, dst));
      return run_reduce(c, b.workspace, b.out[0], kept, r, 1, op);
    };
    return p;
  }
  const size_t lo = ax.empty() ? 0 : ax.front(), hi = ax.empty() ? 0 : ax.back() + 1;
  const long long outer = prod(x, 0, lo), r = prod(x, lo, hi), inner = prod(x, hi, x.size());
  p.kernel = "reduce.f32.cuda.rows";
  p.run = [=](const ExecCtx& c, const Bind& b) {
    return run_reduce(c, b.in[0], b.out[0], outer, r, inner, op);
  };
  return p;
}

/// `t`: the elements' dtype (moved_dtype: f32, or i64/i32/bool made at run time).
/// `may_view`: false inside an attention unit, whose members each write a
/// value of their own (attention_unfused.cpp) or are read in place.
Result<OpPlan> plan_transpose(const Node& n, const std::vector<dims_t>& in, DType t,
                              bool may_view) {
  const dims_t& x = in[0];
  HONE_TRY(const dims_t perm, ops::transpose_perm(n, static_cast<int64_t>(x.size())));
  const dims_t xs = strides_of(x);
  dims_t out, src;
  for (int64_t d : perm) {
    out.push_back(x[d]);
    src.push_back(xs[d]);
  }
  // Only axes of extent 1 move: the same bytes in the same order, no copy.
  if (may_view && ops::transpose_keeps_order(x, perm)) return view(out, "transpose.view");
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {t};
  p.kernel = "transpose." + dtype_word(t) + ".cuda.strided_copy";
  const dims_t dst = strides_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) {
    return strided_copy_of(c, t, b.in[0], b.out[0], out, src, dst);
  };
  return p;
}

}  // namespace

Result<std::pair<dims_t, int64_t>> concat_dims(const Node& n, const std::vector<dims_t>& in) {
  HONE_TRY(int64_t axis, norm_axis(ops::axis_attr(n), in[0].size(), "Concat"));
  dims_t out = in[0];
  out[axis] = 0;
  for (const dims_t& d : in) {
    dims_t a = d, o = out;
    if (a.size() != o.size() || (a[axis] = 0, o[axis] = 0, a != o))
      return fail(ErrorCode::kInvalidArgument,
                  "Concat inputs differ off axis " + std::to_string(axis));
    out[axis] += d[axis];
  }
  return std::pair{out, axis};
}

namespace {

Result<OpPlan> plan_concat(const Node& n, const std::vector<dims_t>& in) {
  HONE_TRY(const auto shape, concat_dims(n, in));
  const dims_t out = shape.first;
  const int64_t axis = shape.second;
  OpPlan p;
  p.outputs = {out};
  p.kernel = "concat.f32.cuda.strided_copy";
  const dims_t dst = strides_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    int64_t offset = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      HONE_CHECK_OK(strided_copy(c, b.in[k],
                                 b.out[0] + static_cast<CUdeviceptr>(offset) * sizeof(float), in[k],
                                 strides_of(in[k]), dst));
      offset += in[k][axis] * dst[axis];
    }
    return {};
  };
  return p;
}

Result<OpPlan> plan_view(const Graph& g, const Node& n, const std::vector<dims_t>& in,
                         const PlanEnv& env) {
  const dims_t& x = in[0];
  const std::string& op = n.op_type;
  if (op == "Identity") return view(x, "identity.view");
  if (op == "Flatten") {
    // Flatten's axis may equal the rank (everything in the first dim).
    const int64_t given = ops::axis_attr(n);
    const auto r = static_cast<int64_t>(x.size());
    const auto boundary = ops::try_normalize_boundary(given, r);
    if (!boundary)
      return fail(ErrorCode::kInvalidArgument, "Flatten axis " + std::to_string(given) +
                                                   " is out of range for rank " +
                                                   std::to_string(r));
    const int64_t axis = *boundary;
    return view({prod(x, 0, axis), prod(x, axis, x.size())}, "flatten.view");
  }
  if (op == "Reshape") {
    HONE_TRY(dims_t out, host_eval::ints(n, 1, env, "Reshape shape"));
    const bool allowzero = ops::reshape_allowzero(n);
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allowzero) {
        if (i >= x.size()) return fail(ErrorCode::kInvalidArgument, "Reshape copies a missing dim");
        out[i] = x[i];
      }
      if (out[i] == -1) {
        if (infer >= 0) return fail(ErrorCode::kInvalidArgument, "Reshape has two -1 dims");
        infer = static_cast<int64_t>(i);
      } else {
        known *= out[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || numel_of(x) % known != 0)
        return fail(ErrorCode::kInvalidArgument,
                    "Reshape cannot infer the -1 dim of " + shape_to_string(out));
      out[infer] = numel_of(x) / known;
    }
    if (numel_of(out) != numel_of(x))
      return fail(ErrorCode::kInvalidArgument, "Reshape of " + shape_to_string(x) + " to " +
                                                   shape_to_string(out) + " changes the size");
    return view(out, "reshape.view");
  }
  const bool squeeze = op == "Squeeze";
  HONE_TRY(std::optional<std::vector<int64_t>> axes, axes_of(n, g.opset() >= 13, env));
  if (squeeze) {
    std::vector<bool> drop(x.size(), false);
    if (!axes)
      for (size_t d = 0; d < x.size(); ++d) drop[d] = x[d] == 1;
    else
      for (int64_t a : *axes) {
        HONE_TRY(int64_t d, norm_axis(a, x.size(), "Squeeze"));
        if (x[d] != 1) return fail(ErrorCode::kInvalidArgument, "Squeeze of a dim that is not 1");
        drop[d] = true;
      }
    dims_t out;
    for (size_t d = 0; d < x.size(); ++d)
      if (!drop[d]) out.push_back(x[d]);
    return view(out, "squeeze.view");
  }
  if (!axes) return fail(ErrorCode::kInvalidArgument, "Unsqueeze without axes");
  const size_t rank = x.size() + axes->size();
  std::vector<bool> ins(rank, false);
  for (int64_t a : *axes) {
    HONE_TRY(int64_t d, norm_axis(a, rank, "Unsqueeze"));
    ins[d] = true;
  }
  dims_t out;
  size_t k = 0;
  for (size_t d = 0; d < rank; ++d) out.push_back(ins[d] ? 1 : x[k++]);
  return view(out, "unsqueeze.view");
}

}  // namespace

OpPlan view(dims_t out, const char* kernel, int64_t offset) {
  OpPlan p;
  p.outputs = {std::move(out)};
  p.alias = {0};
  p.alias_offset = {offset};
  p.kernel = kernel;
  return p;
}

Result<Unit> create_misc(const BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  const std::string& op = n.op_type;
  const Node node = n;  // the planners keep their own copy
  Planner p;
  if (op == "Concat") {
    u.inputs = n.inputs;
    p = [node](const std::vector<dims_t>& in, const PlanEnv&) { return plan_concat(node, in); };
  } else {
    u.inputs = {n.inputs[0]};
    if (op.find("Pool") != std::string::npos) {
      p = [node](const std::vector<dims_t>& in, const PlanEnv&) { return plan_pool(node, in); };
    } else if (op == "Softmax" || op == "LogSoftmax") {
      p = [&g, node](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_softmax(g, node, in);
      };
    } else if (op.starts_with("Reduce")) {
      p = [&g, node](const std::vector<dims_t>& in, const PlanEnv& env) {
        return plan_reduce(g, node, in, env);
      };
    } else if (op == "Transpose") {
      const DType t = moved_dtype(g, n.inputs[0]);
      const bool may_view = !b.inside_attention;
      p = [node, t, may_view](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_transpose(node, in, t, may_view);
      };
    } else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
               op == "Identity") {
      p = [&g, node](const std::vector<dims_t>& in, const PlanEnv& env) {
        return plan_view(g, node, in, env);
      };
    } else {
      return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
    }
  }
  // An attention unit's members plan in f32 (AttentionOp reads half itself).
  u.op = std::make_unique<FnOp>(
      std::move(p), b.inside_attention ? nullptr : misc_half_planner(node, b.settings.math.half));
  return u;
}

}  // namespace hone::cuda
