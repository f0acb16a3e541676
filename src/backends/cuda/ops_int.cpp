// The cuda backend's ops on integer and bool tensors made at run time, and
// the typed copies every data-movement op uses. A value on the device keeps
// its dtype's bytes (OpPlan::dtypes sizes its slot): f32, i64, i32, one byte
// a bool, and f16/bf16 two bytes; a block input keeps its own. The one
// exception is a bool known when the plan is built (a constant or a host
// value), which goes up as 0/1 floats for the element-wise chains; kernels
// that may meet one take a flag for it (hone_logic, hone_where_sized).
//
// Here: a Gather whose indices are only known at run time (an embedding
// lookup of token ids; f32, i64 or i32 rows), Cast between f32, f16, bf16,
// i64, i32 and bool with ONNX's rules, and Clip of i64/i32 values or with
// bounds made at run time. Their kernels are in kernels/fixed.cu and
// kernels/tensor_ops.cu.
#include <set>

#include "backends/cuda/op.h"
#include "eval/kernel_util.h"
#include "ops/attrs.h"
#include "ops/axis.h"

namespace hone::cuda {
namespace {

/// Device code for an index dtype: 1 for i64, 0 for i32.
Result<int> index_kind(DType t, const std::string& what) {
  if (t == DType::kI64) return 1;
  if (t == DType::kI32) return 0;
  return fail(ErrorCode::kUnsupported,
              what + " are " + std::string(dtype_name(t)) + "; cuda gathers with i64 or i32");
}

/// `data`: f32, i64 or i32 rows, moved as 4-byte words (an i64 is two).
Result<OpPlan> plan_gather_rows(const Node& n, DType data, DType index_dtype,
                                const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  const dims_t& idx = in[1];
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Gather of a scalar");
  HONE_TRY(const int64_t axis, ops::normalize_axis(ops::axis_attr(n), rank, "Gather axis"));
  HONE_TRY(const int kind, index_kind(index_dtype, "Gather indices"));
  const int64_t words = data == DType::kI64 ? 2 : 1;
  if (data != DType::kF32 && data != DType::kI64 && data != DType::kI32)
    return fail(ErrorCode::kUnsupported, "Gather of " + dtype_word(data) +
                                             " data by indices "
                                             "made at run time (cuda gathers f32, i64 and i32)");
  const auto a = static_cast<size_t>(axis);
  dims_t out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  long long outer = 1, inner = words;
  for (size_t d = 0; d < a; ++d) outer *= x[d];
  for (size_t d = a + 1; d < x.size(); ++d) inner *= x[d];
  const long long count = numel_of(idx), dim = x[a], total = outer * count * inner;
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {data};
  p.kernel = "gather." + dtype_word(data) + ".cuda.indices_" + (kind ? "i64" : "i32");
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_gather_indices"));
    CUdeviceptr xi = b.in[0], ii = b.in[1], y = b.out[0];
    long long o = outer, k = count, d = dim, r = inner;
    int is64 = kind;
    CUdeviceptr err = c.errors;
    unsigned long long code = run_error_code(kRunErrorIndex, b.step);
    return launch_1d(c.d, f, c.stream, total, {&xi, &ii, &y, &o, &k, &d, &r, &is64, &err, &code});
  };
  return p;
}

Result<OpPlan> plan_cast(DType from, DType to, const std::vector<dims_t>& in) {
  const int f = element_code(from), t = element_code(to);
  if (f < 0 || t < 0)
    return fail(ErrorCode::kUnsupported, "Cast from " + dtype_word(from) + " to " + dtype_word(to) +
                                             " (cuda casts between f32, f16, bf16, i64, i32 "
                                             "and bool)");
  // Same dtype: the same bytes.
  if (from == to) return view(in[0], "cast.view");
  OpPlan p;
  p.outputs = {in[0]};
  p.dtypes = {to};
  p.kernel = "cast." + dtype_word(to) + ".cuda.from_" + dtype_word(from);
  const long long count = numel_of(in[0]);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (count == 0) return {};
    HONE_TRY(CUfunction fn, c.fixed.function("hone_cast"));
    CUdeviceptr x = b.in[0], y = b.out[0];
    long long n = count;
    int from_code = f, to_code = t;
    return launch_1d(c.d, fn, c.stream, count, {&x, &y, &n, &from_code, &to_code});
  };
  return p;
}

/// Clip of `t` values by the bounds present (`have`: bit 0 min, bit 1 max;
/// a missing bound's operand is x again, never read).
Result<OpPlan> plan_clip(DType t, int have, const std::vector<dims_t>& in) {
  const int code = element_code(t);
  if (code < 0 || code > 2)
    return fail(ErrorCode::kUnsupported,
                "Clip of " + dtype_word(t) + " (cuda clips f32, i64, i32)");
  std::vector<dims_t> operands = {in[0], {}, {}};
  for (size_t i = 1; i < 3; ++i)
    if ((have >> (i - 1)) & 1) {
      if (numel_of(in[i]) != 1)
        return fail(ErrorCode::kInvalidArgument, std::string("Clip ") + (i == 1 ? "min" : "max") +
                                                     " must be a scalar, got " +
                                                     shape_to_string(in[i]));
    }
  // One-element bounds read as rank 0 (stride 0 everywhere): the output has x's dims.
  return plan_broadcast(operands, "hone_clip_typed", code, t, "clip." + dtype_word(t) + ".cuda",
                        have);
}

}  // namespace

std::string dtype_word(DType t) {
  return std::string(dtype_name(t));
}

int element_code(DType t) {
  switch (t) {
    case DType::kF32:
      return 0;
    case DType::kI64:
      return 1;
    case DType::kI32:
      return 2;
    case DType::kBool:
      return 3;
    case DType::kF16:
      return 4;
    case DType::kBF16:
      return 5;
    default:
      return -1;
  }
}

DType moved_dtype(const Graph& g, ValueId v) {
  const DType t = known_dtype(g, v);
  return t == DType::kUndefined ? DType::kF32 : t;
}

bool movable(DType t) {
  return t == DType::kF32 || t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

Result<void> strided_copy_of(const ExecCtx& c, DType t, CUdeviceptr x, CUdeviceptr y,
                             const dims_t& dims, const dims_t& src, const dims_t& dst) {
  const size_t bytes = dtype_size(t);
  if (bytes == 4) return strided_copy(c, x, y, dims, src, dst);
  if (bytes == 2) return strided_copy_half(c, x, y, dims, src, dst);
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "strided copy of rank " + std::to_string(dims.size()));
  if (bytes == 8 && dims.size() < static_cast<size_t>(kMaxRank)) {
    // An i64 is two words: one more innermost dim, the fast word copies.
    dims_t d = dims, sx, sy;
    for (size_t i = 0; i < dims.size(); ++i) {
      sx.push_back(src[i] * 2);
      sy.push_back(dst[i] * 2);
    }
    d.push_back(2);
    sx.push_back(1);
    sy.push_back(1);
    return strided_copy(c, x, y, d, sx, sy);
  }
  long long n = numel_of(dims);
  if (n <= 0) return {};
  CopyShape s;
  s.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    s.dims[i] = dims[i];
    s.src[i] = src[i];
    s.dst[i] = dst[i];
  }
  HONE_TRY(CUfunction f, c.fixed.function("hone_strided_copy_sized"));
  int size = static_cast<int>(bytes);
  return launch_1d(c.d, f, c.stream, n, {&x, &y, &s, &n, &size});
}

DType known_dtype(const Graph& g, ValueId v) {
  if (v < 0) return DType::kUndefined;
  const Value& val = g.value(v);
  if (val.dtype != DType::kUndefined) return val.dtype;
  if (val.initializer) return val.initializer->dtype();
  // A graph built without inferred dtypes: a Cast's output has its target's,
  // a comparison's or logic op's is bool, ArgMax's and ArgMin's i64.
  if (val.producer >= 0) {
    const Node& p = g.node(val.producer);
    if (!p.domain.empty()) return DType::kUndefined;
    static const std::set<std::string> kBools = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor"};
    if (kBools.count(p.op_type)) return DType::kBool;
    if (p.op_type == "ArgMax" || p.op_type == "ArgMin" || p.op_type == "NonZero")
      return DType::kI64;
    if (p.op_type == "TopK" && p.outputs.size() > 1 && p.outputs[1] == v) return DType::kI64;
    // Views, copies and joins keep their data's dtype (index tuples
    // unsqueezed and concatenated before a GatherND); Where its branches'.
    static const std::set<std::string> kKeep = {"Unsqueeze",      "Squeeze", "Reshape",   "Flatten",
                                                "Identity",       "Concat",  "Transpose", "Expand",
                                                "Slice",          "Split",   "Gather",    "Clip",
                                                "GatherElements", "CumSum",  "Tile",      "Pad"};
    if (kKeep.count(p.op_type) && !p.inputs.empty()) return known_dtype(g, p.inputs[0]);
    if (p.op_type == "Where" && p.inputs.size() == 3) {
      const DType t = known_dtype(g, p.inputs[1]);
      return t != DType::kUndefined ? t : known_dtype(g, p.inputs[2]);
    }
    if (p.op_type == "OneHot" && p.inputs.size() == 3) return known_dtype(g, p.inputs[2]);
    if (p.op_type == "Cast") {
      Result<DType> to = eval::dtype_from_onnx(ops::cast_to(p));
      if (to) return *to;
    }
  }
  return DType::kUndefined;
}

bool gathers_on_device(const Graph& g, const Node& n) {
  return n.op_type == "Gather" && n.inputs.size() == 2 && n.inputs[1] >= 0 &&
         !host_eval::host_value(g, n.inputs[1], host_eval::Policy::kAnyDtype);
}

bool clips_on_device(const Graph& g, const Node& n) {
  if (n.op_type != "Clip" || g.opset() < 11 || n.inputs.empty()) return false;
  const DType t = known_dtype(g, n.inputs[0]);
  return t == DType::kI64 || t == DType::kI32 || eltwise_expr(g, n, {"x"}).empty();
}

Result<Unit> create_int_op(const BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  const Node node = n;  // the planners keep their own copy
  Planner p;
  if (gathers_on_device(g, n)) {
    u.inputs = {n.inputs[0], n.inputs[1]};
    const DType data = moved_dtype(g, n.inputs[0]), t = known_dtype(g, n.inputs[1]);
    p = [node, data, t](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_gather_rows(node, data, t, in);
    };
  } else if (n.op_type == "Cast") {
    u.inputs = {n.inputs[0]};
    const DType from = moved_dtype(g, n.inputs[0]);
    HONE_TRY(const DType to, eval::dtype_from_onnx(ops::cast_to(n)));
    p = [from, to](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_cast(from, to, in);
    };
  } else if (clips_on_device(g, n)) {
    const DType t = moved_dtype(g, n.inputs[0]);
    int have = 0;
    u.inputs = {n.inputs[0], n.inputs[0], n.inputs[0]};  // a missing bound: x, never read
    for (size_t i = 1; i < 3 && i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0) {
        have |= 1 << (i - 1);
        u.inputs[i] = n.inputs[i];
      }
    p = [t, have](const std::vector<dims_t>& in, const PlanEnv&) { return plan_clip(t, have, in); };
  } else {
    return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
