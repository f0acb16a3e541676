// The cuda backend's selecting ops that PyTorch's dynamo exporter writes for
// a point-cloud net's kNN and a text encoder's pooled token: TopK (K known
// when the plan is built; values and i64 indices in ops::topk_order's
// order), GatherND (any batch_dims, i64 or i32 indices read on the device)
// and the Concat of i64, i32 or bool values made at run time (GatherND's index
// tuples), and Add/Sub/Mul of i64 or i32 values (index arithmetic: a row
// offset added to TopK's indices). Their kernels are in kernels/tensor_ops.cu; an integer tensor
// lives on the device with its own bytes (a block input keeps them; an i64
// element is two 4-byte words to the copies).
#include <string>

#include "backends/common/node_query.h"
#include "backends/cuda/op.h"
#include "backends/cuda/storage.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/gather.h"

namespace hone::cuda {
namespace {

/// 4-byte words an element of `t` takes on the device; 0 when these ops do
/// not move `t`.
int64_t words_of(DType t) {
  if (t == DType::kF32 || t == DType::kI32) return 1;
  if (t == DType::kI64) return 2;
  return 0;
}

/// The one dtype of the integer or bool inputs of Concat `n` (i64, i32 or
/// bool), or kUndefined when none is (an f32 Concat: ops_misc.cpp's).
DType integer_concat_dtype(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (const DType t = known_dtype(g, v);
        t == DType::kI64 || t == DType::kI32 || t == DType::kBool)
      return t;
  return DType::kUndefined;
}

/// Concat of bool values: strided copies of their bytes (strided_copy_of).
OpPlan plan_concat_bytes(const std::pair<dims_t, int64_t>& shape, const std::vector<dims_t>& in) {
  const auto axis = static_cast<size_t>(shape.second);
  OpPlan p;
  p.outputs = {shape.first};
  p.dtypes = {DType::kBool};
  p.kernel = "concat.bool.cuda.strided_copy";
  const dims_t dst = strides_of(shape.first);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    int64_t offset = 0;  // in elements, a byte each
    for (size_t k = 0; k < in.size(); ++k) {
      if (numel_of(in[k]) > 0)
        HONE_CHECK_OK(strided_copy_of(c, DType::kBool, b.in[k],
                                      b.out[0] + static_cast<CUdeviceptr>(offset), in[k],
                                      strides_of(in[k]), dst));
      offset += in[k][axis] * dst[axis];
    }
    return {};
  };
  return p;
}

Result<OpPlan> plan_topk(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env,
                         bool values, bool indices) {
  const dims_t& x = in[0];
  if (x.empty()) return fail(ErrorCode::kUnsupported, "TopK of a scalar");
  HONE_TRY(const std::vector<int64_t> ks, host_eval::ints(n, 1, env, "TopK K"));
  if (ks.size() != 1)
    return fail(ErrorCode::kInvalidArgument,
                "TopK's K has " + std::to_string(ks.size()) + " values, not one");
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()), "TopK axis"));
  const auto a = static_cast<size_t>(axis);
  const long long k = ks[0], r = x[a];
  if (k < 0 || k > r)
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": K " + std::to_string(k) +
                                                 " is out of range [0, " + std::to_string(r) +
                                                 "] for axis " + std::to_string(axis));
  long long outer = 1, inner = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (d < a) outer *= x[d];
    if (d > a) inner *= x[d];
  }
  dims_t out = x;
  out[a] = k;
  OpPlan p;
  if (values) {
    p.outputs.push_back(out);
    p.dtypes.push_back(DType::kF32);
  }
  if (indices) {
    p.outputs.push_back(out);
    p.dtypes.push_back(DType::kI64);
  }
  const int largest = ops::topk_attrs(n).largest ? 1 : 0;
  p.kernel = std::string("topk.f32.cuda.rank_") + (largest ? "largest" : "smallest");
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (outer * r * inner == 0 || k == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_topk"));
    CUdeviceptr xi = b.in[0], v = values ? b.out[0] : 0, ix = indices ? b.out[values ? 1 : 0] : 0;
    long long o = outer, rr = r, i = inner, kk = k;
    int l = largest;
    return launch_1d(c.d, f, c.stream, outer * r * inner, {&xi, &v, &ix, &o, &rr, &i, &kk, &l});
  };
  return p;
}

Result<OpPlan> plan_gather_nd(const Node& n, DType data, DType index,
                              const std::vector<dims_t>& in) {
  const int64_t w = words_of(data);
  if (w == 0) return fail(ErrorCode::kUnsupported, "GatherND of " + dtype_word(data) + " data");
  if (index != DType::kI64 && index != DType::kI32)
    return fail(ErrorCode::kUnsupported, "GatherND indices are " + dtype_word(index));
  HONE_TRY(const ops::GatherNdLayout l,
           ops::gather_nd_layout(in[0], in[1], n.attr_int("batch_dims", 0)));
  if (l.k > kMaxRank)
    return fail(ErrorCode::kUnsupported,
                "GatherND tuples of " + std::to_string(l.k) + " indices (cuda reads up to 6)");
  CopyShape s;
  s.rank = static_cast<int32_t>(l.k);
  for (size_t j = 0; j < static_cast<size_t>(l.k); ++j) {
    s.dims[j] = l.dims[j];
    s.src[j] = l.strides[j] * w;
  }
  OpPlan p;
  p.outputs = {l.out};
  p.dtypes = {data};
  const int is64 = index == DType::kI64 ? 1 : 0;
  p.kernel = "gather_nd." + dtype_word(data) + ".cuda.indices_" + dtype_word(index);
  const long long total = l.batch * l.tuples * l.slice * w, tuples = l.tuples, slice = l.slice * w,
                  block = l.batch_block * w;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (total == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_gather_nd"));
    CUdeviceptr x = b.in[0], ii = b.in[1], y = b.out[0];
    long long t = total, tu = tuples, sl = slice, bb = block;
    CopyShape sh = s;
    int i64 = is64;
    CUdeviceptr err = c.errors;
    unsigned long long code = run_error_code(kRunErrorIndex, b.step);
    return launch_1d(c.d, f, c.stream, total,
                     {&x, &ii, &y, &t, &tu, &sl, &bb, &sh, &i64, &err, &code});
  };
  return p;
}

/// Concat of i64 or i32 values: the f32 Concat's strided copies over the
/// elements' 4-byte words (an i64 is an innermost dim of two words); of
/// bools, plan_concat_bytes.
Result<OpPlan> plan_concat_words(const Node& n, DType t, const std::vector<dims_t>& in) {
  HONE_TRY(const auto shape, concat_dims(n, in));
  if (t == DType::kBool) return plan_concat_bytes(shape, in);
  const int64_t w = words_of(t);
  auto widen = [w](dims_t d) {
    if (w > 1) d.push_back(w);
    return d;
  };
  const dims_t out = widen(shape.first);
  if (out.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported, "Concat of rank " + std::to_string(shape.first.size()) +
                                             " " + dtype_word(t) +
                                             " values (cuda copies up to 6 dims)");
  const int64_t axis = shape.second;
  OpPlan p;
  p.outputs = {shape.first};
  p.dtypes = {t};
  p.kernel = "concat." + dtype_word(t) + ".cuda.strided_copy";
  const dims_t dst = strides_of(out);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    int64_t offset = 0;  // in words
    for (size_t k = 0; k < in.size(); ++k) {
      const dims_t d = widen(in[k]);
      if (numel_of(d) > 0)
        HONE_CHECK_OK(strided_copy(c, b.in[k], b.out[0] + static_cast<CUdeviceptr>(offset) * 4, d,
                                   strides_of(d), dst));
      offset += in[k][static_cast<size_t>(axis)] * dst[static_cast<size_t>(axis)];
    }
    return {};
  };
  return p;
}

bool is_int_binary(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul";
}

/// Add/Sub/Mul of two `t` (i64 or i32) operands broadcast to each other.
Result<OpPlan> plan_int_binary(const Node& n, DType t, const std::vector<dims_t>& in) {
  if (in.size() != 2) return fail(ErrorCode::kInvalidArgument, n.op_type + " needs two inputs");
  const int code = n.op_type == "Add" ? 0 : n.op_type == "Sub" ? 1 : 2;
  std::string lower = n.op_type;
  lower[0] = static_cast<char>(lower[0] - 'A' + 'a');
  return plan_broadcast(in, "hone_int_binary", code, t, lower + "." + dtype_word(t) + ".cuda",
                        t == DType::kI64 ? 1 : 0);
}

/// The integer dtype of Add/Sub/Mul `n`'s operands, or kUndefined when
/// neither is a known integer (an f32 one: the element-wise chains').
DType int_binary_dtype(const Graph& g, const Node& n) {
  if (!is_int_binary(n.op_type)) return DType::kUndefined;
  for (ValueId v : n.inputs)
    if (const DType t = known_dtype(g, v); t == DType::kI64 || t == DType::kI32) return t;
  return DType::kUndefined;
}

}  // namespace

bool select_op(const Graph& g, const Node& n) {
  if (n.op_type == "TopK" || n.op_type == "GatherND") return true;
  if (int_binary_dtype(g, n) != DType::kUndefined) return true;
  return n.op_type == "Concat" && integer_concat_dtype(g, n) != DType::kUndefined;
}

std::string select_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (n.inputs.empty() || n.inputs[0] < 0) return "input 0 is missing";
  if (op == "TopK") {
    if (n.inputs.size() < 2 || n.inputs[1] < 0 ||
        !host_eval::host_value(g, n.inputs[1], host_eval::Policy::kAnyDtype))
      return "K is neither a constant nor computed from shapes";
    if (const DType t = known_dtype(g, n.inputs[0]); t != DType::kF32 && t != DType::kUndefined)
      return "input is " + dtype_word(t) + "; cuda's TopK reads f32";
    return {};
  }
  if (op == "GatherND") {
    if (n.inputs.size() < 2 || n.inputs[1] < 0) return "needs data and indices";
    const DType d = known_dtype(g, n.inputs[0]), i = known_dtype(g, n.inputs[1]);
    if (d != DType::kUndefined && words_of(d) == 0)
      return "data is " + dtype_word(d) + " (cuda gathers f32, i64 and i32)";
    if (i != DType::kI64 && i != DType::kI32)
      return "indices are " + dtype_word(i) + "; cuda gathers by i64 or i32";
    if (n.attr_int("batch_dims", 0) < 0) return "a negative batch_dims";
    if (node_query::extra_outputs_used(n)) return "more than one output";
    return {};
  }
  if (is_int_binary(op)) {
    const DType t = int_binary_dtype(g, n);
    if (n.inputs.size() != 2 || n.inputs[1] < 0) return op + " needs two inputs";
    for (size_t i = 0; i < 2; ++i)
      if (const DType u = known_dtype(g, n.inputs[i]); u != t)
        return "integer " + op + " of " + dtype_word(t) + " and " + dtype_word(u);
    return {};
  }
  // Concat of integers or bools: every input of the same dtype.
  const DType t = integer_concat_dtype(g, n);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) return "input " + std::to_string(i) + " is missing";
    if (const DType u = known_dtype(g, n.inputs[i]); u != t)
      return "inputs of " + dtype_word(t) + " and " + dtype_word(u);
  }
  return {};
}

Result<Unit> create_select(const BlockInfo& b, const Node& n) {
  const Graph& g = b.g;
  Unit u;
  u.label = n.describe();
  const Node node = n;  // the planners keep their own copy
  Planner p;
  if (n.op_type == "TopK") {
    u.inputs = {n.inputs[0]};  // K is read when planning
    const bool values = !n.outputs.empty() && n.outputs[0] >= 0;
    const bool indices = n.outputs.size() > 1 && n.outputs[1] >= 0;
    if (values) u.outputs.push_back(n.outputs[0]);
    if (indices) u.outputs.push_back(n.outputs[1]);
    p = [node, values, indices](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_topk(node, in, env, values, indices);
    };
  } else if (n.op_type == "GatherND") {
    u.inputs = {n.inputs[0], n.inputs[1]};
    u.outputs = {n.outputs[0]};
    DType data = known_dtype(g, n.inputs[0]);
    if (data == DType::kUndefined) data = DType::kF32;
    const DType index = known_dtype(g, n.inputs[1]);
    p = [node, data, index](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_gather_nd(node, data, index, in);
    };
  } else if (is_int_binary(n.op_type)) {
    u.inputs = {n.inputs[0], n.inputs[1]};
    u.outputs = {n.outputs[0]};
    const DType t = int_binary_dtype(g, n);
    p = [node, t](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_int_binary(node, t, in);
    };
  } else if (n.op_type == "Concat") {
    u.inputs = n.inputs;
    u.outputs = {n.outputs[0]};
    const DType t = integer_concat_dtype(g, n);
    p = [node, t](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_concat_words(node, t, in);
    };
  } else {
    return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
