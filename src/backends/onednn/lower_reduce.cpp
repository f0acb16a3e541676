// The Reduce* family on the onednn backend: axes from the attribute (before
// opset 18; ReduceSum before 13) or from a constant input, keepdims, and
// noop_with_empty_axes (the input itself). oneDNN 2.6's reduction primitive
// computes Sum, Mean, Max, Min, Prod (reduction_mul), L1 and SumSquare (the
// p-th power of the Lp norm with p = 1, 2) and L2 (norm_lp_sum, p = 2), all
// with eps 0; LogSum and LogSumExp, which it has no algorithm for (and
// whose log its eltwise computes only approximately), are hone's own step,
// the reference's formula (ops/reduce.h) in double over the plain buffer.
#include "backends/onednn/lower_reduce.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backends/onednn/impl_name.h"
#include "ops/attrs.h"
#include "ops/reduce.h"

namespace hone::onednn {
namespace {

using algorithm = dnnl::algorithm;
using ops::ReduceKind;

/// The own step: out[i] = the reduction of x at kept[i] + red[r] over r.
void add_own_reduce(PlanBuilder& b, const Node& n, ReduceKind kind, const dims_t& in,
                    const std::vector<bool>& reduced, const dims_t& out) {
  dims_t strides(in.size(), 1), kd, ks, rd, rs;
  for (size_t a = in.size(); a-- > 1;) strides[a - 1] = strides[a] * in[a];
  for (size_t a = 0; a < in.size(); ++a) {
    (reduced[a] ? rd : kd).push_back(in[a]);
    (reduced[a] ? rs : ks).push_back(strides[a]);
  }
  auto kept = std::make_shared<const std::vector<int64_t>>(ops::strided_offsets(kd, ks));
  auto red = std::make_shared<const std::vector<int64_t>>(ops::strided_offsets(rd, rs));
  const BufferRef src = b.plain(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, DType::kF32);
  b.add_own_step("reduce_" + std::string(ops::reduce_name(kind)).substr(6),
                 [=](void* const* p) -> Result<void> {
                   const float* x = static_cast<const float*>(p[0]);
                   float* y = static_cast<float*>(p[1]);
                   const int64_t len = static_cast<int64_t>(red->size());
                   for (size_t i = 0; i < kept->size(); ++i) {
                     const float* base = x + (*kept)[i];
                     y[i] = static_cast<float>(ops::reduce_f64(kind, len, [&](int64_t r) {
                       return static_cast<double>(base[(*red)[static_cast<size_t>(r)]]);
                     }));
                   }
                   return {};
                 },
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, DType::kF32});
}

/// Whether the reduced axes of `in` (those of size 1 aside) are one run, so
/// that the plain input is [outer, rows, inner] reduced over its rows; sets
/// the three extents.
bool one_run(const dims_t& in, const std::vector<bool>& reduced, int64_t& outer, int64_t& rows,
             int64_t& inner) {
  outer = rows = inner = 1;
  int part = 0;  // 0: before the run, 1: in it, 2: after it
  for (size_t a = 0; a < in.size(); ++a) {
    if (in[a] == 1) continue;
    if (reduced[a] && part == 2) return false;
    if (reduced[a]) part = 1;
    if (!reduced[a] && part == 1) part = 2;
    (part == 0 ? outer : part == 1 ? rows : inner) *= in[a];
  }
  return part > 0;
}

/// The own step for Sum, Mean, Max and Min over one run of axes
/// ([outer, rows, inner] -> [outer, inner]), where oneDNN 2.6 has only its
/// reference kernel (a reduction over a middle axis: a sentence embedder's
/// masked mean over the sequence, [1,128,128] -> [1,1,128], took 0.3 ms;
/// this loop, a vectorizable pass over each row, takes a few microseconds).
/// It accumulates in f32, row after row, as oneDNN's kernels do.
void add_row_reduce(PlanBuilder& b, const Node& n, ReduceKind kind, int64_t outer, int64_t rows,
                    int64_t inner, const dims_t& out) {
  const BufferRef src = b.plain(n.inputs[0]);
  const BufferRef dst = new_plain_value(b, out, DType::kF32);
  b.add_own_step("reduce_rows_" + std::string(ops::reduce_name(kind)).substr(6),
                 [=](void* const* p) -> Result<void> {
                   const float* x = static_cast<const float*>(p[0]);
                   float* y = static_cast<float*>(p[1]);
                   for (int64_t o = 0; o < outer; ++o) {
                     const float* xo = x + o * rows * inner;
                     float* yo = y + o * inner;
                     std::copy(xo, xo + inner, yo);
                     for (int64_t r = 1; r < rows; ++r) {
                       const float* xr = xo + r * inner;
                       switch (kind) {
                         case ReduceKind::kMax:
                           for (int64_t i = 0; i < inner; ++i) yo[i] = std::max(yo[i], xr[i]);
                           break;
                         case ReduceKind::kMin:
                           for (int64_t i = 0; i < inner; ++i) yo[i] = std::min(yo[i], xr[i]);
                           break;
                         default:
                           for (int64_t i = 0; i < inner; ++i) yo[i] += xr[i];
                       }
                     }
                     if (kind == ReduceKind::kMean) {
                       const float scale = 1.0f / static_cast<float>(rows);
                       for (int64_t i = 0; i < inner; ++i) yo[i] *= scale;
                     }
                   }
                   return {};
                 },
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  b.set(n.outputs[0], PValue{out, dst, DType::kF32});
}

/// oneDNN's algorithm and p for `kind`; undef for the own step's kinds.
std::pair<algorithm, float> onednn_reduction(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return {algorithm::reduction_sum, 0.0f};
    case ReduceKind::kMean:
      return {algorithm::reduction_mean, 0.0f};
    case ReduceKind::kMax:
      return {algorithm::reduction_max, 0.0f};
    case ReduceKind::kMin:
      return {algorithm::reduction_min, 0.0f};
    case ReduceKind::kProd:
      return {algorithm::reduction_mul, 0.0f};
    case ReduceKind::kL1:
      return {algorithm::reduction_norm_lp_power_p_sum, 1.0f};
    case ReduceKind::kL2:
      return {algorithm::reduction_norm_lp_sum, 2.0f};
    case ReduceKind::kSumSquare:
      return {algorithm::reduction_norm_lp_power_p_sum, 2.0f};
    default:
      return {algorithm::undef, 0.0f};
  }
}

}  // namespace

Result<void> lower_reduce(PlanBuilder& b, const Node& n) {
  const auto kind = ops::reduce_kind(n.op_type);
  if (!kind) return fail(ErrorCode::kInternal, n.op_type + " is not a reduction");
  const dims_t in = b.value(n.inputs[0]).dims;
  HONE_TRY(const ops::ReduceAttrs ra, ops::reduce_attrs(n));
  dims_t axes = ra.axes;
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Tensor* t = b.constant(n.inputs[1]);
    if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
      return fail(ErrorCode::kUnsupported, n.op_type + " needs constant i64 axes");
    axes.clear();
    for (int64_t i = 0; i < t->numel(); ++i) axes.push_back(tensor_element_as_int64(*t, i));
  }
  if (axes.empty() && ra.noop_with_empty_axes) {  // the input, unchanged
    alias(b, n, in);
    return {};
  }
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int64_t a : axes) {
    const int64_t k = a < 0 ? a + static_cast<int64_t>(in.size()) : a;
    if (k < 0 || k >= static_cast<int64_t>(in.size()))
      return fail(ErrorCode::kInvalidArgument, n.op_type + " axis " + std::to_string(a) +
                                                   " is out of range for rank " +
                                                   std::to_string(in.size()));
    reduced[static_cast<size_t>(k)] = true;
  }
  dims_t kept, squeezed;
  for (size_t i = 0; i < in.size(); ++i) {
    kept.push_back(reduced[i] ? 1 : in[i]);
    if (!reduced[i]) squeezed.push_back(in[i]);
  }
  for (int64_t d : in)
    if (d == 0) return fail(ErrorCode::kUnsupported, n.op_type + " of an empty tensor");
  const dims_t out = ra.keepdims ? kept : squeezed;
  const auto [alg, p] = onednn_reduction(*kind);
  if (kept == in && ops::reduce_keeps_single(*kind)) {
    // Every reduced axis has one element: the result is the input (oneDNN
    // refuses a reduction whose source and destination are alike).
    alias(b, n, out);
    return {};
  }
  if (alg == algorithm::undef || kept == in) {
    add_own_reduce(b, n, *kind, in, reduced, out);
    return {};
  }
  const md_t dst = plain_md(kept);
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, plain_md(in), dst, p, 0.0f),
                                     user_scratch(), cpu_engine());
  int64_t outer = 1, rows = 1, inner = 1;
  const bool rows_kind = *kind == ReduceKind::kSum || *kind == ReduceKind::kMean ||
                         *kind == ReduceKind::kMax || *kind == ReduceKind::kMin;
  if (rows_kind && is_ref_impl(pd) && one_run(in, reduced, outer, rows, inner)) {
    add_row_reduce(b, n, *kind, outer, rows, inner, out);
    return {};
  }
  const BufferRef src = b.plain(n.inputs[0]);
  const int buf = b.new_temp(dst);
  b.add_step("reduction", dnnl::reduction(pd), pd,
             {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, {buf, dst}}});
  b.set(n.outputs[0], PValue{out, {buf, plain_md(out)}});
  return {};
}

}  // namespace hone::onednn
