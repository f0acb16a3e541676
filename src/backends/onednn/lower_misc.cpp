// Ops oneDNN 2.6 has no primitive for, kept inside a oneDNN block instead of
// splitting it around a reference node: element-wise math (Sin, Cos, the
// inverse and hyperbolic functions, Floor/Ceil/Round, Sign, an exact Log, and
// every formula of ops/unary.h that no eltwise algorithm computes), integer
// Add/Sub/Mul (index arithmetic: a row offset added to an argmax or a topk's
// indices), ArgMax/ArgMin and TopK as hone's own steps over plain buffers,
// and DepthToSpace/SpaceToDepth as one reorder of a strided view. Each own
// step computes as the reference does (eval/): math in double, ties of
// ArgMax and TopK to the lower index, NaN never an ArgMax's pick. GatherND and
// the Concat of integers are own_index.cpp's, reached through lower_misc.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/common/node_query.h"
#include "backends/onednn/own_conv.h"
#include "backends/onednn/own_index.h"
#include "backends/onednn/own_logic.h"
#include "backends/onednn/own_moves.h"
#include "backends/onednn/own_nms.h"
#include "backends/onednn/plan.h"
#include "ops/arg_extreme.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/depth_space.h"
#include "ops/topk.h"
#include "ops/unary.h"

namespace hone::onednn {
namespace {

using memory = dnnl::memory;
using node_query::rank_of;

// --- element-wise math -------------------------------------------------------

struct MathOp {
  const char* op;
  double (*f)(double);
};

/// Rounds half to even, as ONNX's Round.
double round_even(double x) {
  return std::nearbyint(x);
}
double sign(double x) {
  return x > 0 ? 1.0 : x < 0 ? -1.0 : x;  // NaN stays NaN, -0 stays -0
}

constexpr MathOp kMath[] = {
    {"Sin", [](double x) { return std::sin(x); }},
    {"Cos", [](double x) { return std::cos(x); }},
    {"Tan", [](double x) { return std::tan(x); }},
    {"Asin", [](double x) { return std::asin(x); }},
    {"Acos", [](double x) { return std::acos(x); }},
    {"Atan", [](double x) { return std::atan(x); }},
    {"Sinh", [](double x) { return std::sinh(x); }},
    {"Cosh", [](double x) { return std::cosh(x); }},
    {"Asinh", [](double x) { return std::asinh(x); }},
    {"Acosh", [](double x) { return std::acosh(x); }},
    {"Atanh", [](double x) { return std::atanh(x); }},
    {"Floor", [](double x) { return std::floor(x); }},
    {"Ceil", [](double x) { return std::ceil(x); }},
    {"Round", round_even},
    {"Sign", sign},
    {"Log", [](double x) { return std::log(x); }},  // oneDNN's eltwise log is approximate
};

const MathOp* find_math(const std::string& op) {
  for (const MathOp& m : kMath)
    if (op == m.op) return &m;
  return nullptr;
}

/// A unary formula of ops/unary.h that no oneDNN eltwise algorithm computes.
const ops::UnaryFormula* own_formula(const std::string& op) {
  // eltwise_spec() maps these to oneDNN algorithms.
  static const char* const kByOnednn[] = {"Elu", "LeakyRelu", "HardSigmoid", "HardSwish"};
  for (const char* o : kByOnednn)
    if (op == o) return nullptr;
  return ops::find_unary(op);
}

bool is_f32(DType t) {
  return t == DType::kF32 || t == DType::kUndefined;
}
bool is_int(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

const Value* input(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? &g.value(n.inputs[i]) : nullptr;
}

Result<void> lower_math(PlanBuilder& b, const Node& n) {
  double (*f)(double) = nullptr;
  const ops::UnaryFormula* formula = nullptr;
  ops::UnaryParams p;
  if (const MathOp* m = find_math(n.op_type)) {
    f = m->f;
  } else {
    formula = own_formula(n.op_type);
    HONE_TRY(p, ops::unary_params(n, *formula));
  }
  const dims_t dims = value_dims(b, n.inputs[0]);
  const BufferRef src = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, dims, DType::kF32);
  const int64_t count = shape_numel(dims);
  b.add_own_step("math",
                 [=](void* const* ptr) -> Result<void> {
                   const float* x = static_cast<const float*>(ptr[0]);
                   float* y = static_cast<float*>(ptr[1]);
                   if (f != nullptr)
                     for (int64_t i = 0; i < count; ++i) y[i] = static_cast<float>(f(x[i]));
                   else
                     for (int64_t i = 0; i < count; ++i)
                       y[i] = static_cast<float>(formula->eval(x[i], p.a, p.b));
                   return {};
                 },
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{dims, dst, DType::kF32});
  return {};
}

// --- integer arithmetic ------------------------------------------------------

template <class T>
T int_op(char op, T a, T b) {  // wraps as the reference's unsigned arithmetic does
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  return static_cast<T>(op == '+' ? ua + ub : op == '-' ? ua - ub : ua * ub);
}

Result<void> lower_int_binary(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]);
  if (b.dtype(n.inputs[1]) != t)
    return fail(ErrorCode::kUnsupported, n.describe() + " mixes " + std::string(dtype_name(t)) +
                                             " and " +
                                             std::string(dtype_name(b.dtype(n.inputs[1]))));
  const dims_t da = value_dims(b, n.inputs[0]), db = value_dims(b, n.inputs[1]);
  HONE_TRY(const dims_t out, ops::broadcast_shapes({da, db}));
  if (shape_numel(out) == 0) return fail(ErrorCode::kUnsupported, "an empty result");
  const std::array<std::vector<int64_t>, 2> strides{ops::broadcast_strides(da, out),
                                                    ops::broadcast_strides(db, out)};
  const char op = n.op_type == "Add" ? '+' : n.op_type == "Sub" ? '-' : '*';
  const BufferRef a = b.data(n.inputs[0]), c = b.data(n.inputs[1]);
  const BufferRef dst = new_plain_value(b, out, t);
  auto typed = [&]<class T>() -> OwnFn {
    return [=](void* const* ptr) -> Result<void> {
      const T* x = static_cast<const T*>(ptr[0]);
      const T* y = static_cast<const T*>(ptr[1]);
      T* z = static_cast<T*>(ptr[2]);
      for_each_broadcast(out, strides, [&](int64_t i, const std::array<int64_t, 2>& o) {
        z[i] = int_op<T>(op, x[o[0]], y[o[1]]);
      });
      return {};
    };
  };
  OwnFn fn = t == DType::kI64 ? typed.operator()<int64_t>() : typed.operator()<int32_t>();
  b.add_own_step("int_" + n.op_type, std::move(fn),
                 {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, c}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

// --- ArgMax / ArgMin, TopK ---------------------------------------------------

/// outer x len x inner around `axis` of `dims`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit split_at(const dims_t& dims, int64_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < dims.size(); ++d)
    (static_cast<int64_t>(d) < axis    ? s.outer
     : static_cast<int64_t>(d) == axis ? s.len
                                       : s.inner) *= dims[d];
  return s;
}

Result<void> lower_arg(PlanBuilder& b, const Node& n) {
  const dims_t in = value_dims(b, n.inputs[0]);
  const DType t = b.dtype(n.inputs[0]);
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(in.size()), "axis"));
  const AxisSplit s = split_at(in, axis);
  if (s.len == 0) return fail(ErrorCode::kUnsupported, "over an empty axis");
  dims_t out;
  for (size_t d = 0; d < in.size(); ++d)
    if (static_cast<int64_t>(d) != axis)
      out.push_back(in[d]);
    else if (ra.keepdims)
      out.push_back(1);
  const bool is_max = n.op_type == "ArgMax", last = ra.select_last_index;
  const BufferRef src = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, DType::kI64);
  auto typed = [&]<class T>() -> OwnFn {
    return [=](void* const* p) -> Result<void> {
      ops::arg_extreme_rows(s.outer, s.len, s.inner, is_max, last, static_cast<const T*>(p[0]),
                            static_cast<int64_t*>(p[1]), [](T v) { return v; });
      return {};
    };
  };
  OwnFn fn = t == DType::kI64   ? typed.operator()<int64_t>()
             : t == DType::kI32 ? typed.operator()<int32_t>()
                                : typed.operator()<float>();
  b.add_own_step(n.op_type == "ArgMax" ? "argmax" : "argmin", std::move(fn),
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, DType::kI64});
  return {};
}

Result<void> lower_topk(PlanBuilder& b, const Node& n) {
  const Tensor* kt = n.inputs.size() > 1 ? b.constant(n.inputs[1]) : nullptr;
  if (kt == nullptr || kt->numel() != 1)
    return fail(ErrorCode::kUnsupported, "TopK's K is not known when the plan is built");
  const int64_t k = tensor_element_as_int64(*kt, 0);
  const dims_t in = value_dims(b, n.inputs[0]);
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(in.size()), "axis"));
  const AxisSplit s = split_at(in, axis);
  if (k < 0 || k > s.len)
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": K " + std::to_string(k) +
                                                 " is out of range [0, " + std::to_string(s.len) +
                                                 "] for axis " + std::to_string(axis));
  const bool largest = ops::topk_attrs(n).largest;
  dims_t out = in;
  out[static_cast<size_t>(axis)] = k;
  if (k == 0) {  // min(k, count) of no candidates: empty values, no step (lower_empty.cpp)
    for (size_t i = 0; i < 2 && i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0)
        b.set_empty(n.outputs[i], Tensor::zeros(i == 0 ? DType::kF32 : DType::kI64, out));
    return {};
  }
  const BufferRef src = b.data(n.inputs[0]);
  const BufferRef values = new_plain_value(b, out, DType::kF32);
  const BufferRef indices = new_plain_value(b, out, DType::kI64);
  b.add_own_step("topk",
                 [=](void* const* p) -> Result<void> {
                   const float* x = static_cast<const float*>(p[0]);
                   float* ov = static_cast<float*>(p[1]);
                   int64_t* oi = static_cast<int64_t*>(p[2]);
                   std::vector<int64_t> idx;
                   for (int64_t a = 0; a < s.outer; ++a)
                     for (int64_t c = 0; c < s.inner; ++c) {
                       const float* row = x + a * s.len * s.inner + c;
                       ops::topk_order(
                           s.len, k, largest,
                           [&](int64_t i, int64_t j) {
                             return ops::nan_greater(row[i * s.inner], row[j * s.inner]);
                           },
                           idx);
                       for (int64_t j = 0; j < k; ++j) {
                         const int64_t at = (a * k + j) * s.inner + c;
                         ov[at] = row[idx[static_cast<size_t>(j)] * s.inner];
                         oi[at] = idx[static_cast<size_t>(j)];
                       }
                     }
                   return {};
                 },
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST_0, values}, {DNNL_ARG_DST_1, indices}});
  if (n.outputs.size() > 0 && n.outputs[0] >= 0)
    b.set(n.outputs[0], PValue{out, values, DType::kF32});
  if (n.outputs.size() > 1 && n.outputs[1] >= 0)
    b.set(n.outputs[1], PValue{out, indices, DType::kI64});
  return {};
}

// --- DepthToSpace / SpaceToDepth -----------------------------------------------

/// One reorder: the input read through the permuted strides of
/// ops::depth_space_layout's 6-D split, written plain as the output.
Result<void> lower_depth_space(PlanBuilder& b, const Node& n) {
  HONE_TRY(const ops::DepthSpaceAttrs attrs, ops::depth_space_attrs(n));
  HONE_TRY(const ops::DepthSpaceLayout l,
           ops::depth_space_layout(n.op_type, attrs, b.value(n.inputs[0]).dims));
  const dims_t view = ops::permuted(l.split, l.perm);
  const BufferRef src = b.plain(n.inputs[0]);
  const md_t from(view, memory::data_type::f32, ops::permuted(ops::strides_of(l.split), l.perm));
  const md_t to = plain_md(view);
  dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratch());
  const md_t dst_md = plain_md(l.out);
  const BufferRef dst{b.new_temp(dst_md), dst_md};
  b.add_step("reorder", dnnl::reorder(pd), pd,
             {{DNNL_ARG_FROM, {src.buffer, from}}, {DNNL_ARG_TO, {dst.buffer, to}}});
  b.set(n.outputs[0], PValue{l.out, dst});
  return {};
}

}  // namespace

bool is_misc_op(const std::string& op) {
  return find_math(op) != nullptr || own_formula(op) != nullptr || op == "ArgMax" ||
         op == "ArgMin" || op == "TopK" || op == "DepthToSpace" || op == "SpaceToDepth";
}

bool reads_integers(const Node& n, size_t input) {
  if (n.op_type == "ArgMax" || n.op_type == "ArgMin") return input == 0;
  if (n.op_type == "TopK") return input == 1;  // K, known when the plan is built
  if (n.op_type == "GatherND" || n.op_type == "Concat") return true;  // own_index.cpp, every input
  if (own_logic_reads_integers(n, input)) return true;                // own_logic.cpp
  if (own_moves_reads_integers(n, input)) return true;                // own_moves.cpp
  if (own_nms_reads_integers(n, input)) return true;                  // own_nms.cpp
  return n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul";
}

std::optional<std::string> misc_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  const Value* x = input(g, n, 0);
  if (op == "Add" || op == "Sub" || op == "Mul") {
    // An integer operand beside an integer or a not yet typed one (a builder's
    // graph): lower_misc checks at plan time that both are the same integers.
    const Value* y = input(g, n, 1);
    const DType tx = x ? x->dtype : DType::kUndefined, ty = y ? y->dtype : DType::kUndefined;
    if (!is_int(tx) && !is_int(ty)) return std::nullopt;
    if (x == nullptr || y == nullptr ||
        (tx != ty && tx != DType::kUndefined && ty != DType::kUndefined))
      return "integer " + op + " of " + std::string(dtype_name(tx)) + " and " +
             std::string(dtype_name(ty));
    return "";
  }
  if (!is_misc_op(op)) return std::nullopt;
  if (x == nullptr) return "no input";
  if (op == "ArgMax" || op == "ArgMin") {
    if (!is_f32(x->dtype) && !is_int(x->dtype))
      return "input is " + std::string(dtype_name(x->dtype)) + "; f32, i64 or i32 only";
    return rank_of(x) == 0 ? "a scalar input" : "";
  }
  if (!is_f32(x->dtype)) return "input is " + std::string(dtype_name(x->dtype)) + "; f32 only";
  if (op == "TopK") {
    const Value* k = input(g, n, 1);
    if (k == nullptr || !host_eval::host_value(g, n.inputs[1], kHostPolicy))
      return "K is neither a constant nor computed from dims";
    return rank_of(x) == 0 ? "a scalar input" : "";
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    if (rank_of(x) >= 0 && rank_of(x) != 4) return "rank " + std::to_string(rank_of(x)) + ", not 4";
    const auto a = ops::depth_space_attrs(n);
    return a ? "" : a.error().message();
  }
  if (const ops::UnaryFormula* f = own_formula(op)) {
    const auto p = ops::unary_params(n, *f);
    if (!p) return p.error().message();
  }
  return "";
}

Result<void> lower_misc(PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "GatherND" || op == "GridSample" || op == "RoiAlign" || op == "Concat")
    return lower_own_index(b, n);                                  // own_index.cpp
  if (lowers_own_logic(b, n)) return lower_own_logic(b, n);        // own_logic.cpp
  if (lowers_own_moves(b, n)) return lower_own_moves(b, n);        // own_moves.cpp
  if (lowers_own_nms(n)) return lower_own_nms(b, n);               // own_nms.cpp
  if (lowers_depthwise_3d(b, n)) return lower_depthwise_3d(b, n);  // own_conv.cpp
  if (op == "Add" || op == "Sub" || op == "Mul") return lower_int_binary(b, n);
  if (op == "ArgMax" || op == "ArgMin") return lower_arg(b, n);
  if (op == "TopK") return lower_topk(b, n);
  if (op == "DepthToSpace" || op == "SpaceToDepth") return lower_depth_space(b, n);
  return lower_math(b, n);
}

bool lowers_misc(const PlanBuilder& b, const Node& n) {
  if (lowers_own_index(b, n)) return true;     // own_index.cpp
  if (lowers_own_logic(b, n)) return true;     // own_logic.cpp
  if (lowers_own_moves(b, n)) return true;     // own_moves.cpp
  if (lowers_own_nms(n)) return true;          // own_nms.cpp
  if (lowers_depthwise_3d(b, n)) return true;  // own_conv.cpp
  if (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul")
    return is_int(b.dtype(n.inputs[0]));
  return is_misc_op(n.op_type);
}

}  // namespace hone::onednn
