// The Reduce* family on the onednn backend: axes from the attribute (before
// opset 18; ReduceSum before 13) or from a constant input, keepdims, and
// noop_with_empty_axes (the input itself). oneDNN 2.6's reduction primitive
// computes Sum, Mean, Max, Min, Prod (reduction_mul), L1 and SumSquare (the
// p-th power of the Lp norm with p = 1, 2) and L2 (norm_lp_sum, p = 2), all
// with eps 0; LogSum and LogSumExp, which it has no algorithm for (and
// whose log its eltwise computes only approximately), are hone's own step,
// the reference's formula (ops/reduce.h) in double over the plain buffer.
#include "backends/onednn/lower_reduce.h"

#include <memory>
#include <string>
#include <vector>

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
  const BufferRef src = b.plain(n.inputs[0]);
  const md_t dst = plain_md(kept);
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src.md, dst, p, 0.0f),
                                     user_scratch(), cpu_engine());
  const int buf = b.new_temp(dst);
  b.add_step("reduction", dnnl::reduction(pd), pd,
             {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, {buf, dst}}});
  b.set(n.outputs[0], PValue{out, {buf, plain_md(out)}});
  return {};
}

}  // namespace hone::onednn
