// The cuda backend's element-indexed ops (kernels/index_ops.cu): CumSum
// (f32, i64, i32; axis known when planned; exclusive, reverse), OneHot
// (depth known when planned, values on the device), GatherElements (f32,
// i64, i32 or bool data), ScatterElements and ScatterND (f32, i64, i32
// data; reduction none, add, mul, max, min). Each kernel walks what the reference walks in
// the reference's order, so results match it bit for bit, duplicate
// scatter indices included; an index out of range fails the run as the
// reference does (run_errors.h), except OneHot's, which ONNX leaves off.
// NonZero (f32, i64, i32, bool) writes its coordinates and their count; the
// block's run reads the count back and the block ends there (ops/nonzero.h);
// NonMaxSuppression does the same (ops_nms.cpp).
#include <algorithm>

#include "backends/common/node_query.h"
#include "backends/cuda/op.h"
#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::cuda {
namespace {

bool integer(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

/// i64, i32 or f32 (codes 1, 2, 0): the dtypes these kernels compute in.
bool numeric(DType t) {
  return t == DType::kF32 || integer(t);
}

/// ScatterElements' reduction as the kernel's code: 0 none, 1 add, 2 mul, 3 max, 4 min.
Result<int> reduction_code(const Node& n) {
  HONE_TRY(const std::string r, ops::scatter_reduction(n));
  const char* names[] = {"none", "add", "mul", "max", "min"};
  int code = 0;
  while (r != names[code]) ++code;
  return code;
}

Result<OpPlan> plan_cumsum(const Node& n, DType t, const std::vector<dims_t>& in,
                           const PlanEnv& env) {
  const dims_t& x = in[0];
  if (x.empty()) return fail(ErrorCode::kInvalidArgument, "CumSum needs rank >= 1, got a scalar");
  HONE_TRY(const std::vector<int64_t> axes, host_eval::ints(n, 1, env, "CumSum axis"));
  if (axes.size() != 1)
    return fail(ErrorCode::kInvalidArgument,
                "CumSum axis has " + std::to_string(axes.size()) + " values, not one");
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(axes[0], static_cast<int64_t>(x.size()), "CumSum axis"));
  long long outer = 1, inner = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) outer *= x[d];
    if (static_cast<int64_t>(d) > axis) inner *= x[d];
  }
  const long long len = x[static_cast<size_t>(axis)];
  const int exclusive = n.attr_int("exclusive", 0) != 0 ? 1 : 0;
  const int reverse = n.attr_int("reverse", 0) != 0 ? 1 : 0;
  OpPlan p;
  p.outputs = {x};
  p.dtypes = {t};
  p.kernel = "cumsum." + dtype_word(t) + ".cuda.line_per_thread" + (exclusive ? ".exclusive" : "") +
             (reverse ? ".reverse" : "");
  const int code = element_code(t);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (outer * inner * len == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_cumsum"));
    CUdeviceptr xi = b.in[0], y = b.out[0];
    long long o = outer, l = len, i = inner;
    int k = code, e = exclusive, r = reverse;
    return launch_1d(c.d, f, c.stream, outer * inner, {&xi, &y, &o, &l, &i, &k, &e, &r});
  };
  return p;
}

Result<OpPlan> plan_one_hot(const Node& n, DType index, DType values, const std::vector<dims_t>& in,
                            const PlanEnv& env) {
  const dims_t& idx = in[0];
  const Tensor* depth_t = env.value(n.inputs[1]);
  if (depth_t == nullptr || depth_t->numel() != 1)
    return fail(ErrorCode::kInvalidArgument, "OneHot depth must be one value known when planned");
  const double depth_d = tensor_element_as_double(*depth_t, 0);
  if (!(depth_d >= 0.0 && depth_d < 9.0e15))
    return fail(ErrorCode::kInvalidArgument,
                "OneHot depth " + std::to_string(depth_d) + " is invalid");
  const int64_t depth = integer(depth_t->dtype()) ? tensor_element_as_int64(*depth_t, 0)
                                                  : static_cast<int64_t>(depth_d);
  if (numel_of(in[2]) != 2)
    return fail(ErrorCode::kInvalidArgument,
                "OneHot values must hold [off_value, on_value], got " + shape_to_string(in[2]));
  const auto rank = static_cast<int64_t>(idx.size()) + 1;
  HONE_TRY(const int64_t axis, ops::normalize_axis(ops::axis_attr(n), rank, "OneHot axis"));
  dims_t out = idx;
  out.insert(out.begin() + axis, depth);
  long long outer = 1, inner = 1;
  for (size_t d = 0; d < idx.size(); ++d)
    (static_cast<int64_t>(d) < axis ? outer : inner) *= idx[d];
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {values};
  p.kernel = "one_hot." + dtype_word(values) + ".cuda.indices_" + dtype_word(index);
  const int is64 = index == DType::kI64 ? 1 : 0, bytes = static_cast<int>(dtype_size(values));
  const long long total = outer * depth * inner;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_one_hot"));
    CUdeviceptr ii = b.in[0], v = b.in[2], y = b.out[0];
    long long o = outer, d = depth, i = inner;
    int w = is64, sz = bytes;
    return launch_1d(c.d, f, c.stream, total, {&ii, &v, &y, &o, &d, &i, &w, &sz});
  };
  return p;
}

/// The indices' checks GatherElements and ScatterElements share, as the
/// reference's: ranks equal (at least 1), the indices no larger than the
/// data off the axis. Returns the normalized axis.
Result<int64_t> elements_axis(const Node& n, const dims_t& x, const dims_t& idx) {
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0 || idx.size() != x.size())
    return fail(ErrorCode::kInvalidArgument, n.op_type + " indices " + shape_to_string(idx) +
                                                 " must have the rank of data " +
                                                 shape_to_string(x) + " (at least 1)");
  if (rank > kMaxRank)
    return fail(ErrorCode::kUnsupported,
                n.op_type + " of rank " + std::to_string(rank) + " (cuda indexes up to 6 dims)");
  const std::string what = n.op_type + " axis";
  HONE_TRY(const int64_t axis, ops::normalize_axis(ops::axis_attr(n), rank, what.c_str()));
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && idx[static_cast<size_t>(a)] > x[static_cast<size_t>(a)])
      return fail(ErrorCode::kInvalidArgument, n.op_type + " indices " + shape_to_string(idx) +
                                                   " are larger than data " + shape_to_string(x) +
                                                   " on axis " + std::to_string(a));
  return axis;
}

Result<OpPlan> plan_gather_elements(const Node& n, DType data, DType index,
                                    const std::vector<dims_t>& in) {
  const dims_t &x = in[0], &idx = in[1];
  HONE_TRY(const int64_t axis, elements_axis(n, x, idx));
  const auto a = static_cast<size_t>(axis);
  const dims_t xs = strides_of(x);
  CopyShape s;
  s.rank = static_cast<int32_t>(idx.size());
  for (size_t d = 0; d < idx.size(); ++d) {
    s.dims[d] = idx[d];
    s.src[d] = d == a ? 0 : xs[d];
  }
  OpPlan p;
  p.outputs = {idx};
  p.dtypes = {data};
  p.kernel = "gather_elements." + dtype_word(data) + ".cuda.indices_" + dtype_word(index);
  const long long total = numel_of(idx), dim = x[a], stride = xs[a];
  const int is64 = index == DType::kI64 ? 1 : 0, bytes = static_cast<int>(dtype_size(data));
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_gather_elements"));
    CUdeviceptr xi = b.in[0], ii = b.in[1], y = b.out[0];
    CopyShape sh = s;
    long long n_ = total, d = dim, st = stride;
    int w = is64, sz = bytes;
    CUdeviceptr err = c.errors;
    unsigned long long code = run_error_code(kRunErrorIndex, b.step);
    return launch_1d(c.d, f, c.stream, total,
                     {&xi, &ii, &y, &sh, &n_, &d, &st, &w, &sz, &err, &code});
  };
  return p;
}

Result<OpPlan> plan_scatter_elements(const Node& n, DType data, DType index,
                                     const std::vector<dims_t>& in) {
  const dims_t &x = in[0], &idx = in[1];
  if (in[2] != idx)
    return fail(ErrorCode::kInvalidArgument, n.op_type + " updates " + shape_to_string(in[2]) +
                                                 " must have the indices' shape " +
                                                 shape_to_string(idx));
  HONE_TRY(const int64_t axis, elements_axis(n, x, idx));
  HONE_TRY(const int red, reduction_code(n));
  const auto a = static_cast<size_t>(axis);
  const dims_t xs = strides_of(x), is = strides_of(idx);
  CopyShape s;
  s.rank = static_cast<int32_t>(idx.size());
  for (size_t d = 0; d < idx.size(); ++d) {
    s.dims[d] = d == a ? 1 : idx[d];
    s.src[d] = d == a ? 0 : is[d];
    s.dst[d] = d == a ? 0 : xs[d];
  }
  OpPlan p;
  p.outputs = {x};
  p.dtypes = {data};
  const char* names[] = {"none", "add", "mul", "max", "min"};
  p.kernel = "scatter_elements." + dtype_word(data) + ".cuda.line_per_thread." + names[red];
  const long long count = idx[a], lines = count == 0 ? 0 : numel_of(idx) / count, istride = is[a],
                  dim = x[a], ostride = xs[a], total = numel_of(x);
  const int is64 = index == DType::kI64 ? 1 : 0, dcode = element_code(data);
  const size_t bytes = static_cast<size_t>(total) * dtype_size(data);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    // The output starts as the data, then takes the updates.
    if (bytes > 0)
      HONE_CHECK_OK(c.d.check(c.d.api().cuMemcpyDtoDAsync(b.out[0], b.in[0], bytes, c.stream),
                              "cuMemcpyDtoDAsync"));
    if (lines == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_scatter_elements"));
    CUdeviceptr ii = b.in[1], u = b.in[2], y = b.out[0];
    CopyShape sh = s;
    long long l = lines, k = count, ist = istride, d = dim, ost = ostride;
    int w = is64, dc = dcode, r = red;
    CUdeviceptr err = c.errors;
    unsigned long long code = run_error_code(kRunErrorIndex, b.step);
    return launch_1d(c.d, f, c.stream, lines,
                     {&ii, &u, &y, &sh, &l, &k, &ist, &d, &ost, &w, &dc, &r, &err, &code});
  };
  return p;
}

Result<OpPlan> plan_scatter_nd(const Node& n, DType data, DType index,
                               const std::vector<dims_t>& in) {
  const dims_t &x = in[0], &idx = in[1];
  const auto r = static_cast<int64_t>(x.size()), q = static_cast<int64_t>(idx.size());
  if (r < 1 || q < 1 || idx.back() > r)
    return fail(ErrorCode::kInvalidArgument,
                "ScatterND needs data and indices of rank >= 1 and "
                "tuples no longer than the data's rank; got data " +
                    shape_to_string(x) + ", indices " + shape_to_string(idx));
  const int64_t k = idx.back();
  dims_t want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), x.begin() + k, x.end());
  if (in[2] != want)
    return fail(ErrorCode::kInvalidArgument, "ScatterND updates " + shape_to_string(in[2]) +
                                                 " must have shape " + shape_to_string(want));
  if (k > kMaxRank)
    return fail(ErrorCode::kUnsupported,
                "ScatterND tuples of " + std::to_string(k) + " indices (cuda reads up to 6)");
  HONE_TRY(const int red, reduction_code(n));
  const dims_t xs = strides_of(x);
  CopyShape s;
  s.rank = static_cast<int32_t>(k);
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
    s.dims[j] = x[j];
    s.src[j] = xs[j];
  }
  OpPlan p;
  p.outputs = {x};
  p.dtypes = {data};
  const char* names[] = {"none", "add", "mul", "max", "min"};
  p.kernel = "scatter_nd." + dtype_word(data) + ".cuda.slice_element_per_thread." + names[red];
  const long long tuples = numel_of(dims_t(idx.begin(), idx.end() - 1)),
                  slice = numel_of(dims_t(x.begin() + k, x.end()));
  const int is64 = index == DType::kI64 ? 1 : 0, dcode = element_code(data);
  const size_t bytes = static_cast<size_t>(numel_of(x)) * dtype_size(data);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (bytes > 0)
      HONE_CHECK_OK(c.d.check(c.d.api().cuMemcpyDtoDAsync(b.out[0], b.in[0], bytes, c.stream),
                              "cuMemcpyDtoDAsync"));
    if (tuples * slice == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_scatter_nd"));
    CUdeviceptr ii = b.in[1], u = b.in[2], y = b.out[0];
    CopyShape sh = s;
    long long t = tuples, sl = slice;
    int w = is64, dc = dcode, rr = red;
    CUdeviceptr err = c.errors;
    unsigned long long code = run_error_code(kRunErrorIndex, b.step);
    return launch_1d(c.d, f, c.stream, slice,
                     {&ii, &u, &y, &sh, &t, &sl, &w, &dc, &rr, &err, &code});
  };
  return p;
}

/// NonZero of `x` (ops/nonzero.h): one slot of rank * numel + 1 i64, the
/// coordinates packed at its start and the count last; the block's run hands
/// it out as [rank, count] (OpPlan::counted).
Result<OpPlan> plan_nonzero(DType x, const std::vector<dims_t>& in) {
  const dims_t& d = in[0];
  if (d.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "NonZero of rank " + std::to_string(d.size()) +
                                             " (cuda indexes up to " + std::to_string(kMaxRank) +
                                             " dims)");
  const auto rank = static_cast<int64_t>(d.size());
  const long long n = numel_of(d);
  const long long capacity = rank * n;
  CopyShape s;
  s.rank = static_cast<int32_t>(rank);
  std::copy(d.begin(), d.end(), s.dims);
  const int code = element_code(x);
  OpPlan p;
  p.outputs = {{capacity + 1}};
  p.dtypes = {DType::kI64};
  p.counted = ops::CountedOutput{0, {rank, 0}, 1};
  p.kernel = "nonzero." + dtype_word(x) + ".cuda.block_scan";
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    HONE_TRY(CUfunction f, c.fixed.function("hone_nonzero"));
    CUdeviceptr xi = b.in[0], y = b.out[0];
    long long count = n, cap = capacity;
    int k = code;
    CopyShape shape = s;
    return launch(c.d, f, c.stream, 1, 1024, {&xi, &y, &count, &k, &shape, &cap});
  };
  return p;
}

std::string known_when_planned(const Graph& g, const Node& n, size_t i, const char* what) {
  if (n.inputs.size() <= i || n.inputs[i] < 0) return std::string(what) + " is missing";
  if (!host_eval::host_value(g, n.inputs[i], host_eval::Policy::kAnyDtype))
    return std::string(what) + " is neither a constant nor computed from shapes";
  return {};
}

}  // namespace

bool element_op(const std::string& op) {
  return op == "CumSum" || op == "OneHot" || op == "GatherElements" || op == "ScatterElements" ||
         op == "ScatterND" || op == "NonZero" || op == "NonMaxSuppression";
}

std::string element_op_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "NonMaxSuppression") return nms_why_not(g, n);
  if (node_query::extra_outputs_used(n)) return "more than one output";
  if (n.inputs.empty() || n.inputs[0] < 0) return "input 0 is missing";
  const DType x = moved_dtype(g, n.inputs[0]);
  if (op == "NonZero") {
    if (!movable(x)) return "NonZero of " + dtype_word(x) + " (cuda reads f32, i64, i32, bool)";
    if (x == DType::kBool && host_eval::host_value(g, n.inputs[0], host_eval::Policy::kAnyDtype))
      return "input is a bool known when planned (0/1 floats on the device)";
    return {};
  }
  if (op == "CumSum") {
    if (!numeric(x)) return "CumSum of " + dtype_word(x) + " (cuda sums f32, i64 and i32)";
    return known_when_planned(g, n, 1, "input 1 (axis)");
  }
  if (op == "OneHot") {
    if (!integer(x)) return "OneHot indices are " + dtype_word(x) + " (cuda reads i64 or i32)";
    if (std::string why = known_when_planned(g, n, 1, "input 1 (depth)"); !why.empty()) return why;
    if (n.inputs.size() < 3 || n.inputs[2] < 0) return "input 2 (values) is missing";
    // Values reach the device as they are: a bool constant would be 0/1 floats.
    if (const DType v = moved_dtype(g, n.inputs[2]); !numeric(v))
      return "OneHot values are " + dtype_word(v) + " (cuda writes f32, i64 and i32)";
    return {};
  }
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return "input 1 (indices) is missing";
  if (const DType i = known_dtype(g, n.inputs[1]); !integer(i))
    return op + " indices are " + dtype_word(i) + " (cuda reads i64 or i32)";
  if (op == "GatherElements") {
    if (!movable(x))
      return "GatherElements of " + dtype_word(x) + " (cuda moves f32, i64, i32, bool)";
    if (x == DType::kBool && host_eval::host_value(g, n.inputs[0], host_eval::Policy::kAnyDtype))
      return "data is a bool known when planned (0/1 floats on the device)";
    return {};
  }
  if (!numeric(x)) return op + " of " + dtype_word(x) + " (cuda scatters f32, i64 and i32)";
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return "input 2 (updates) is missing";
  if (const DType u = moved_dtype(g, n.inputs[2]); u != x)
    return op + " updates are " + dtype_word(u) + ", its data " + dtype_word(x);
  if (Result<int> r = reduction_code(n); !r) return r.error().message();
  return {};
}

Result<Unit> create_element_op(const BlockInfo& b, const Node& n) {
  if (n.op_type == "NonMaxSuppression") return create_nms(b, n);
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  const Node node = n;  // the planners keep their own copy
  const DType x = moved_dtype(g, n.inputs[0]);
  Planner p;
  if (n.op_type == "CumSum") {
    u.inputs = {n.inputs[0]};  // the axis is read when planning
    p = [node, x](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_cumsum(node, x, in, env);
    };
  } else if (n.op_type == "NonZero") {
    u.inputs = {n.inputs[0]};
    p = [x](const std::vector<dims_t>& in, const PlanEnv&) { return plan_nonzero(x, in); };
  } else if (n.op_type == "OneHot") {
    // Depth is read when planning; the unit's input 1 is never read (its
    // slot keeps input 2 at index 2).
    u.inputs = {n.inputs[0], n.inputs[0], n.inputs[2]};
    const DType values = moved_dtype(g, n.inputs[2]);
    p = [node, x, values](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_one_hot(node, x, values, in, env);
    };
  } else if (n.op_type == "GatherElements" || n.op_type == "ScatterElements" ||
             n.op_type == "ScatterND") {
    u.inputs = n.inputs;
    const DType index = known_dtype(g, n.inputs[1]);
    if (n.op_type == "GatherElements")
      p = [node, x, index](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_gather_elements(node, x, index, in);
      };
    else if (n.op_type == "ScatterElements")
      p = [node, x, index](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_scatter_elements(node, x, index, in);
      };
    else
      p = [node, x, index](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_scatter_nd(node, x, index, in);
      };
  } else {
    return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
