// Inference BatchNormalization on oneDNN (lower_batchnorm.h).
#include "backends/onednn/lower_batchnorm.h"

#include <cmath>
#include <string>

#include "backends/onednn/impl_name.h"
#include "ops/attrs.h"

namespace hone::onednn {
namespace {

using algorithm = dnnl::algorithm;

BufferRef vector_constant(PlanBuilder& b, ValueId v) {
  const Tensor& t = *b.constant(v);
  return BufferRef{b.new_constant(t), plain_md({t.numel()})};
}

/// Inference BatchNormalization as x * s + t per channel (s = scale /
/// sqrt(var + eps), t = bias - mean * s, computed here), one binary step with
/// an add post-op (and the Relu that alone reads it), in the input's own
/// layout. For a layout on which oneDNN normalizes only by its reference
/// kernel (channels-last [N,W,C] of a 3D input: PatchTST's BatchNorm1d over
/// transposed tokens, 0.15 ms for 19k values); false where the binary step
/// would be a reference kernel too.
bool lower_batchnorm_affine(PlanBuilder& b, const Node& n, float epsilon, const Node* relu) {
  const PValue x = b.value(n.inputs[0]);
  const int64_t c = x.dims[1];
  for (size_t i = 1; i < 5; ++i)
    if (b.constant(n.inputs[i])->dtype() != DType::kF32) return false;
  Tensor scale = Tensor::zeros(DType::kF32, {c}), shift = Tensor::zeros(DType::kF32, {c});
  const float* g = b.constant(n.inputs[1])->data<float>();
  const float* beta = b.constant(n.inputs[2])->data<float>();
  const float* mean = b.constant(n.inputs[3])->data<float>();
  const float* var = b.constant(n.inputs[4])->data<float>();
  for (int64_t i = 0; i < c; ++i) {
    const float s = g[i] / std::sqrt(var[i] + epsilon);
    scale.data<float>()[i] = s;
    shift.data<float>()[i] = beta[i] - mean[i] * s;
  }
  const BufferRef src = usual(b, n.inputs[0]);
  dims_t per_channel(x.dims.size(), 1);
  per_channel[1] = c;
  md_t pm = plain_md(per_channel), xm = src.md;
  if (x.dims.size() == 3 &&
      src.md == md_t(x.dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::acb)) {
    xm = plain_md({x.dims[0] * x.dims[2], c});  // [N,W,C] in memory: rows of C channels
    pm = plain_md({1, c});
  }
  dnnl::post_ops po;
  po.append_binary(algorithm::binary_add, pm);
  if (relu != nullptr) po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr = user_scratch();
  attr.set_post_ops(po);
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm::binary_mul, xm, pm, xm), attr,
                                  cpu_engine());
  if (is_ref_impl(pd)) return false;
  const int out = b.new_temp(src.md);
  b.add_step(
      relu != nullptr ? "batchnorm_affine+eltwise" : "batchnorm_affine", dnnl::binary(pd), pd,
      {{DNNL_ARG_SRC_0, {src.buffer, xm}},
       {DNNL_ARG_SRC_1, {b.new_constant(std::move(scale)), pm}},
       {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, {b.new_constant(std::move(shift)), pm}},
       {DNNL_ARG_DST, {out, xm}}});
  if (relu != nullptr) b.absorb(relu);
  b.set(relu != nullptr ? relu->outputs[0] : n.outputs[0], PValue{x.dims, {out, src.md}});
  return true;
}

}  // namespace

Result<void> lower_batchnorm(PlanBuilder& b, const Node& n) {
  const PValue x = b.value(n.inputs[0]);
  if (x.dims.size() < 2)
    return fail(ErrorCode::kInvalidArgument, "BatchNormalization needs N and C dims");
  for (size_t i = 1; i < 5; ++i)
    if (b.constant(n.inputs[i]) == nullptr || b.constant(n.inputs[i])->numel() != x.dims[1])
      return fail(ErrorCode::kUnsupported,
                  "BatchNormalization parameters must be constants of C elements");
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  HONE_TRY(const ops::BatchNormAttrs ba, ops::batch_norm_attrs(n));
  const auto make = [&](dnnl::normalization_flags f) {
    return dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(kInfer, usual(b, n.inputs[0]).md, ba.epsilon, f),
        user_scratch(), cpu_engine());
  };
  // A Relu that alone reads the result runs in the same pass (oneDNN's
  // fuse_norm_relu): pre-activation nets (DenseNet's BN -> ReLU -> conv, 62
  // of them) otherwise pay a second pass over each normalized tensor.
  const Node* relu = b.sole_consumer(n.outputs[0]);
  if (relu != nullptr && (relu->op_type != "Relu" || relu->outputs.size() != 1)) relu = nullptr;
  dnnl::batch_normalization_forward::primitive_desc pd;
  if (relu != nullptr) {
    pd = make(flags | dnnl::normalization_flags::fuse_norm_relu);
    if (pd.workspace_desc().get_size() > 0) relu = nullptr;  // inference needs none
  }
  if (relu == nullptr) pd = make(flags);
  // "bnorm_ref:any": oneDNN's reference kernel.
  if (is_ref_impl(pd) && lower_batchnorm_affine(b, n, ba.epsilon, relu)) return {};
  BufferRef src = b.ensure(n.inputs[0], pd.src_desc());
  BufferRef out{b.new_temp(pd.dst_desc()), pd.dst_desc()};
  b.add_step(relu != nullptr ? "batchnorm+eltwise" : "batchnorm",
             dnnl::batch_normalization_forward(pd), pd,
             {{DNNL_ARG_SRC, src},
              {DNNL_ARG_SCALE, vector_constant(b, n.inputs[1])},
              {DNNL_ARG_SHIFT, vector_constant(b, n.inputs[2])},
              {DNNL_ARG_MEAN, vector_constant(b, n.inputs[3])},
              {DNNL_ARG_VARIANCE, vector_constant(b, n.inputs[4])},
              {DNNL_ARG_DST, out}});
  if (relu != nullptr) {
    b.absorb(relu);
    b.set(relu->outputs[0], PValue{x.dims, out});
  } else {
    b.set(n.outputs[0], PValue{x.dims, out});
  }
  return {};
}

}  // namespace hone::onednn
