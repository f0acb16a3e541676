// hone's own steps in a oneDNN block, for what oneDNN 2.6 has no primitive
// for: a Gather whose indices are read at run time (the embedding lookup of a
// text model's token ids), Where (a masked fill of attention scores), and
// Cast between f32, i64, i32 and bool (an attention mask made f32). Each is
// a loop over the plain bytes of the block's buffers, run in order with the
// primitives (plan.cpp: Step::own), so the block stays whole instead of
// handing these nodes to the reference between oneDNN blocks. Values that
// are not f32 (ids, masks) live in the block as plain bytes (bytes_md) and
// only these steps and the views of Reshape/Squeeze/Unsqueeze touch them.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/onednn/plan.h"
#include "eval/kernel_util.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"

namespace hone::onednn {
namespace {

/// `v`'s name in messages.
std::string g_name(const PlanBuilder& b, ValueId v) {
  return "'" + b.graph().value(v).name + "'";
}

bool castable(DType t) {
  return t == DType::kF32 || t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

// --- Gather ------------------------------------------------------------------

template <class I>
Result<void> gather_rows(const std::string& node, const dims_t& in, int64_t axis,
                         const std::byte* data, const I* idx, int64_t count, std::byte* out,
                         size_t elem) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < in.size(); ++d) inner *= in[d];
  const int64_t dim = in[static_cast<size_t>(axis)];
  for (int64_t j = 0; j < count; ++j)  // every index checked before any is used
    if (const auto i = static_cast<int64_t>(idx[j]); i < -dim || i >= dim)
      return fail(ErrorCode::kInvalidArgument,
                  "Gather " + node + ": index " + std::to_string(i) + " (position " +
                      std::to_string(j) + " of the indices) is out of range for axis " +
                      std::to_string(axis) + " of " + shape_to_string(in));
  const size_t row = static_cast<size_t>(inner) * elem;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      auto i = static_cast<int64_t>(idx[j]);
      if (i < 0) i += dim;
      std::memcpy(out + static_cast<size_t>(o * count + j) * row,
                  data + static_cast<size_t>(o * dim + i) * row, row);
    }
  return {};
}

// --- Where -------------------------------------------------------------------

/// Where's output over its operands' broadcast strides.
struct WhereShape {
  dims_t out;
  std::array<std::vector<int64_t>, 3> strides;  // condition, x, y: per output axis, in elements
};

/// One output row of `n` elements, each operand read with the step 0 (a
/// broadcast) or 1 its template argument says: a loop the compiler
/// vectorizes, where the general one reloads three strides an element
/// (DeBERTa's mask, [1,4,128,128] from [1,1,128,128]: 0.2 ms a Where).
template <int Sc, int Sx, int Sy, class T>
void where_row(int64_t n, const uint8_t* c, const T* x, const T* y, T* o) {
  for (int64_t k = 0; k < n; ++k) o[k] = c[k * Sc] ? x[k * Sx] : y[k * Sy];
}

template <class T>
using WhereRow = void (*)(int64_t, const uint8_t*, const T*, const T*, T*);

template <class T, int Sc, int Sx>
WhereRow<T> where_row_for(int64_t sy) {
  return sy == 0 ? &where_row<Sc, Sx, 0, T> : &where_row<Sc, Sx, 1, T>;
}

template <class T>
void where_loop(const WhereShape& s, const uint8_t* c, const T* x, const T* y, T* o) {
  const size_t rank = s.out.size();
  const auto unit = [&](size_t j) { return rank > 0 && s.strides[j][rank - 1] <= 1; };
  if (rank == 0 || !unit(0) || !unit(1) || !unit(2)) {
    for_each_broadcast(s.out, s.strides, [&](int64_t i, const std::array<int64_t, 3>& p) {
      o[i] = c[p[0]] ? x[p[1]] : y[p[2]];
    });
    return;
  }
  const int64_t sc = s.strides[0][rank - 1], sx = s.strides[1][rank - 1],
                sy = s.strides[2][rank - 1];
  const WhereRow<T> row = sc == 0
                              ? (sx == 0 ? where_row_for<T, 0, 0>(sy) : where_row_for<T, 0, 1>(sy))
                          : sx == 0 ? where_row_for<T, 1, 0>(sy)
                                    : where_row_for<T, 1, 1>(sy);
  const int64_t n = s.out[rank - 1];
  // The rows' starts, by the same odometer over the outer axes: a row of
  // one element each, whose offsets are its row's start.
  dims_t outer(s.out.begin(), s.out.end() - 1);
  outer.push_back(1);
  for_each_broadcast(outer, s.strides, [&](int64_t r, const std::array<int64_t, 3>& p) {
    row(n, c + p[0], x + p[1], y + p[2], o + r * n);
  });
}

// --- Cast --------------------------------------------------------------------

/// One element with the reference's Cast (eval/ops_elementwise_cast.cpp):
/// float -> integer truncates toward zero, NaN gives 0 and values out of
/// range saturate (ONNX leaves both undefined); integer -> integer wraps;
/// anything -> bool is `!= 0` (NaN is true).
template <class S, class D>
D cast_one(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S{0};
  } else if constexpr (std::is_floating_point_v<S> && !std::is_floating_point_v<D>) {
    if (std::isnan(v)) return D{0};
    const double t = std::trunc(static_cast<double>(v));
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::lowest());
    constexpr double hi_excl = static_cast<double>(std::numeric_limits<D>::max()) + 1.0;
    if (t <= lo) return std::numeric_limits<D>::lowest();
    if (t >= hi_excl) return std::numeric_limits<D>::max();
    return static_cast<D>(t);
  } else {
    return static_cast<D>(v);
  }
}

template <class S, class D>
void cast_loop(const void* in, void* out, int64_t count) {
  const S* x = static_cast<const S*>(in);
  D* y = static_cast<D*>(out);
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<S, bool>)  // a byte other than 0 is true
      y[i] = static_cast<D>(reinterpret_cast<const uint8_t*>(x)[i] != 0);
    else
      y[i] = cast_one<S, D>(x[i]);
  }
}

template <class S>
void (*cast_fn_to(DType to))(const void*, void*, int64_t) {
  switch (to) {
    case DType::kF32:
      return cast_loop<S, float>;
    case DType::kI64:
      return cast_loop<S, int64_t>;
    case DType::kI32:
      return cast_loop<S, int32_t>;
    default:
      return cast_loop<S, bool>;
  }
}

/// The loop casting `from` to `to` (both castable()).
void (*cast_fn(DType from, DType to))(const void*, void*, int64_t) {
  switch (from) {
    case DType::kF32:
      return cast_fn_to<float>(to);
    case DType::kI64:
      return cast_fn_to<int64_t>(to);
    case DType::kI32:
      return cast_fn_to<int32_t>(to);
    default:
      return cast_fn_to<bool>(to);
  }
}

/// The dtype of `n`'s output `o` as the graph says, or (a builder-made graph
/// without inferred dtypes) a Cast's target.
DType out_dtype(const Graph& g, const Node& n, ValueId o) {
  if (g.value(o).dtype != DType::kUndefined) return g.value(o).dtype;
  if (n.op_type == "Cast")
    if (auto t = eval::dtype_from_onnx(ops::cast_to(n))) return *t;
  return DType::kUndefined;
}

bool read_at_run_time(const Graph& g, ValueId v, int depth) {
  if (depth > 64) return false;
  for (const Node& n : g.nodes())
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != v) continue;
      const std::string& op = n.op_type;
      if (op == "Shape" || op == "Size" || (op == "Gather" && k == 1)) continue;
      const bool own_or_view =
          op == "Cast" || op == "Where" || op == "Flatten" || op == "Identity" ||
          reads_integers(n, k) ||
          (k == 0 && (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Gather"));
      if (!own_or_view) return false;
      for (ValueId o : n.outputs)
        if (o >= 0 && out_dtype(g, n, o) != DType::kF32 && !read_at_run_time(g, o, depth + 1))
          return false;
    }
  return true;
}

}  // namespace

Result<void> check_f32_reads(const PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Where" || op == "Cast" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Flatten" || op == "Identity")
    return {};
  const size_t reads = op == "Gather" ? 1 : n.inputs.size();  // any indices, f32 data
  for (size_t i = 0; i < reads; ++i)
    if (b.has(n.inputs[i]) && b.value(n.inputs[i]).dtype != DType::kF32)
      return fail(ErrorCode::kUnsupported, n.describe() + " reads " + g_name(b, n.inputs[i]) +
                                               ", a " +
                                               std::string(dtype_name(b.value(n.inputs[i]).dtype)) +
                                               " tensor; oneDNN primitives read f32 only");
  return {};
}

bool read_at_run_time(const Graph& g, ValueId in) {
  return read_at_run_time(g, in, 0);
}

// PlanBuilder's helpers for the steps that read values of any dtype (plan.h).
void PlanBuilder::add_own_step(std::string kind, OwnFn fn,
                               std::vector<std::pair<int, BufferRef>> args) {
  Step s;
  s.kind = std::move(kind);
  s.args = std::move(args);
  s.own = std::move(fn);
  plan_->steps.push_back(std::move(s));
}

DType PlanBuilder::dtype(ValueId v) const {
  if (has(v)) return value(v).dtype;
  const Tensor* t = constant(v);
  return t != nullptr ? t->dtype() : DType::kUndefined;
}

BufferRef PlanBuilder::data(ValueId v) {
  if (has(v)) return value(v).dtype == DType::kF32 ? plain(v) : value(v).ref;
  const Tensor* t = constant(v);  // supports() and lower_all() checked there is one
  const md_t md = t->dtype() == DType::kF32 ? plain_md(t->shape()) : bytes_md(t->nbytes());
  set(v, PValue{t->shape(), {new_constant(t->clone()), md}, t->dtype()});
  return value(v).ref;
}

dims_t value_dims(const PlanBuilder& b, ValueId v) {
  return b.has(v) ? b.value(v).dims : b.constant(v)->shape();
}

BufferRef new_plain_value(PlanBuilder& b, const dims_t& dims, DType dtype) {
  const md_t md =
      dtype == DType::kF32 ? plain_md(dims) : bytes_md(shape_numel(dims) * dtype_size(dtype));
  return BufferRef{b.new_temp(md), md};
}

BufferRef copy_bytes(PlanBuilder& b, const BufferRef& src, size_t nbytes) {
  const md_t md = bytes_md(nbytes);
  const BufferRef dst{b.new_temp(md), md};
  b.add_own_step("copy",
                 [nbytes](void* const* p) -> Result<void> {
                   std::memcpy(p[1], p[0], nbytes);
                   return {};
                 },
                 {{DNNL_ARG_SRC, {src.buffer, md}}, {DNNL_ARG_DST, dst}});
  return dst;
}

Result<void> lower_gather_at_run_time(PlanBuilder& b, const Node& n) {
  const dims_t in = value_dims(b, n.inputs[0]);
  const dims_t idx = value_dims(b, n.inputs[1]);
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(in.size()), "Gather axis"));
  const DType data_t = b.dtype(n.inputs[0]), index_t = b.dtype(n.inputs[1]);
  if (index_t != DType::kI64 && index_t != DType::kI32)
    return fail(ErrorCode::kUnsupported,
                "Gather indices are " + std::string(dtype_name(index_t)) + "; i64 or i32 only");
  if (!castable(data_t))
    return fail(ErrorCode::kUnsupported, "Gather of " + std::string(dtype_name(data_t)) + " data");
  dims_t out(in.begin(), in.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), in.begin() + axis + 1, in.end());
  if (shape_numel(out) == 0) return fail(ErrorCode::kUnsupported, "Gather with an empty result");
  const BufferRef data = b.data(n.inputs[0]), indices = b.data(n.inputs[1]);
  const BufferRef dst = new_plain_value(b, out, data_t);
  const std::string node = n.describe();
  const int64_t count = shape_numel(idx);
  const size_t elem = dtype_size(data_t);
  OwnFn fn;
  if (index_t == DType::kI64)
    fn = [=](void* const* p) {
      return gather_rows(node, in, axis, static_cast<const std::byte*>(p[0]),
                         static_cast<const int64_t*>(p[1]), count, static_cast<std::byte*>(p[2]),
                         elem);
    };
  else
    fn = [=](void* const* p) {
      return gather_rows(node, in, axis, static_cast<const std::byte*>(p[0]),
                         static_cast<const int32_t*>(p[1]), count, static_cast<std::byte*>(p[2]),
                         elem);
    };
  b.add_own_step("gather", std::move(fn),
                 {{DNNL_ARG_SRC_0, data}, {DNNL_ARG_SRC_1, indices}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, data_t});
  return {};
}

Result<void> lower_where(PlanBuilder& b, const Node& n) {
  if (n.inputs.size() != 3) return fail(ErrorCode::kInvalidArgument, "Where needs three inputs");
  const DType ct = b.dtype(n.inputs[0]), t = b.dtype(n.inputs[1]);
  if (ct != DType::kBool)
    return fail(ErrorCode::kUnsupported,
                "Where's condition is " + std::string(dtype_name(ct)) + ", not bool");
  if (b.dtype(n.inputs[2]) != t || !castable(t))
    return fail(ErrorCode::kUnsupported, "Where of " + std::string(dtype_name(t)) + " and " +
                                             std::string(dtype_name(b.dtype(n.inputs[2]))));
  const dims_t dc = value_dims(b, n.inputs[0]), dx = value_dims(b, n.inputs[1]),
               dy = value_dims(b, n.inputs[2]);
  HONE_TRY(const dims_t out, ops::broadcast_shapes({dc, dx, dy}));
  if (shape_numel(out) == 0) return fail(ErrorCode::kUnsupported, "Where with an empty result");
  WhereShape s{out,
               {ops::broadcast_strides(dc, out), ops::broadcast_strides(dx, out),
                ops::broadcast_strides(dy, out)}};
  const BufferRef c = b.data(n.inputs[0]), x = b.data(n.inputs[1]), y = b.data(n.inputs[2]);
  const BufferRef dst = new_plain_value(b, out, t);
  OwnFn fn;
  auto typed = [&]<class T>() {
    fn = [s](void* const* p) -> Result<void> {
      where_loop(s, static_cast<const uint8_t*>(p[0]), static_cast<const T*>(p[1]),
                 static_cast<const T*>(p[2]), static_cast<T*>(p[3]));
      return {};
    };
  };
  switch (dtype_size(t)) {  // Where only moves elements: their width is all it needs
    case 1:
      typed.operator()<uint8_t>();
      break;
    case 4:
      typed.operator()<uint32_t>();
      break;
    default:
      typed.operator()<uint64_t>();
  }
  b.add_own_step(
      "where", std::move(fn),
      {{DNNL_ARG_SRC_0, c}, {DNNL_ARG_SRC_1, x}, {DNNL_ARG_SRC_2, y}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

Result<void> lower_cast(PlanBuilder& b, const Node& n) {
  const DType from = b.dtype(n.inputs[0]);
  HONE_TRY(const DType to, eval::dtype_from_onnx(ops::cast_to(n)));
  if (!castable(from) || !castable(to))
    return fail(ErrorCode::kUnsupported, "Cast from " + std::string(dtype_name(from)) + " to " +
                                             std::string(dtype_name(to)) +
                                             " (onednn casts f32, i64, i32 and bool)");
  if (from == to) {  // the same bytes, in whatever layout they are
    if (!b.has(n.inputs[0])) b.data(n.inputs[0]);
    b.set(n.outputs[0], b.value(n.inputs[0]));
    return {};
  }
  const dims_t dims = value_dims(b, n.inputs[0]);
  const BufferRef src = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, dims, to);
  const auto loop = cast_fn(from, to);
  const int64_t count = shape_numel(dims);
  b.add_own_step("cast",
                 [loop, count](void* const* p) -> Result<void> {
                   loop(p[0], p[1], count);
                   return {};
                 },
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{dims, dst, to});
  return {};
}

}  // namespace hone::onednn
