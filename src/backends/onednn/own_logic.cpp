// hone's own steps for masks and index arithmetic (own_logic.h): loops over
// plain buffers in the block, as own_steps.cpp's Where and Cast, so that a
// text model's mask arithmetic, DeBERTa's relative-position gathers, a GCN's
// scatter_add_ and a reflection pad stay inside the oneDNN block instead of
// splitting it around reference nodes.
#include "backends/onednn/own_logic.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/common/host_eval.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/pad.h"

namespace hone::onednn {
namespace {

using node_query::rank_of;

bool is_compare(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
         op == "GreaterOrEqual";
}
bool is_logic(const std::string& op) {
  return op == "And" || op == "Or" || op == "Xor" || op == "Not";
}
bool is_int(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}
/// The dtypes these steps move: f32, i64, i32 and bool (kUndefined: a
/// builder-made graph, checked when the plan is built).
bool movable(DType t) {
  return t == DType::kF32 || is_int(t) || t == DType::kBool || t == DType::kUndefined;
}

const Value* input(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] >= 0 ? &g.value(n.inputs[i]) : nullptr;
}
DType dtype_of(const Graph& g, const Node& n, size_t i) {
  const Value* v = input(g, n, i);
  return v != nullptr ? v->dtype : DType::kUndefined;
}

/// Calls f.template operator()<T>() with T the C++ type of `t` (bool as uint8_t).
template <class F>
auto dispatch(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      return f.template operator()<float>();
    case DType::kI64:
      return f.template operator()<int64_t>();
    case DType::kI32:
      return f.template operator()<int32_t>();
    default:
      return f.template operator()<uint8_t>();
  }
}

Result<DType> same_dtypes(const PlanBuilder& b, const Node& n, size_t count) {
  const DType t = b.dtype(n.inputs[0]);
  for (size_t i = 1; i < count; ++i)
    if (b.dtype(n.inputs[i]) != t)
      return fail(ErrorCode::kUnsupported, n.describe() + " mixes " + std::string(dtype_name(t)) +
                                               " and " +
                                               std::string(dtype_name(b.dtype(n.inputs[i]))));
  if (!movable(t) || t == DType::kUndefined)
    return fail(ErrorCode::kUnsupported,
                n.describe() + " of " + std::string(dtype_name(t)) + " values");
  return t;
}

/// The type integer arithmetic wraps in (float: itself).
template <class T>
struct Wrapping {
  using type = std::make_unsigned_t<T>;
};
template <>
struct Wrapping<float> {
  using type = float;
};

template <class T>
bool compare(char op, T a, T b) {
  switch (op) {
    case '=':
      return a == b;
    case '<':
      return a < b;
    case 'l':
      return a <= b;
    case '>':
      return a > b;
    default:
      return a >= b;
  }
}

/// Comparisons and And/Or/Xor: two broadcast operands, a bool result.
Result<void> lower_binary_bool(PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  HONE_TRY(const DType t, same_dtypes(b, n, 2));
  if (is_logic(op) && t != DType::kBool)
    return fail(ErrorCode::kUnsupported, n.describe() + " of non-bool values");
  const dims_t da = value_dims(b, n.inputs[0]), db = value_dims(b, n.inputs[1]);
  HONE_TRY(const dims_t out, ops::broadcast_shapes({da, db}));
  const std::array<std::vector<int64_t>, 2> strides{ops::broadcast_strides(da, out),
                                                    ops::broadcast_strides(db, out)};
  const char code = op == "Equal"         ? '='
                    : op == "Less"        ? '<'
                    : op == "LessOrEqual" ? 'l'
                    : op == "Greater"     ? '>'
                    : op == "And"         ? '&'
                    : op == "Or"          ? '|'
                    : op == "Xor"         ? '^'
                                          : 'g';
  const BufferRef x = b.data(n.inputs[0]), y = b.data(n.inputs[1]);
  const BufferRef dst = new_plain_value(b, out, DType::kBool);
  OwnFn fn = dispatch(t, [&]<class T>() -> OwnFn {
    return [=](void* const* p) -> Result<void> {
      const T* a = static_cast<const T*>(p[0]);
      const T* c = static_cast<const T*>(p[1]);
      uint8_t* z = static_cast<uint8_t*>(p[2]);
      for_each_broadcast(out, strides, [&](int64_t i, const std::array<int64_t, 2>& o) {
        if constexpr (std::is_same_v<T, uint8_t>) {
          const bool u = a[o[0]] != 0, v = c[o[1]] != 0;
          z[i] = code == '&'   ? u && v
                 : code == '|' ? u || v
                 : code == '^' ? u != v
                               : compare<bool>(code, u, v);
        } else {
          z[i] = compare<T>(code, a[o[0]], c[o[1]]);
        }
      });
      return {};
    };
  });
  b.add_own_step(op == "Equal" || is_logic(op) ? "logic_" + op : "compare_" + op, std::move(fn),
                 {{DNNL_ARG_SRC_0, x}, {DNNL_ARG_SRC_1, y}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, DType::kBool});
  return {};
}

Result<void> lower_not(PlanBuilder& b, const Node& n) {
  if (b.dtype(n.inputs[0]) != DType::kBool)
    return fail(ErrorCode::kUnsupported, n.describe() + " of non-bool values");
  const dims_t dims = value_dims(b, n.inputs[0]);
  const int64_t count = shape_numel(dims);
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, dims, DType::kBool);
  b.add_own_step("logic_Not",
                 [=](void* const* p) -> Result<void> {
                   const uint8_t* a = static_cast<const uint8_t*>(p[0]);
                   uint8_t* z = static_cast<uint8_t*>(p[1]);
                   for (int64_t i = 0; i < count; ++i) z[i] = a[i] == 0;
                   return {};
                 },
                 {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{dims, dst, DType::kBool});
  return {};
}

/// outer x len x inner around `axis` of `dims`.
std::array<int64_t, 3> around(const dims_t& dims, int64_t axis) {
  std::array<int64_t, 3> s{1, dims[static_cast<size_t>(axis)], 1};
  for (size_t d = 0; d < dims.size(); ++d)
    if (static_cast<int64_t>(d) != axis) s[static_cast<int64_t>(d) < axis ? 0 : 2] *= dims[d];
  return s;
}

/// CumSum as the reference: floats summed in double, integers wrapping.
Result<void> lower_cumsum(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]);
  if (t != DType::kF32 && !is_int(t))
    return fail(ErrorCode::kUnsupported, n.describe() + " of " + std::string(dtype_name(t)));
  const Tensor* at = b.constant(n.inputs[1]);
  if (at == nullptr || at->numel() != 1)
    return fail(ErrorCode::kUnsupported, "CumSum's axis is not known when the plan is built");
  const dims_t dims = value_dims(b, n.inputs[0]);
  HONE_TRY(const int64_t axis,
           ops::normalize_axis(tensor_element_as_int64(*at, 0), static_cast<int64_t>(dims.size()),
                               "CumSum axis"));
  const auto [outer, len, inner] = around(dims, axis);
  const bool exclusive = n.attr_int("exclusive", 0) != 0, reverse = n.attr_int("reverse", 0) != 0;
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, dims, t);
  OwnFn fn = dispatch(t, [&]<class T>() -> OwnFn {
    using Acc = std::conditional_t<std::is_same_v<T, float>, double, uint64_t>;
    return [=](void* const* p) -> Result<void> {
      const T* in = static_cast<const T*>(p[0]);
      T* o = static_cast<T*>(p[1]);
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t c = 0; c < inner; ++c) {
          Acc s = 0;
          for (int64_t j = 0; j < len; ++j) {
            const int64_t i = (a * len + (reverse ? len - 1 - j : j)) * inner + c;
            const Acc v = static_cast<Acc>(in[i]);
            if (!exclusive) s += v;
            o[i] = static_cast<T>(s);
            if (exclusive) s += v;
          }
        }
      return {};
    };
  });
  b.add_own_step("cumsum", std::move(fn), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{dims, dst, t});
  return {};
}

/// One output row of an Expand: `n` elements of `elem` bytes, copied from
/// `src` (`whole`) or each the element at `src`.
void expand_row(size_t elem, const std::byte* src, bool whole, int64_t n, std::byte* o) {
  if (whole) {
    std::memcpy(o, src, static_cast<size_t>(n) * elem);
    return;
  }
  auto fill = [&]<class T>() {
    T v;
    std::memcpy(&v, src, sizeof(T));
    std::fill_n(reinterpret_cast<T*>(o), n, v);
  };
  switch (elem) {
    case 1:
      return fill.operator()<uint8_t>();
    case 4:
      return fill.operator()<uint32_t>();
    case 8:
      return fill.operator()<uint64_t>();
    default:
      for (int64_t k = 0; k < n; ++k) std::memcpy(o + static_cast<size_t>(k) * elem, src, elem);
  }
}

/// Expand of integer or bool values: each output element copies its
/// broadcast source.
Result<void> lower_expand_bytes(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]);
  const Tensor* shape = b.constant(n.inputs[1]);
  if (shape == nullptr)
    return fail(ErrorCode::kUnsupported, "Expand's shape is not known when the plan is built");
  dims_t target;
  for (int64_t i = 0; i < shape->numel(); ++i) target.push_back(tensor_element_as_int64(*shape, i));
  const dims_t in = value_dims(b, n.inputs[0]);
  HONE_TRY(const dims_t out, ops::broadcast_shapes({in, target}));
  const std::array<std::vector<int64_t>, 1> strides{ops::broadcast_strides(in, out)};
  const size_t elem = dtype_size(t);
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, t);
  // A row of the output at a time: its source row copied whole, or its one
  // source element repeated (a GAT's [E,1] edge indices expanded to [E,64]
  // for scatter_add_: 0.2 ms an element at a time through memcpy, 80k of them).
  const int64_t row = out.empty() ? 1 : out.back();
  const int64_t last_stride = out.empty() ? 0 : strides[0].back();
  dims_t rows_dims = out;
  if (!rows_dims.empty()) rows_dims.back() = 1;
  std::array<std::vector<int64_t>, 1> row_strides = strides;
  if (!row_strides[0].empty()) row_strides[0].back() = 0;
  b.add_own_step(
      "expand",
      [=](void* const* p) -> Result<void> {
        const auto* src = static_cast<const std::byte*>(p[0]);
        auto* o = static_cast<std::byte*>(p[1]);
        for_each_broadcast(rows_dims, row_strides, [&](int64_t r, const std::array<int64_t, 1>& s) {
          expand_row(elem, src + s[0] * elem, last_stride != 0, row, o + r * row * elem);
        });
        return {};
      },
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

/// Clip of integers by bounds known when the plan is built.
Result<void> lower_clip_int(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]);
  int64_t lo = std::numeric_limits<int64_t>::lowest(), hi = std::numeric_limits<int64_t>::max();
  for (size_t i = 1; i < 3 && i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0) continue;
    const Tensor* v = b.constant(n.inputs[i]);
    if (v == nullptr || v->numel() != 1)
      return fail(ErrorCode::kUnsupported, "Clip's bounds are not scalars known at plan time");
    (i == 1 ? lo : hi) = tensor_element_as_int64(*v, 0);
  }
  const dims_t dims = value_dims(b, n.inputs[0]);
  const int64_t count = shape_numel(dims);
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, dims, t);
  OwnFn fn = dispatch(t, [&]<class T>() -> OwnFn {
    return [=](void* const* p) -> Result<void> {
      const T* in = static_cast<const T*>(p[0]);
      T* o = static_cast<T*>(p[1]);
      for (int64_t i = 0; i < count; ++i)  // min(max(x, lo), hi), as the reference
        o[i] = static_cast<T>(std::min<int64_t>(std::max<int64_t>(in[i], lo), hi));
      return {};
    };
  });
  b.add_own_step("clip_int", std::move(fn), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{dims, dst, t});
  return {};
}

/// The data offset of each index position of GatherElements/ScatterElements
/// along `axis`, the index itself left out: row-major over the indices' dims,
/// the data's strides.
std::vector<int64_t> element_bases(const dims_t& data, const dims_t& idx, int64_t axis) {
  std::vector<int64_t> ds(data.size(), 1);
  for (size_t a = data.size(); a-- > 1;) ds[a - 1] = ds[a] * data[a];
  std::vector<int64_t> bases(static_cast<size_t>(shape_numel(idx)));
  std::vector<int64_t> pos(idx.size(), 0);
  for (auto& base : bases) {
    base = 0;
    for (size_t a = 0; a < idx.size(); ++a)
      if (static_cast<int64_t>(a) != axis) base += pos[a] * ds[a];
    for (size_t a = idx.size(); a-- > 0;) {
      if (++pos[a] < idx[a]) break;
      pos[a] = 0;
    }
  }
  return bases;
}

/// GatherElements (inputs data, indices) and ScatterElements (data,
/// indices, updates; reduction none, add, mul, max or min, applied in the
/// indices' row-major order). Every index is checked before any is used.
Result<void> lower_elements(PlanBuilder& b, const Node& n) {
  const bool scatter = n.op_type == "ScatterElements";
  const DType t = b.dtype(n.inputs[0]), it = b.dtype(n.inputs[1]);
  if (!is_int(it)) return fail(ErrorCode::kUnsupported, n.describe() + ": indices not integers");
  if (scatter && b.dtype(n.inputs[2]) != t)
    return fail(ErrorCode::kUnsupported, n.describe() + ": updates of another dtype");
  const dims_t data = value_dims(b, n.inputs[0]), idx = value_dims(b, n.inputs[1]);
  const auto rank = static_cast<int64_t>(data.size());
  HONE_TRY(const int64_t axis, ops::normalize_axis(ops::axis_attr(n), rank, "axis"));
  if (idx.size() != data.size() || (scatter && value_dims(b, n.inputs[2]) != idx))
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": indices " + shape_to_string(idx) +
                                                 " do not match data " + shape_to_string(data));
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && idx[static_cast<size_t>(a)] > data[static_cast<size_t>(a)])
      return fail(ErrorCode::kInvalidArgument, n.describe() + ": indices " + shape_to_string(idx) +
                                                   " exceed data " + shape_to_string(data));
  std::string reduction = "none";
  if (scatter) {
    auto checked = ops::scatter_reduction(n);
    if (!checked) return fail(std::move(checked).error().add_context("in " + n.describe()));
    reduction = *checked;
  }
  const char red = reduction == "max" ? 'x' : reduction == "min" ? 'i' : reduction[0];
  int64_t stride = 1;
  for (size_t a = static_cast<size_t>(axis) + 1; a < data.size(); ++a) stride *= data[a];
  const int64_t dim = data[static_cast<size_t>(axis)], count = shape_numel(idx),
                total = shape_numel(data);
  const std::vector<int64_t> bases = element_bases(data, idx, axis);
  const std::string name = n.describe();
  std::vector<std::pair<int, BufferRef>> args{{DNNL_ARG_SRC_0, b.data(n.inputs[0])},
                                              {DNNL_ARG_SRC_1, b.data(n.inputs[1])}};
  if (scatter) args.push_back({DNNL_ARG_SRC_2, b.data(n.inputs[2])});
  const dims_t out = scatter ? data : idx;
  const BufferRef dst = new_plain_value(b, out, t);
  args.push_back({DNNL_ARG_DST, dst});
  const bool i64 = it == DType::kI64;
  OwnFn fn = dispatch(t, [&]<class T>() -> OwnFn {
    return [=](void* const* p) -> Result<void> {
      const T* x = static_cast<const T*>(p[0]);
      // Every index checked first, then each read again where it is used: no
      // per-run table of offsets (80k of them in a GAT's scatter_add_, a fresh
      // 640 KB allocation each run).
      auto index = [&](int64_t i) -> int64_t {
        return i64 ? static_cast<const int64_t*>(p[1])[i] : static_cast<const int32_t*>(p[1])[i];
      };
      for (int64_t i = 0; i < count; ++i)
        if (const int64_t k = index(i); k < -dim || k >= dim)
          return fail(ErrorCode::kInvalidArgument, name + ": index " + std::to_string(k) +
                                                       " is out of range [-" + std::to_string(dim) +
                                                       ", " + std::to_string(dim - 1) + "]");
      auto at = [&](int64_t i) -> int64_t {
        const int64_t k = index(i);
        return bases[static_cast<size_t>(i)] + (k < 0 ? k + dim : k) * stride;
      };
      T* o = static_cast<T*>(p[scatter ? 3 : 2]);
      if (!scatter) {
        for (int64_t i = 0; i < count; ++i) o[i] = x[at(i)];
        return {};
      }
      std::copy(x, x + total, o);
      const T* u = static_cast<const T*>(p[2]);
      for (int64_t i = 0; i < count; ++i) {
        T& d = o[at(i)];
        const T v = u[i];
        if constexpr (std::is_same_v<T, uint8_t>) {  // bool: add/max are or, mul/min and
          d = red == 'n' ? v : (red == 'a' || red == 'x') ? (d || v) : (d && v);
        } else {
          using W = typename Wrapping<T>::type;
          d = red == 'n'   ? v
              : red == 'a' ? static_cast<T>(static_cast<W>(d) + static_cast<W>(v))
              : red == 'm' ? static_cast<T>(static_cast<W>(d) * static_cast<W>(v))
              : red == 'x' ? std::max(d, v)
                           : std::min(d, v);
        }
      }
      return {};
    };
  });
  b.add_own_step(scatter ? "scatter_elements" : "gather_elements", std::move(fn), std::move(args));
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

/// One output row of a Pad: `n` elements of `elem` bytes, element k read
/// from `src` at `at[k]` elements.
void pad_row(size_t elem, const std::byte* src, const int64_t* at, int64_t n, std::byte* o) {
  auto typed = [&]<class T>() {
    const T* s = reinterpret_cast<const T*>(src);
    T* d = reinterpret_cast<T*>(o);
    for (int64_t k = 0; k < n; ++k) d[k] = s[at[k]];
  };
  switch (elem) {
    case 1:
      return typed.operator()<uint8_t>();
    case 2:
      return typed.operator()<uint16_t>();
    case 4:
      return typed.operator()<uint32_t>();
    case 8:
      return typed.operator()<uint64_t>();
    default:
      for (int64_t k = 0; k < n; ++k)
        std::memcpy(o + static_cast<size_t>(k) * elem, src + static_cast<size_t>(at[k]) * elem,
                    elem);
  }
}

}  // namespace

Result<void> lower_pad_by_offsets(PlanBuilder& b, const Node& n, const ops::PadWindow& w,
                                  const std::string& mode) {
  const dims_t in = value_dims(b, n.inputs[0]);
  const DType t = b.dtype(n.inputs[0]);
  HONE_TRY(const std::vector<std::vector<int64_t>> offs, ops::pad_source_offsets(in, w, mode));
  const dims_t out = w.out;
  const size_t elem = dtype_size(t);
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, t);
  // Row by row: the outer axes' offsets summed once a row, the last axis's
  // read through its table by the element's width (an element at a time
  // through memcpy and every axis's table took 15 ns an element: a style
  // transfer net's reflect pads, 17 ms of its 25).
  b.add_own_step("pad_" + mode,
                 [=](void* const* p) -> Result<void> {
                   const auto* src = static_cast<const std::byte*>(p[0]);
                   auto* o = static_cast<std::byte*>(p[1]);
                   if (out.empty()) {
                     std::memcpy(o, src, elem);
                     return {};
                   }
                   const size_t r = out.size();
                   const int64_t n = out[r - 1];
                   const int64_t rows = shape_numel(out) / n;
                   const std::vector<int64_t>& last = offs[r - 1];
                   std::vector<int64_t> pos(r - 1, 0);
                   for (int64_t row = 0; row < rows; ++row) {
                     int64_t from = 0;
                     for (size_t a = 0; a + 1 < r; ++a)
                       from += offs[a][static_cast<size_t>(pos[a])];
                     pad_row(elem, src + from * elem, last.data(), n, o + row * n * elem);
                     for (size_t a = r - 1; a-- > 0;) {
                       if (++pos[a] < out[a]) break;
                       pos[a] = 0;
                     }
                   }
                   return {};
                 },
                 {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

bool own_logic_reads_integers(const Node& n, size_t input) {
  const std::string& op = n.op_type;
  if (is_compare(op) || is_logic(op)) return true;
  if (op == "CumSum" || op == "Expand" || op == "Clip") return input == 0;
  if (op == "GatherElements" || op == "ScatterElements") return true;
  return false;
}

std::optional<std::string> own_logic_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  const DType t0 = dtype_of(g, n, 0);
  if (is_compare(op) || (is_logic(op) && op != "Not")) {
    const DType t1 = dtype_of(g, n, 1);
    if (input(g, n, 0) == nullptr || input(g, n, 1) == nullptr) return "needs two inputs";
    if (!movable(t0) || !movable(t1) ||
        (t0 != t1 && t0 != DType::kUndefined && t1 != DType::kUndefined))
      return op + " of " + std::string(dtype_name(t0)) + " and " + std::string(dtype_name(t1));
    return "";
  }
  if (op == "Not") return t0 == DType::kBool || t0 == DType::kUndefined ? "" : "Not of non-bool";
  if (op == "CumSum") {
    if (t0 != DType::kF32 && !is_int(t0) && t0 != DType::kUndefined)
      return "CumSum of " + std::string(dtype_name(t0));
    if (input(g, n, 1) == nullptr || !host_eval::host_value(g, n.inputs[1], kHostPolicy))
      return "the axis is neither a constant nor computed from dims";
    return rank_of(input(g, n, 0)) == 0 ? "a scalar input" : "";
  }
  if ((op == "Expand" || op == "Clip") && (is_int(t0) || (op == "Expand" && t0 == DType::kBool))) {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0 && !host_eval::host_value(g, n.inputs[i], kHostPolicy))
        return op + "'s " + (op == "Expand" ? "shape" : "bounds") +
               " must be constants or computed from dims";
    return "";
  }
  if (op == "GatherElements" || op == "ScatterElements") {
    const DType ti = dtype_of(g, n, 1);
    if (!movable(t0)) return op + " of " + std::string(dtype_name(t0));
    if (!is_int(ti) && ti != DType::kUndefined) return "indices are " + std::string(dtype_name(ti));
    if (rank_of(input(g, n, 0)) == 0) return "a scalar input";
    return "";
  }
  return std::nullopt;
}

bool lowers_own_logic(const PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  if (is_compare(op) || is_logic(op) || op == "CumSum" || op == "GatherElements" ||
      op == "ScatterElements")
    return true;
  const DType t = b.dtype(n.inputs[0]);
  return (op == "Expand" && (is_int(t) || t == DType::kBool)) || (op == "Clip" && is_int(t));
}

Result<void> lower_own_logic(PlanBuilder& b, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "Not") return lower_not(b, n);
  if (is_compare(op) || is_logic(op)) return lower_binary_bool(b, n);
  if (op == "CumSum") return lower_cumsum(b, n);
  if (op == "Expand") return lower_expand_bytes(b, n);
  if (op == "Clip") return lower_clip_int(b, n);
  return lower_elements(b, n);
}

}  // namespace hone::onednn
