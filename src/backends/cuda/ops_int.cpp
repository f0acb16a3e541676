// The cuda backend's ops that read integer tensors on the device: a Gather
// whose indices are only known at run time (an embedding lookup of a model's
// token ids), and Cast to f32 from i64, i32, bool or f32 (an attention
// mask's arithmetic). Indices and integer inputs are uploaded as they are (a block
// input's slot has the input's dtype); everything these ops write is f32.
#include <set>

#include "backends/cuda/op.h"
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

Result<OpPlan> plan_gather_rows(const Node& n, DType index_dtype, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  const dims_t& idx = in[1];
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) return fail(ErrorCode::kInvalidArgument, "Gather of a scalar");
  HONE_TRY(const int64_t axis, ops::normalize_axis(ops::axis_attr(n), rank, "Gather axis"));
  HONE_TRY(const int kind, index_kind(index_dtype, "Gather indices"));
  const auto a = static_cast<size_t>(axis);
  dims_t out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  long long outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= x[d];
  for (size_t d = a + 1; d < x.size(); ++d) inner *= x[d];
  const long long count = numel_of(idx), dim = x[a], total = outer * count * inner;
  OpPlan p;
  p.outputs = {out};
  p.kernel = std::string("gather.f32.cuda.indices_") + (kind ? "i64" : "i32");
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

Result<OpPlan> plan_cast(DType from, const std::vector<dims_t>& in) {
  int kind = 0;
  if (from == DType::kI64)
    kind = 1;
  else if (from == DType::kI32)
    kind = 2;
  else if (from == DType::kBool)
    kind = 3;
  else if (from != DType::kF32)
    return fail(ErrorCode::kUnsupported, "Cast from " + std::string(dtype_name(from)) +
                                             " (cuda casts i64, i32, bool and f32)");
  OpPlan p;
  p.outputs = {in[0]};
  p.kernel = std::string("cast.f32.cuda.from_") + std::string(dtype_name(from));
  const long long count = numel_of(in[0]);
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (count == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_cast_to_f32"));
    CUdeviceptr x = b.in[0], y = b.out[0];
    long long n = count;
    int k = kind;
    return launch_1d(c.d, f, c.stream, count, {&x, &y, &n, &k});
  };
  return p;
}

}  // namespace

DType known_dtype(const Graph& g, ValueId v) {
  if (v < 0) return DType::kUndefined;
  const Value& val = g.value(v);
  if (val.dtype != DType::kUndefined) return val.dtype;
  if (val.initializer) return val.initializer->dtype();
  // A graph built without inferred dtypes: a Cast's output has its target's,
  // a comparison's or logic op's is bool, ArgMax's and ArgMin's i64.
  if (val.producer >= 0) {
    const Node& p = g.node(val.producer);
    static const std::set<std::string> kBools = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor"};
    if (p.domain.empty() && kBools.count(p.op_type)) return DType::kBool;
    if (p.domain.empty() && (p.op_type == "ArgMax" || p.op_type == "ArgMin")) return DType::kI64;
    if (p.domain.empty() && p.op_type == "TopK" && p.outputs.size() > 1 && p.outputs[1] == v)
      return DType::kI64;
    // Views and joins keep their data's dtype (index tuples unsqueezed and
    // concatenated before a GatherND).
    static const std::set<std::string> kKeep = {"Unsqueeze", "Squeeze",  "Reshape",
                                                "Flatten",   "Identity", "Concat"};
    if (p.domain.empty() && kKeep.count(p.op_type) && !p.inputs.empty())
      return known_dtype(g, p.inputs[0]);
    if (p.op_type == "Cast" && p.domain.empty()) {
      // ONNX's codes of the dtypes these ops read (TensorProto.DataType).
      const int64_t to = ops::cast_to(p);
      if (to == 1) return DType::kF32;
      if (to == 6) return DType::kI32;
      if (to == 7) return DType::kI64;
    }
  }
  return DType::kUndefined;
}

bool gathers_on_device(const Graph& g, const Node& n) {
  return n.op_type == "Gather" && n.inputs.size() == 2 && n.inputs[1] >= 0 &&
         !host_eval::host_value(g, n.inputs[1], host_eval::Policy::kAnyDtype);
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
    const DType t = known_dtype(g, n.inputs[1]);
    p = [node, t](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_gather_rows(node, t, in);
    };
  } else if (n.op_type == "Cast") {
    if (ops::cast_to(n) != 1)
      return fail(ErrorCode::kUnsupported, "Cast to other than f32 on cuda");
    u.inputs = {n.inputs[0]};
    const DType from = known_dtype(g, n.inputs[0]);
    p = [from](const std::vector<dims_t>& in, const PlanEnv&) { return plan_cast(from, in); };
  } else {
    return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
