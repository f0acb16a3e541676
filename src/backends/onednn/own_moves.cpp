// Transpose and Split of integer or bool values, and OneHot, as hone's own
// steps in a oneDNN block (oneDNN 2.6 has no 64-bit integers and no one-hot):
// a Mixtral router's expert mask (one_hot of TopK's i64 indices, permuted,
// the token positions its NonZero finds split into rows and columns) stays
// in the block. Each moves plain bytes as the reference does (eval/):
// OneHot's indices count from the end when negative, and an index outside
// [-depth, depth) leaves its row at off_value.
#include "backends/onednn/own_moves.h"

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/host_eval.h"
#include "backends/common/node_query.h"
#include "ops/attrs.h"
#include "ops/axis.h"
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

/// Transpose of integer or bool values: every output element copies the
/// input element its permuted position names.
Result<void> lower_transpose_bytes(PlanBuilder& b, const Node& n) {
  const DType t = b.dtype(n.inputs[0]);
  const dims_t in = value_dims(b, n.inputs[0]);
  HONE_TRY(const std::vector<int64_t> perm,
           ops::transpose_perm(n, static_cast<int64_t>(in.size())));
  dims_t out(in.size()), strides(in.size(), 1);
  for (size_t i = in.size(); i-- > 1;) strides[i - 1] = strides[i] * in[i];
  std::array<std::vector<int64_t>, 1> view{std::vector<int64_t>(in.size())};
  for (size_t i = 0; i < in.size(); ++i) {
    out[i] = in[static_cast<size_t>(perm[i])];
    view[0][i] = strides[static_cast<size_t>(perm[i])];
  }
  const size_t elem = dtype_size(t);
  const BufferRef x = b.data(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, t);
  b.add_own_step("transpose_bytes",
                 [=](void* const* p) -> Result<void> {
                   const auto* src = static_cast<const std::byte*>(p[0]);
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

}  // namespace

std::optional<std::string> own_moves_why_not(const Graph& g, const Node& n) {
  const std::string& op = n.op_type;
  if (op == "NonZero")
    return "its output's length is the count of non-zero inputs, known only when it has run; "
           "a onednn plan fixes every buffer's dims when it is built (the block ends here and "
           "the next one is planned with that length)";
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
  if (op != "Transpose" && op != "Split") return std::nullopt;
  const Value* x = val(g, n, 0);
  if (x == nullptr || !int_or_bool_value(x->dtype)) return std::nullopt;  // f32: oneDNN's reorders
  if (op == "Split" && n.inputs.size() > 1 && n.inputs[1] >= 0 &&
      !host_eval::host_value(g, n.inputs[1], kHostPolicy))
    return "split sizes must be a constant or computed from dims";
  return "";
}

bool lowers_own_moves(const PlanBuilder& b, const Node& n) {
  if (n.op_type == "OneHot") return true;
  return (n.op_type == "Transpose" || n.op_type == "Split") &&
         int_or_bool_value(b.dtype(n.inputs[0]));
}

bool own_moves_reads_integers(const Node& n, size_t input) {
  return (n.op_type == "OneHot" || n.op_type == "Transpose" || n.op_type == "Split") && input == 0;
}

Result<void> lower_own_moves(PlanBuilder& b, const Node& n) {
  if (n.op_type == "OneHot") return lower_one_hot(b, n);
  if (n.op_type == "Transpose") return lower_transpose_bytes(b, n);
  return lower_split_bytes(b, n);
}

}  // namespace hone::onednn
