// The cuda backend's ArgMax/ArgMin (of f32, i64 or i32; i64 indices), Tile (a strided copy),
// InstanceNormalization, and the ops on bool tensors made at run time: a
// Where whose condition is such a tensor (or whose branches are i64, i32 or
// bool), the comparisons of f32, i64 or i32 values that make one, and
// Not/And/Or/Xor (a bool known when planned, 0/1 floats on the device, read
// as such beside one made at run time). A bool tensor made on the device is
// one byte an element (a block input keeps its bytes); the kernels are in
// kernels/tensor_ops.cu. Resize is in ops_resize.cpp, LSTM and GRU in ops_rnn.cpp.
#include <algorithm>
#include <map>
#include <set>

#include "backends/common/node_query.h"
#include "backends/cuda/op.h"
#include "backends/cuda/resize_geometry.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/grid_sample.h"
#include "ops/roi_align.h"

namespace hone::cuda {

Result<Unit> create_resize(const BlockInfo& b, const Node& n);       // ops_resize.cpp
Result<Unit> create_grid_sample(const BlockInfo& b, const Node& n);  // ops_sample.cpp
Result<Unit> create_roi_align(const BlockInfo& b, const Node& n);    // ops_sample.cpp
Result<Unit> create_rnn(const BlockInfo& b, const Node& n);          // ops_rnn.cpp
std::string rnn_why_not(const Graph& g, const Node& n);              // ops_rnn.cpp
// TopK, GatherND and the Concat of integers (ops_select.cpp).
bool select_op(const Graph& g, const Node& n);
std::string select_why_not(const Graph& g, const Node& n);
Result<Unit> create_select(const BlockInfo& b, const Node& n);
std::string conv_transpose_why_not(const Graph& g, const Node& n);  // ops_conv_transpose.cpp
Result<Unit> create_conv_transpose(const BlockInfo& b, const Node& n);

namespace {

/// Comparison ops and their hone_compare codes; logic ops and hone_logic's.
const std::map<std::string, int>& compare_codes() {
  static const std::map<std::string, int> k = {
      {"Equal", 0}, {"Less", 1}, {"Greater", 2}, {"LessOrEqual", 3}, {"GreaterOrEqual", 4}};
  return k;
}
const std::map<std::string, int>& logic_codes() {
  static const std::map<std::string, int> k = {{"Not", 0}, {"And", 1}, {"Or", 2}, {"Xor", 3}};
  return k;
}

/// Bit i set: input i of `n` (from input `from` on) is a bool known when
/// planned, which the device holds as 0/1 floats (cuda_block.cpp).
int known_bool_operands(const Graph& g, const Node& n, size_t from) {
  int mask = 0;
  for (size_t i = from; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0 && known_dtype(g, n.inputs[i]) == DType::kBool &&
        host_eval::host_value(g, n.inputs[i], host_eval::Policy::kAnyDtype))
      mask |= 1 << i;
  return mask;
}

bool is_f32(DType t) {
  return t == DType::kF32 || t == DType::kUndefined;
}

/// "" when inputs [from, to) of `n` are f32 tensors, else why not.
std::string f32_inputs(const Graph& g, const Node& n, size_t from, size_t to) {
  for (size_t i = from; i < to && i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) return "input " + std::to_string(i) + " is missing";
    if (const DType t = known_dtype(g, n.inputs[i]); !is_f32(t))
      return "input " + std::to_string(i) + " is " + std::string(dtype_name(t)) +
             "; cuda reads f32 here";
  }
  return {};
}

/// "" when output 0 of `n` is `want` (or not inferred), else why not.
std::string output_is(const Graph& g, const Node& n, DType want) {
  if (n.outputs.empty() || n.outputs[0] < 0) return "no output";
  if (node_query::extra_outputs_used(n)) return "more than one output";
  const DType t = g.value(n.outputs[0]).dtype;
  if (t != want && t != DType::kUndefined)
    return "output is " + std::string(dtype_name(t)) + "; cuda makes " +
           std::string(dtype_name(want)) + " here";
  return {};
}

/// ArgMax/ArgMin of f32 (hone_argreduce: NaN as the reference) or of i64
/// and i32 values (hone_argreduce_int: token ids), `t` the input's dtype.
Result<OpPlan> plan_argreduce(const Node& n, DType t, const std::vector<dims_t>& in) {
  const dims_t& x = in[0];
  if (x.empty()) return fail(ErrorCode::kUnsupported, n.op_type + " of a scalar");
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(x.size()), "axis"));
  const auto a = static_cast<size_t>(axis);
  if (x[a] == 0) return fail(ErrorCode::kInvalidArgument, n.op_type + " over an empty axis");
  dims_t out;
  long long outer = 1, inner = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (d < a) outer *= x[d];
    if (d > a) inner *= x[d];
    if (d != a)
      out.push_back(x[d]);
    else if (ra.keepdims)
      out.push_back(1);
  }
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {DType::kI64};
  const int is_min = n.op_type == "ArgMin" ? 1 : 0, last = ra.select_last_index ? 1 : 0;
  const bool integer = t == DType::kI64 || t == DType::kI32;
  if (!integer && !is_f32(t))
    return fail(ErrorCode::kUnsupported, n.op_type + " of " + std::string(dtype_name(t)));
  p.kernel = std::string(is_min ? "argmin" : "argmax") + "." +
             std::string(dtype_name(integer ? t : DType::kF32)) + ".cuda.block_rows";
  const long long r = x[a];
  const int is64 = t == DType::kI64 ? 1 : 0;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (outer * inner == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function(integer ? "hone_argreduce_int" : "hone_argreduce"));
    CUdeviceptr xi = b.in[0], y = b.out[0];
    long long o = outer, rr = r, i = inner;
    int mn = is_min, l = last, w = is64;
    const auto blocks = static_cast<unsigned>(std::min<long long>(outer * inner, 65535));
    if (integer) return launch(c.d, f, c.stream, blocks, 256, {&xi, &y, &o, &rr, &i, &mn, &l, &w});
    return launch(c.d, f, c.stream, blocks, 256, {&xi, &y, &o, &rr, &i, &mn, &l});
  };
  return p;
}

Result<OpPlan> plan_tile(const Node& n, const std::vector<dims_t>& in, const PlanEnv& env) {
  const dims_t& x = in[0];
  HONE_TRY(const std::vector<int64_t> reps, host_eval::ints(n, 1, env, "Tile repeats"));
  if (reps.size() != x.size())
    return fail(ErrorCode::kInvalidArgument, "Tile has " + std::to_string(reps.size()) +
                                                 " repeats for an input of rank " +
                                                 std::to_string(x.size()));
  // The output [r0 * d0, r1 * d1, ...] is, row-major, [r0, d0, r1, d1, ...]:
  // a strided copy reading the input with stride 0 along each repeat.
  dims_t out, dims, src;
  const dims_t xs = strides_of(x);
  for (size_t d = 0; d < x.size(); ++d) {
    if (reps[d] < 0) return fail(ErrorCode::kInvalidArgument, "Tile repeats must be non-negative");
    out.push_back(x[d] * reps[d]);
    if (reps[d] != 1) {
      dims.push_back(reps[d]);
      src.push_back(0);
    }
    if (x[d] != 1) {
      dims.push_back(x[d]);
      src.push_back(xs[d]);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return fail(ErrorCode::kUnsupported,
                "Tile of " + shape_to_string(x) + " needs a copy of rank " +
                    std::to_string(dims.size()) + " (cuda copies up to 6 dims)");
  OpPlan p;
  p.outputs = {out};
  p.kernel = "tile.f32.cuda.strided_copy";
  const dims_t dst = strides_of(dims);
  p.run = [=](const ExecCtx& c, const Bind& b) {
    return strided_copy(c, b.in[0], b.out[0], dims, src, dst);
  };
  return p;
}

Result<OpPlan> plan_instancenorm(const Node& n, const std::vector<dims_t>& in) {
  HONE_TRY(const ops::NormAttrs a, ops::norm_attrs(n));
  const dims_t& x = in[0];
  if (x.size() < 3)
    return fail(ErrorCode::kInvalidArgument, "InstanceNormalization input of rank " +
                                                 std::to_string(x.size()) +
                                                 " (needs N, C and spatial dims)");
  const int64_t channels = x[1];
  for (size_t i = 1; i < 3; ++i)
    if (numel_of(in[i]) != channels)
      return fail(ErrorCode::kInvalidArgument, "InstanceNormalization input " + std::to_string(i) +
                                                   " has " + std::to_string(numel_of(in[i])) +
                                                   " values for " + std::to_string(channels) +
                                                   " channels");
  OpPlan p;
  p.outputs = {x};
  p.kernel = "instancenorm.f32.cuda.block_rows";
  const long long rows = x[0] * channels, r = numel_of(x) / std::max<int64_t>(1, rows);
  const int ch = static_cast<int>(channels);
  const float eps = a.epsilon;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (rows == 0 || r == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function("hone_instancenorm"));
    CUdeviceptr xi = b.in[0], s = b.in[1], bi = b.in[2], y = b.out[0];
    long long ro = rows, rr = r;
    int c_ = ch;
    float e = eps;
    return launch(c.d, f, c.stream, static_cast<unsigned>(std::min<long long>(rows, 65535)), 256,
                  {&xi, &s, &bi, &y, &ro, &rr, &c_, &e});
  };
  return p;
}

}  // namespace

Result<OpPlan> plan_broadcast(const std::vector<dims_t>& in, const char* fn, int code,
                              DType out_dtype, std::string kernel, std::optional<int> extra) {
  dims_t out;
  for (const dims_t& d : in) {
    HONE_TRY(out, broadcast(out, d));
  }
  HONE_TRY(const EwArgs args, ew_args(in, out));
  const long long count = numel_of(out);
  OpPlan p;
  p.outputs = {out};
  p.dtypes = {out_dtype};
  p.kernel = std::move(kernel);
  const std::string name = fn;
  p.run = [=](const ExecCtx& c, const Bind& b) -> Result<void> {
    if (count == 0) return {};
    HONE_TRY(CUfunction f, c.fixed.function(name));
    EwArgs a = args;
    for (size_t k = 0; k < b.in.size(); ++k) a.in[k] = b.in[k];
    CUdeviceptr y = b.out[0];
    long long n_ = count;
    int op = code, x = extra.value_or(0);
    std::vector<void*> params = {&y, &a, &n_};
    if (code >= 0) params.push_back(&op);
    if (extra) params.push_back(&x);
    return launch_1d(c.d, f, c.stream, count, std::move(params));
  };
  return p;
}

bool where_on_device(const Graph& g, const Node& n) {
  return n.op_type == "Where" && n.inputs.size() == 3 && n.inputs[0] >= 0 &&
         !host_eval::host_value(g, n.inputs[0], host_eval::Policy::kAnyDtype);
}

DType where_branch_dtype(const Graph& g, const Node& n) {
  for (size_t i = 1; i < 3 && i < n.inputs.size(); ++i)
    if (const DType t = known_dtype(g, n.inputs[i]); t != DType::kUndefined) return t;
  return DType::kF32;
}

bool tensor_op(const Graph& g, const Node& n) {
  static const std::set<std::string> kOps = {"ArgMax",  "ArgMin", "Tile", "InstanceNormalization",
                                             "Resize",  "LSTM",   "GRU",  "GridSample",
                                             "RoiAlign"};
  const std::string& op = n.op_type;
  // A Where of integer or bool branches runs here whatever its condition;
  // one of f32 branches when its condition is made at run time (else the
  // element-wise chains take it).
  const bool where = op == "Where" && n.inputs.size() == 3 &&
                     (where_on_device(g, n) || where_branch_dtype(g, n) != DType::kF32);
  return kOps.count(op) || compare_codes().count(op) || logic_codes().count(op) || where ||
         select_op(g, n) || op == "ConvTranspose";
}

std::string tensor_op_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "LSTM" || op == "GRU") return rnn_why_not(g, n);
  if (op == "ConvTranspose") return conv_transpose_why_not(g, n);
  if (select_op(g, n)) return select_why_not(g, n);
  if (n.inputs.empty() || n.inputs[0] < 0) return "input 0 is missing";
  if (op == "ArgMax" || op == "ArgMin") {
    if (Result<ops::ReduceAttrs> a = ops::reduce_attrs(n); !a) return a.error().message();
    if (const DType t = known_dtype(g, n.inputs[0]); t != DType::kI64 && t != DType::kI32)
      if (std::string why = f32_inputs(g, n, 0, 1); !why.empty()) return why;
    return output_is(g, n, DType::kI64);
  }
  if (op == "Tile") {
    if (std::string why = f32_inputs(g, n, 0, 1); !why.empty()) return why;
    if (n.inputs.size() < 2 || n.inputs[1] < 0 ||
        !host_eval::host_value(g, n.inputs[1], host_eval::Policy::kAnyDtype))
      return "input 1 (repeats) is neither a constant nor computed from shapes";
    return output_is(g, n, DType::kF32);
  }
  if (op == "InstanceNormalization") {
    if (n.inputs.size() != 3) return "InstanceNormalization with other than 3 inputs";
    if (Result<ops::NormAttrs> a = ops::norm_attrs(n); !a) return a.error().message();
    if (std::string why = f32_inputs(g, n, 0, 3); !why.empty()) return why;
    return output_is(g, n, DType::kF32);
  }
  if (op == "Resize") {
    if (Result<ResizeGeometry> r = resize_modes(n, g.opset()); !r) return r.error().message();
    if (std::string why = f32_inputs(g, n, 0, 1); !why.empty()) return why;
    // roi (used by tf_crop_and_resize only), scales and sizes: read when planned.
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0 && !host_eval::host_value(g, n.inputs[i], host_eval::Policy::kAnyDtype))
        return "input " + std::to_string(i) + " (" +
               (g.opset() < 11 ? "scales"
                : i == 1       ? "roi"
                : i == 2       ? "scales"
                               : "sizes") +
               ") is neither a constant nor computed from shapes";
    return output_is(g, n, DType::kF32);
  }
  if (op == "GridSample") {
    if (Result<ops::GridSampleAttrs> a = ops::grid_sample_attrs(n, g.opset()); !a)
      return a.error().message();
    if (n.inputs.size() != 2) return "GridSample with other than two inputs";
    if (std::string why = f32_inputs(g, n, 0, 2); !why.empty()) return why;
    return output_is(g, n, DType::kF32);
  }
  if (op == "RoiAlign") {
    if (Result<ops::RoiAlignAttrs> a = ops::roi_align_attrs(n, g.opset()); !a)
      return a.error().message();
    if (n.inputs.size() != 3 || n.inputs[2] < 0) return "RoiAlign with other than three inputs";
    if (std::string why = f32_inputs(g, n, 0, 2); !why.empty()) return why;
    if (const DType t = known_dtype(g, n.inputs[2]); t != DType::kI64 && t != DType::kUndefined)
      return "batch_indices are " + dtype_word(t) + "; cuda reads i64 here";
    return output_is(g, n, DType::kF32);
  }
  if (compare_codes().count(op)) {
    if (n.inputs.size() != 2 || n.inputs[1] < 0) return op + " with other than two inputs";
    // Integers compare exactly as i64 (hone_compare_int); f32 as floats.
    const DType a = known_dtype(g, n.inputs[0]), b = known_dtype(g, n.inputs[1]);
    if (a == DType::kI64 || a == DType::kI32 || b == DType::kI64 || b == DType::kI32) {
      if (a != b)
        return op + " of " + dtype_word(a) + " and " + dtype_word(b) + " (ONNX wants one dtype)";
    } else if (std::string why = f32_inputs(g, n, 0, 2); !why.empty()) {
      return why;
    }
    return output_is(g, n, DType::kBool);
  }
  if (const auto it = logic_codes().find(op); it != logic_codes().end()) {
    if (n.inputs.size() != (it->second == 0 ? 1u : 2u)) return op + " with a wrong input count";
    // A bool known when planned (0/1 floats on the device) is read as such
    // beside one made at run time (bool bytes): create_tensor_op's mask.
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] < 0) return "input " + std::to_string(i) + " is missing";
      if (known_dtype(g, n.inputs[i]) != DType::kBool)
        return "input " + std::to_string(i) + " is not a known bool tensor";
    }
    return output_is(g, n, DType::kBool);
  }
  if (op == "Where") {
    if (n.inputs.size() != 3 || n.inputs[1] < 0 || n.inputs[2] < 0)
      return "Where with other than three inputs";
    if (known_dtype(g, n.inputs[0]) != DType::kBool) return "condition is not a known bool tensor";
    const DType t = where_branch_dtype(g, n);
    if (!movable(t)) return "branches are " + dtype_word(t) + " (cuda selects f32, i64, i32, bool)";
    for (size_t i = 1; i < 3; ++i) {
      const DType u = known_dtype(g, n.inputs[i]);
      if (u != t && u != DType::kUndefined)
        return "branches of " + dtype_word(t) + " and " + dtype_word(u);
      if (t == DType::kBool && host_eval::host_value(g, n.inputs[i], host_eval::Policy::kAnyDtype))
        return "branch " + std::to_string(i) +
               " is a bool known when planned (0/1 floats on the device), not bool bytes";
    }
    return output_is(g, n, t);
  }
  return "no cuda kernel for " + op;
}

Result<Unit> create_tensor_op(const BlockInfo& b, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Resize") return create_resize(b, n);
  if (op == "GridSample") return create_grid_sample(b, n);
  if (op == "RoiAlign") return create_roi_align(b, n);
  if (op == "LSTM" || op == "GRU") return create_rnn(b, n);
  if (op == "ConvTranspose") return create_conv_transpose(b, n);
  if (select_op(b.g, n)) return create_select(b, n);
  Unit u;
  u.label = n.describe();
  u.outputs = {n.outputs[0]};
  const Node node = n;  // the planners keep their own copy
  Planner p;
  if (op == "ArgMax" || op == "ArgMin") {
    u.inputs = {n.inputs[0]};
    const DType t = known_dtype(b.g, n.inputs[0]);
    p = [node, t](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_argreduce(node, t, in);
    };
  } else if (op == "Tile") {
    u.inputs = {n.inputs[0]};  // repeats are read when planning
    p = [node](const std::vector<dims_t>& in, const PlanEnv& env) {
      return plan_tile(node, in, env);
    };
  } else if (op == "InstanceNormalization") {
    u.inputs = {n.inputs[0], n.inputs[1], n.inputs[2]};
    p = [node](const std::vector<dims_t>& in, const PlanEnv&) {
      return plan_instancenorm(node, in);
    };
  } else if (const auto c = compare_codes().find(op); c != compare_codes().end()) {
    u.inputs = n.inputs;
    const int code = c->second;
    const DType t = moved_dtype(b.g, n.inputs[0]);
    const bool integer = t == DType::kI64 || t == DType::kI32;
    p = [code, op, t, integer](const std::vector<dims_t>& in, const PlanEnv&) {
      std::string lower = op;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (integer)
        return plan_broadcast(in, "hone_compare_int", code, DType::kBool,
                              lower + "." + dtype_word(t) + ".cuda.bool", t == DType::kI64 ? 1 : 0);
      return plan_broadcast(in, "hone_compare", code, DType::kBool, lower + ".f32.cuda.bool");
    };
  } else if (const auto l = logic_codes().find(op); l != logic_codes().end()) {
    u.inputs = n.inputs;
    const int code = l->second;
    const int floats = known_bool_operands(b.g, n, 0);
    p = [code, op, floats](const std::vector<dims_t>& in, const PlanEnv&) {
      std::string lower = op;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      return plan_broadcast(in, "hone_logic", code, DType::kBool,
                            lower + ".bool.cuda" + (floats ? ".known_operand" : ""), floats);
    };
  } else if (op == "Where") {
    u.inputs = n.inputs;
    const DType t = where_branch_dtype(b.g, n);
    const int floats = known_bool_operands(b.g, n, 0) & 1;
    if (t == DType::kF32 && floats == 0) {
      p = [](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_broadcast(in, "hone_where_bytes", -1, DType::kF32,
                              "where.f32.cuda.bool_condition");
      };
    } else {
      const std::string kernel =
          "where." + dtype_word(t) + ".cuda." + (floats ? "known_condition" : "bool_condition");
      const int bytes = static_cast<int>(dtype_size(t));
      p = [t, floats, kernel, bytes](const std::vector<dims_t>& in, const PlanEnv&) {
        return plan_broadcast(in, "hone_where_sized", floats, t, kernel, bytes);
      };
    }
  } else {
    return fail(ErrorCode::kInternal, "cuda: no unit for " + n.describe());
  }
  u.op = std::make_unique<FnOp>(std::move(p));
  return u;
}

}  // namespace hone::cuda
