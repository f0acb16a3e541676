// Transpose, Split and Slice of integer or bool values, OneHot and ScatterND,
// as hone's own steps in a oneDNN block (oneDNN 2.6 has no 64-bit integers,
// no one-hot and no scatter): a Mixtral router's expert mask (one_hot of
// TopK's i64 indices, permuted, the token positions its NonZero finds split
// or sliced into rows and columns) and its index_add_ (the dynamo exporter's
// ScatterND with reduction add) stay in the block. Each moves plain bytes as
// the reference does (eval/): OneHot's indices count from the end when
// negative, and an index outside [-depth, depth) leaves its row at
// off_value; ScatterND checks every index tuple before it writes, then
// applies the updates in the indices' row-major order (duplicate targets
// meet in that order), a negative index counting from the end. NonZero
// writes the coordinates it finds and their count; its block ends there. A
// Slice whose starts, ends or steps are read when it runs (a Loop body's
// x[i:i+1]) copies the window they name and writes its dims after it; its
// block ends there too.
#include "backends/onednn/own_moves.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/host_eval.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/gather.h"
#include "ops/nonzero.h"
#include "ops/run_length.h"
#include "ops/slice.h"
#include "ops/split.h"

namespace hone::onednn {
namespace {

using node_query::val;

bool int_or_bool_value(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

std::string moves_text(DType t) {
  return std::string(dtype_name(t));
}

/// An own step writing `n`'s output of dims `out` (dtype of input 0): each
/// element copies the input element at `base` + its index dotted with
/// `strides` (elements), byte for byte (a Transpose's or a Slice's window).
Result<void> add_strided_copy(PlanBuilder& b, const Node& n, const char* name, const dims_t& out,
                              const std::vector<int64_t>& strides, int64_t base) {
  const DType t = b.dtype(n.inputs[0]);
  const size_t elem = dtype_size(t);
  const std::array<std::vector<int64_t>, 1> view{strides};
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, t);
  b.add_own_step(name,
                 [=](void* const* p) -> Result<void> {
                   const auto* src = static_cast<const std::byte*>(p[0]) + base * elem;
                   auto* o = static_cast<std::byte*>(p[1]);
                   for_each_broadcast(out, view, [&](int64_t i, const std::array<int64_t, 1>& s) {
                     std::memcpy(o + i * elem, src + s[0] * elem, elem);
                   });
                   return {};
                 },
                 {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

/// Transpose of integer or bool values: every output element copies the
/// input element its permuted position names.
Result<void> lower_transpose_bytes(PlanBuilder& b, const Node& n) {
  const dims_t in = value_dims(b, n.inputs[0]);
  HONE_TRY(const std::vector<int64_t> perm,
           ops::transpose_perm(n, static_cast<int64_t>(in.size())));
  dims_t out(in.size()), strides(in.size(), 1), view(in.size());
  for (size_t i = in.size(); i-- > 1;) strides[i - 1] = strides[i] * in[i];
  for (size_t i = 0; i < in.size(); ++i) {
    out[i] = in[static_cast<size_t>(perm[i])];
    view[i] = strides[static_cast<size_t>(perm[i])];
  }
  return add_strided_copy(b, n, "transpose_bytes", out, view, 0);
}

/// Split of integer or bool values (ops::split_parts): one own step per
/// output used, copying its run of each input row.
Result<void> lower_split_bytes(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]);
  const dims_t in = value_dims(b, n.inputs[0]);
  std::optional<std::vector<int64_t>> given;
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* s = b.constant(n.inputs[1]);
    if (s == nullptr || (s->dtype() != DType::kI64 && s->dtype() != DType::kI32))
      return fail(ErrorCode::kUnsupported, "Split sizes are not known when the plan is built");
    given.emplace();
    for (int64_t i = 0; i < s->numel(); ++i) given->push_back(tensor_element_as_int64(*s, i));
  }
  HONE_TRY(const ops::SplitParts parts,
           ops::split_parts(n, in, n.outputs.size(), given ? &*given : nullptr));
  const size_t elem = dtype_size(t);
  const BufferRef x = b.data(n.inputs[0]);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k] < 0) continue;
    const dims_t out = parts.outs[k];
    if (shape_numel(out) == 0) return fail(ErrorCode::kUnsupported, "Split with an empty part");
    const size_t row = static_cast<size_t>(parts.dim * parts.inner) * elem;
    const size_t run = static_cast<size_t>(parts.sizes[k] * parts.inner) * elem;
    const size_t from = static_cast<size_t>(parts.starts[k] * parts.inner) * elem;
    const int64_t outer = parts.outer;
    const BufferRef dst = new_plain_value(b, out, t);
    b.add_own_step("split_bytes",
                   [=](void* const* p) -> Result<void> {
                     const auto* src = static_cast<const std::byte*>(p[0]);
                     auto* o = static_cast<std::byte*>(p[1]);
                     for (int64_t r = 0; r < outer; ++r)
                       std::memcpy(o + static_cast<size_t>(r) * run,
                                   src + static_cast<size_t>(r) * row + from, run);
                     return {};
                   },
                   {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
    b.set(n.outputs[k], PValue{out, dst, t});
  }
  return {};
}

/// OneHot: the output filled with off_value, then on_value where each index
/// (read when the block runs) points along `axis`.
Result<void> lower_one_hot(PlanBuilder& b, const Node& n) {
  const DType it = b.dtype(n.inputs[0]);
  if (it != DType::kI64 && it != DType::kI32)
    return fail(ErrorCode::kUnsupported,
                "OneHot indices are " + moves_text(it) + "; i64 or i32 only");
  const Tensor* depth_t = b.constant(n.inputs[1]);
  const Tensor* values = b.constant(n.inputs[2]);
  if (depth_t == nullptr || values == nullptr)
    return fail(ErrorCode::kUnsupported,
                "OneHot's depth and values are not known when the plan is built");
  if (depth_t->numel() != 1 || values->numel() != 2)
    return fail(ErrorCode::kInvalidArgument,
                "OneHot needs one depth and [off_value, on_value], got " + depth_t->describe() +
                    " and " + values->describe());
  if (!is_integer(depth_t->dtype()))
    return fail(ErrorCode::kUnsupported, "OneHot of a " + moves_text(depth_t->dtype()) + " depth");
  const int64_t depth = tensor_element_as_int64(*depth_t, 0);
  if (depth < 1) return fail(ErrorCode::kInvalidArgument, n.describe() + ": depth below 1");
  const DType t = values->dtype();
  if (t != DType::kF32 && !int_or_bool_value(t))
    return fail(ErrorCode::kUnsupported, "OneHot values of " + moves_text(t));
  const dims_t idx = value_dims(b, n.inputs[0]);
  HONE_TRY(
      const int64_t axis,
      ops::normalize_axis(ops::axis_attr(n), static_cast<int64_t>(idx.size()) + 1, "OneHot axis"));
  dims_t out = idx;
  out.insert(out.begin() + axis, depth);
  int64_t inner = 1;
  for (size_t a = static_cast<size_t>(axis); a < idx.size(); ++a) inner *= idx[a];
  const int64_t count = shape_numel(idx), total = shape_numel(out);
  const size_t elem = dtype_size(t);
  std::vector<std::byte> off_on(2 * elem);
  std::memcpy(off_on.data(), values->raw(), 2 * elem);
  const bool i64 = it == DType::kI64;
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, t);
  b.add_own_step("one_hot",
                 [=](void* const* p) -> Result<void> {
                   auto* o = static_cast<std::byte*>(p[1]);
                   for (int64_t i = 0; i < total; ++i)
                     std::memcpy(o + i * elem, off_on.data(), elem);
                   for (int64_t i = 0; i < count; ++i) {
                     int64_t v = i64 ? static_cast<const int64_t*>(p[0])[i]
                                     : static_cast<const int32_t*>(p[0])[i];
                     if (v < 0) v += depth;
                     if (v < 0 || v >= depth) continue;  // out of range: stays off_value
                     const int64_t at = ((i / inner) * depth + v) * inner + i % inner;
                     std::memcpy(o + at * elem, off_on.data() + elem, elem);
                   }
                   return {};
                 },
                 {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, t});
  return {};
}

/// Whether Slice's starts, ends, axes or steps (inputs 1 to 4 from opset 10,
/// attributes before) are given.
bool slice_given(const PlanBuilder& b, const Node& n, size_t input, const char* attr) {
  if (b.graph().opset("") < 10) return n.has_attr(attr);
  return input < n.inputs.size() && n.inputs[input] >= 0;
}

/// Slice of integer or bool values, any steps (ops::slice_window): every
/// output element copies the input element its window names.
Result<void> lower_slice_bytes(PlanBuilder& b, const Node& n) {
  const dims_t in = value_dims(b, n.inputs[0]);
  if (!slice_given(b, n, 1, "starts") || !slice_given(b, n, 2, "ends"))
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": Slice needs starts and ends");
  const bool has_axes = slice_given(b, n, 3, "axes"), has_steps = slice_given(b, n, 4, "steps");
  HONE_TRY(const std::vector<int64_t> starts, slice_param(b, n, 1, "starts"));
  HONE_TRY(const std::vector<int64_t> ends, slice_param(b, n, 2, "ends"));
  std::vector<int64_t> axes, steps;
  if (has_axes) {
    HONE_TRY(axes, slice_param(b, n, 3, "axes"));
  }
  if (has_steps) {
    HONE_TRY(steps, slice_param(b, n, 4, "steps"));
  }
  HONE_TRY(const ops::SliceWindow w, ops::slice_window(in, starts, ends, has_axes ? &axes : nullptr,
                                                       has_steps ? &steps : nullptr));
  if (shape_numel(w.out) == 0) return fail(ErrorCode::kUnsupported, "Slice with an empty result");
  return add_strided_copy(b, n, "slice_bytes", w.out, w.strides, w.base);
}

/// Whether Slice `n` reads a start, end or step the plan does not know (a
/// value the block computes when it runs: a Loop's iteration count).
bool slice_positions_at_run_time(const PlanBuilder& b, const Node& n) {
  if (n.op_type != "Slice" || b.graph().opset("") < 10) return false;
  for (size_t i = 1; i < n.inputs.size() && i < 5; ++i)
    if (n.inputs[i] >= 0 && b.constant(n.inputs[i]) == nullptr) return true;
  return false;
}

/// The `count` integers (i64 or i32) at `p`.
std::vector<int64_t> read_positions(const void* p, int64_t count, bool i64) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] =
        i64 ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
  return v;
}

/// Slice of starts, ends or steps read when the block runs (axes known when
/// the plan is built; data of f32, i64, i32 or bool): the step resolves the
/// window as the reference does (ops::slice_window), copies it into a buffer
/// of the input's element count and writes the output's dims after it; the
/// plan's run hands the output out with those dims (PlanBuilder::
/// set_counted_dims). The partition ends the block here (block_ends_after),
/// so the blocks reading it are planned with the dims it found.
Result<void> lower_slice_at_run_time(PlanBuilder& b, const Node& n) {
  const ValueId y = n.outputs.empty() ? kNoValue : n.outputs[0];
  if (y < 0) return {};
  if (const std::string why = ops::run_length_block_end_why_not(
          b.graph(), n, "a Slice of starts, ends or steps read when it runs");
      !why.empty())
    return fail(ErrorCode::kUnsupported, n.describe() + ": " + why);
  const DType t = b.dtype(n.inputs[0]);
  if (t != DType::kF32 && !int_or_bool_value(t))
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": data of " + moves_text(t) + "; f32, i64, i32 or bool only");
  if (!slice_given(b, n, 1, "starts") || !slice_given(b, n, 2, "ends"))
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": Slice needs starts and ends");
  const dims_t in = value_dims(b, n.inputs[0]);
  if (in.empty()) return fail(ErrorCode::kInvalidArgument, n.describe() + ": Slice of a scalar");
  const bool has_axes = slice_given(b, n, 3, "axes");
  std::vector<int64_t> axes;
  if (has_axes) {
    HONE_TRY(axes, slice_param(b, n, 3, "axes"));
  }
  // starts, ends and steps: buffers the step reads (a plan constant's made now).
  std::vector<std::pair<int, BufferRef>> args{{DNNL_ARG_SRC_0, b.data(n.inputs[0])}};
  std::vector<std::pair<int64_t, bool>> lists;  // each one's length and whether i64
  constexpr std::array<size_t, 3> kInputs{1, 2, 4};
  constexpr std::array<int, 3> kArgs{DNNL_ARG_SRC_1, DNNL_ARG_SRC_2, DNNL_ARG_SRC_3};
  for (size_t k = 0; k < kInputs.size(); ++k) {
    const size_t i = kInputs[k];
    if (i >= n.inputs.size() || n.inputs[i] < 0) continue;
    const DType it = b.dtype(n.inputs[i]);
    if (it != DType::kI64 && it != DType::kI32)
      return fail(ErrorCode::kInvalidArgument, n.describe() + ": input " + std::to_string(i) +
                                                   " is " + moves_text(it) + "; i64 or i32 only");
    lists.emplace_back(shape_numel(value_dims(b, n.inputs[i])), it == DType::kI64);
    args.push_back({kArgs[k], b.data(n.inputs[i])});
  }
  const size_t elem = dtype_size(t), rank = in.size();
  const int64_t numel = shape_numel(in);
  const auto tail = static_cast<int64_t>((rank * sizeof(int64_t) + elem - 1) / elem);
  const dims_t flat{numel + tail};  // the largest window, then the dims the run found
  const BufferRef dst = new_plain_value(b, flat, t);
  args.push_back({DNNL_ARG_DST, dst});
  const std::string name = n.describe();
  b.add_own_step(
      "slice_at_run_time",
      [=](void* const* p) -> Result<void> {
        const std::vector<int64_t> starts = read_positions(p[1], lists[0].first, lists[0].second);
        const std::vector<int64_t> ends = read_positions(p[2], lists[1].first, lists[1].second);
        std::optional<std::vector<int64_t>> steps;
        if (lists.size() > 2) steps = read_positions(p[3], lists[2].first, lists[2].second);
        auto w = ops::slice_window(in, starts, ends, has_axes ? &axes : nullptr,
                                   steps ? &*steps : nullptr);
        if (!w) return fail(std::move(w).error().add_context("in " + name));
        auto* o = static_cast<std::byte*>(p[lists.size() + 1]);
        if (shape_numel(w->out) > 0) {
          const auto* src = static_cast<const std::byte*>(p[0]) + w->base * elem;
          const std::array<std::vector<int64_t>, 1> view{w->strides};
          for_each_broadcast(w->out, view, [&](int64_t i, const std::array<int64_t, 1>& s) {
            std::memcpy(o + i * elem, src + s[0] * elem, elem);
          });
        }
        std::memcpy(o + static_cast<size_t>(numel + tail) * elem - rank * sizeof(int64_t),
                    w->out.data(), rank * sizeof(int64_t));
        return {};
      },
      std::move(args));
  b.set(y, PValue{flat, dst, t});
  b.set_counted_dims(y, rank);
  return {};
}

/// One ScatterND update as the reference combines it (eval/ops_shape_scatter.cpp):
/// integers wrap, bools or (add, max) and and (mul, min), NaN as std::max/min order it.
template <class T>
T scatter_combine(char red, T d, T v) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return red == 'n' ? v : (red == 'a' || red == 'x') ? (d || v) : (d && v);
  } else if constexpr (std::is_same_v<T, float>) {
    return red == 'n'   ? v
           : red == 'a' ? d + v
           : red == 'm' ? d * v
           : red == 'x' ? std::max(d, v)
                        : std::min(d, v);
  } else {
    using U = std::make_unsigned_t<T>;
    return red == 'n'   ? v
           : red == 'a' ? static_cast<T>(static_cast<U>(d) + static_cast<U>(v))
           : red == 'm' ? static_cast<T>(static_cast<U>(d) * static_cast<U>(v))
           : red == 'x' ? std::max(d, v)
                        : std::min(d, v);
  }
}

template <class T>
OwnFn scatter_nd_fn(const std::string& name, const ops::GatherNdLayout& l, int64_t total, char red,
                    bool i64) {
  return [=](void* const* p) -> Result<void> {
    const int64_t rows = l.batch * l.tuples;
    std::vector<int64_t> at(static_cast<size_t>(rows), 0);
    for (int64_t r = 0; r < rows; ++r)  // every index checked before anything is written
      for (int64_t j = 0; j < l.k; ++j) {
        const int64_t e = r * l.k + j, len = l.dims[static_cast<size_t>(j)];
        const int64_t v =
            i64 ? static_cast<const int64_t*>(p[1])[e] : static_cast<const int32_t*>(p[1])[e];
        if (v < -len || v >= len)
          return fail(ErrorCode::kInvalidArgument,
                      name + ": index " + std::to_string(v) + " (element " + std::to_string(e) +
                          " of the indices) is outside [-" + std::to_string(len) + ", " +
                          std::to_string(len) + ") on the data's axis " + std::to_string(j));
        at[static_cast<size_t>(r)] += (v < 0 ? v + len : v) * l.strides[static_cast<size_t>(j)];
      }
    const T* x = static_cast<const T*>(p[0]);
    const T* u = static_cast<const T*>(p[2]);
    T* o = static_cast<T*>(p[3]);
    std::copy(x, x + total, o);
    for (int64_t r = 0; r < rows; ++r) {
      T* d = o + at[static_cast<size_t>(r)];
      const T* s = u + r * l.slice;
      for (int64_t e = 0; e < l.slice; ++e) d[e] = scatter_combine(red, d[e], s[e]);
    }
    return {};
  };
}

/// ScatterND (data, index tuples read when the block runs, updates): the
/// output is a copy of the data with each tuple's slice replaced or reduced.
/// Its layout is GatherND's at batch_dims 0, whose output dims the updates have.
Result<void> lower_scatter_nd(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]), it = b.dtype(n.inputs[1]);
  if (it != DType::kI64 && it != DType::kI32)
    return fail(ErrorCode::kUnsupported, n.describe() + ": indices are " + moves_text(it));
  if (t != DType::kF32 && !int_or_bool_value(t))
    return fail(ErrorCode::kUnsupported, n.describe() + ": data of " + moves_text(t));
  if (b.dtype(n.inputs[2]) != t)
    return fail(ErrorCode::kInvalidArgument, n.describe() + ": updates of " +
                                                 moves_text(b.dtype(n.inputs[2])) + ", data of " +
                                                 moves_text(t));
  auto checked = ops::scatter_reduction(n);
  if (!checked) return fail(std::move(checked).error().add_context("in " + n.describe()));
  const std::string reduction = *checked;
  const dims_t data = value_dims(b, n.inputs[0]), idx = value_dims(b, n.inputs[1]);
  HONE_TRY(const ops::GatherNdLayout l, ops::gather_nd_layout(data, idx, 0));
  if (value_dims(b, n.inputs[2]) != l.out)
    return fail(ErrorCode::kInvalidArgument,
                n.describe() + ": updates " + shape_to_string(value_dims(b, n.inputs[2])) +
                    " must have dims " + shape_to_string(l.out) + " for data " +
                    shape_to_string(data) + " and indices " + shape_to_string(idx));
  const char red = reduction == "max" ? 'x' : reduction == "min" ? 'i' : reduction[0];
  const bool i64 = it == DType::kI64;
  const std::string name = n.describe();
  const int64_t total = shape_numel(data);
  OwnFn fn;
  if (t == DType::kF32) fn = scatter_nd_fn<float>(name, l, total, red, i64);
  if (t == DType::kI64) fn = scatter_nd_fn<int64_t>(name, l, total, red, i64);
  if (t == DType::kI32) fn = scatter_nd_fn<int32_t>(name, l, total, red, i64);
  if (t == DType::kBool) fn = scatter_nd_fn<uint8_t>(name, l, total, red, i64);
  std::vector<std::pair<int, BufferRef>> args{{DNNL_ARG_SRC_0, b.data(n.inputs[0])},
                                              {DNNL_ARG_SRC_1, b.data(n.inputs[1])},
                                              {DNNL_ARG_SRC_2, b.data(n.inputs[2])}};
  const BufferRef dst = new_plain_value(b, data, t);
  args.push_back({DNNL_ARG_DST, dst});
  b.add_own_step("scatter_nd", std::move(fn), std::move(args));
  b.set(n.outputs[0], PValue{data, dst, t});
  return {};
}

template <class T>
OwnFn nonzero_fn(dims_t dims, int64_t capacity) {
  return [dims = std::move(dims), capacity](void* const* p) -> Result<void> {
    const T* x = static_cast<const T*>(p[0]);
    auto* out = static_cast<int64_t*>(p[1]);
    const auto at = [x](int64_t i) { return x[i] != T(0); };
    const int64_t count = ops::nonzero_count(shape_numel(dims), at);
    ops::nonzero_write(dims, count, at, out);
    out[capacity] = count;
    return {};
  };
}

/// NonZero (ops/nonzero.h): the coordinates of the non-zero elements,
/// [rank, count] in row-major order, written at the start of rank * numel + 1
/// i64 whose last holds the count; the plan's run hands the output out as
/// [rank, count] (PlanBuilder::set_counted). The partition ends the block
/// here, so the blocks reading it are planned with that count.
Result<void> lower_nonzero(PlanBuilder& b, const Node& n) {
  const ValueId y = n.outputs.empty() ? kNoValue : n.outputs[0];
  if (y < 0) return {};
  if (const std::string why = ops::run_length_block_end_why_not(b.graph(), n, "NonZero");
      !why.empty())
    return fail(ErrorCode::kUnsupported, n.describe() + ": " + why);
  const DType t = b.dtype(n.inputs[0]);
  const dims_t x = value_dims(b, n.inputs[0]);
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t capacity = rank * shape_numel(x);
  OwnFn fn;
  if (t == DType::kF32) fn = nonzero_fn<float>(x, capacity);
  if (t == DType::kI64) fn = nonzero_fn<int64_t>(x, capacity);
  if (t == DType::kI32) fn = nonzero_fn<int32_t>(x, capacity);
  if (t == DType::kBool) fn = nonzero_fn<uint8_t>(x, capacity);
  if (!fn)
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": input of " + moves_text(t) + "; f32, i64, i32 or bool only");
  const dims_t flat{capacity + 1};
  const BufferRef dst = new_plain_value(b, flat, DType::kI64);
  b.add_own_step("nonzero", std::move(fn),
                 {{DNNL_ARG_SRC, b.data(n.inputs[0])}, {DNNL_ARG_DST, dst}});
  b.set(y, PValue{flat, dst, DType::kI64});
  b.set_counted(y, {rank, 0}, 1);
  return {};
}

}  // namespace

Result<void> unpack_sized(std::vector<Tensor>& outs,
                          const std::vector<std::pair<size_t, size_t>>& sized) {
  for (const auto& [k, rank] : sized) {
    Tensor& t = outs[k];
    const size_t bytes = rank * sizeof(int64_t);
    if (t.nbytes() < bytes)
      return fail(ErrorCode::kInternal, "block output " + std::to_string(k) + ", " + t.describe() +
                                            ", has no room for its " + std::to_string(rank) +
                                            " dims");
    std::vector<int64_t> dims(rank);
    std::memcpy(dims.data(), static_cast<const std::byte*>(t.raw()) + t.nbytes() - bytes, bytes);
    HONE_TRY(t, ops::nonzero_unpacked(t, std::move(dims)));
  }
  return {};
}

Result<std::vector<int64_t>> slice_param(const PlanBuilder& b, const Node& n, size_t input,
                                         const char* attr) {
  if (b.graph().opset("") < 10) return n.attr_ints(attr);
  if (input >= n.inputs.size() || n.inputs[input] < 0) return std::vector<int64_t>{};
  const Tensor* t = b.constant(n.inputs[input]);
  if (t == nullptr || !is_integer(t->dtype()))
    return fail(ErrorCode::kUnsupported,
                std::string("Slice ") + attr + " is not known when the plan is built");
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t->numel(); ++i) v.push_back(tensor_element_as_int64(*t, i));
  return v;
}

bool slice_reads_run_time(const Graph& g, const Node& n) {
  if (n.op_type != "Slice" || !(n.domain.empty() || n.domain == "ai.onnx") || g.opset("") < 10)
    return false;
  for (size_t i = 1; i < n.inputs.size() && i < 5; ++i)
    if (n.inputs[i] >= 0 && !host_eval::host_value(g, n.inputs[i], kHostPolicy)) return true;
  return false;
}

std::string slice_at_run_time_why_not(const Graph& g, const Node& n) {
  const Value* x = val(g, n, 0);
  if (x == nullptr) return "needs data";
  if (x->dtype != DType::kF32 && x->dtype != DType::kUndefined && !int_or_bool_value(x->dtype))
    return "data of " + moves_text(x->dtype) + "; f32, i64, i32 or bool only";
  if (!val(g, n, 1) || !val(g, n, 2)) return "needs starts and ends";
  if (val(g, n, 3) && !host_eval::host_value(g, n.inputs[3], kHostPolicy))
    return "axes must be a constant or computed from dims (starts, ends and steps may be read "
           "when it runs)";
  for (size_t i : {size_t{1}, size_t{2}, size_t{4}})
    if (const Value* v = val(g, n, i); v != nullptr && v->dtype != DType::kI64 &&
                                       v->dtype != DType::kI32 && v->dtype != DType::kUndefined)
      return "input " + std::to_string(i) + " is " + moves_text(v->dtype) + "; i64 or i32 only";
  return "";
}

std::optional<std::string> own_moves_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "NonZero") {
    const Value* x = val(g, n, 0);
    if (x == nullptr) return "needs an input";
    if (x->dtype != DType::kF32 && x->dtype != DType::kUndefined && !int_or_bool_value(x->dtype))
      return "input of " + moves_text(x->dtype) + "; f32, i64, i32 or bool only";
    return "";
  }
  if (op == "OneHot") {
    const Value* idx = val(g, n, 0);
    if (idx == nullptr || !val(g, n, 1) || !val(g, n, 2)) return "needs indices, depth and values";
    if (idx->dtype != DType::kI64 && idx->dtype != DType::kI32 && idx->dtype != DType::kUndefined)
      return "indices are " + moves_text(idx->dtype) + "; i64 or i32 only";
    for (size_t i = 1; i < 3; ++i)
      if (!host_eval::host_value(g, n.inputs[i], kHostPolicy))
        return std::string(i == 1 ? "depth" : "values") +
               " must be a constant or computed from dims";
    return "";
  }
  if (op == "ScatterND") {
    const Value* x = val(g, n, 0);
    const Value* idx = val(g, n, 1);
    const Value* upd = val(g, n, 2);
    if (x == nullptr || idx == nullptr || upd == nullptr) return "needs data, indices and updates";
    if (idx->dtype != DType::kI64 && idx->dtype != DType::kI32 && idx->dtype != DType::kUndefined)
      return "indices are " + moves_text(idx->dtype) + "; i64 or i32 only";
    if (x->dtype != DType::kF32 && x->dtype != DType::kUndefined && !int_or_bool_value(x->dtype))
      return "data of " + moves_text(x->dtype) + "; f32, i64, i32 or bool only";
    if (auto r = ops::scatter_reduction(n); !r) return r.error().message();
    return "";
  }
  if (slice_reads_run_time(g, n)) return slice_at_run_time_why_not(g, n);
  if (op != "Transpose" && op != "Split" && op != "Slice") return std::nullopt;
  const Value* x = val(g, n, 0);
  if (x == nullptr || !int_or_bool_value(x->dtype)) return std::nullopt;  // f32: oneDNN's reorders
  if (op == "Split" && n.inputs.size() > 1 && n.inputs[1] >= 0 &&
      !host_eval::host_value(g, n.inputs[1], kHostPolicy))
    return "split sizes must be a constant or computed from dims";
  return "";
}

bool lowers_own_moves(const PlanBuilder& b, const Node& n) {
  if (n.op_type == "OneHot" || n.op_type == "ScatterND" || n.op_type == "NonZero") return true;
  if (slice_positions_at_run_time(b, n)) return true;
  return (n.op_type == "Transpose" || n.op_type == "Split" || n.op_type == "Slice") &&
         int_or_bool_value(b.dtype(n.inputs[0]));
}

bool own_moves_reads_integers(const Node& n, size_t input) {
  if (n.op_type == "ScatterND") return input < 3;  // integer data and updates too
  if (n.op_type == "NonZero") return input == 0;
  // A Slice's starts, ends and steps a block is given: read when it runs
  // (lower_slice_at_run_time), not a plan per value (a Loop's count).
  if (n.op_type == "Slice") return input == 0 || input == 1 || input == 2 || input == 4;
  return (n.op_type == "OneHot" || n.op_type == "Transpose" || n.op_type == "Split" ||
          n.op_type == "Slice") &&
         input == 0;
}

Result<void> lower_own_moves(PlanBuilder& b, const Node& n) {
  if (n.op_type == "OneHot") return lower_one_hot(b, n);
  if (n.op_type == "ScatterND") return lower_scatter_nd(b, n);
  if (n.op_type == "NonZero") return lower_nonzero(b, n);
  if (n.op_type == "Transpose") return lower_transpose_bytes(b, n);
  if (n.op_type == "Slice")
    return slice_positions_at_run_time(b, n) ? lower_slice_at_run_time(b, n)
                                             : lower_slice_bytes(b, n);
  return lower_split_bytes(b, n);
}

}  // namespace hone::onednn
