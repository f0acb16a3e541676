// Normalizations: BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, RMSNormalization, GroupNormalization, LRN,
// MeanVarianceNormalization, LpNormalization.
// Statistics are accumulated in double, two-pass (mean, then squared
// deviations), and each output is rounded once to its dtype.
#include <algorithm>
#include <cmath>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/attrs.h"

namespace hone::eval::nn {
namespace {

Result<HostVector<double>> channel_param(const KernelContext& ctx, size_t index, int64_t c,
                                         const std::string& what) {
  HONE_TRY(const Tensor* t, ctx.tensor(index));
  if (t->numel() != c || t->rank() > 1)
    return fail(ErrorCode::kInvalidArgument,
                what + " " + t->describe() + " must have shape [" + std::to_string(c) + "]");
  if (!is_floating(t->dtype()))
    return fail(unsupported_dtype(t->dtype(), "a floating-point type").add_context(what));
  return to_doubles(*t);
}

/// Writes doubles into a float tensor of `dtype`.
Result<Tensor> to_tensor(DType dtype, const std::vector<int64_t>& shape,
                         const HostVector<double>& v) {
  if (!is_floating(dtype)) return fail(unsupported_dtype(dtype, "a floating-point type"));
  return from_doubles(dtype, shape, v);
}

Result<void> batch_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const ops::BatchNormAttrs ba, ops::batch_norm_attrs(ctx.node()));
  if (ba.training_mode)
    return fail(
        ErrorCode::kUnsupported,
        "BatchNormalization training_mode=1 is not supported by the reference (inference only)");
  if (ctx.wants_output(1) || ctx.wants_output(2))
    return fail(
        ErrorCode::kUnsupported,
        "BatchNormalization training outputs (running/saved mean and variance) are not supported");
  if (!ba.spatial)
    return fail(ErrorCode::kUnsupported, "BatchNormalization spatial=0 is not supported");
  HONE_CHECK_OK(check_nc_input(*x, 2, "BatchNormalization"));
  const int64_t c = x->dim(1);
  HONE_TRY(auto scale, channel_param(ctx, 1, c, "BatchNormalization scale"));
  HONE_TRY(auto bias, channel_param(ctx, 2, c, "BatchNormalization B"));
  HONE_TRY(auto mean, channel_param(ctx, 3, c, "BatchNormalization input_mean"));
  HONE_TRY(auto var, channel_param(ctx, 4, c, "BatchNormalization input_var"));
  const double eps = ba.epsilon;
  const int64_t inner = product(x->shape(), 2);
  HostVector<double> v = to_doubles(*x);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    const int64_t ch = (i / inner) % c;
    v[i] = (v[i] - mean[ch]) / std::sqrt(var[ch] + eps) * scale[ch] + bias[ch];
  }
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  return {};
}

/// Mean and population variance of `n` values starting at p with stride 1.
void moments(const double* p, int64_t n, double* mean, double* var) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += p[i];
  const double m = n > 0 ? s / static_cast<double>(n) : 0.0;
  double q = 0.0;
  for (int64_t i = 0; i < n; ++i) q += (p[i] - m) * (p[i] - m);
  *mean = m;
  *var = n > 0 ? q / static_cast<double>(n) : 0.0;
}

Result<void> instance_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_CHECK_OK(check_nc_input(*x, 3, "InstanceNormalization"));
  const int64_t c = x->dim(1);
  HONE_TRY(auto scale, channel_param(ctx, 1, c, "InstanceNormalization scale"));
  HONE_TRY(auto bias, channel_param(ctx, 2, c, "InstanceNormalization B"));
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(ctx.node()));
  const double eps = na.epsilon;
  const int64_t inner = product(x->shape(), 2);
  HostVector<double> v = to_doubles(*x);
  ctx.pool().parallel_for(x->dim(0) * c, [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      double* p = v.data() + plane * inner;
      double mean, var;
      moments(p, inner, &mean, &var);
      const double inv = 1.0 / std::sqrt(var + eps);
      const int64_t ch = plane % c;
      for (int64_t i = 0; i < inner; ++i) p[i] = (p[i] - mean) * inv * scale[ch] + bias[ch];
    }
  });
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<DType> stash_dtype(int64_t stash_type) {
  switch (stash_type) {
    case 1:
      return DType::kF32;
    case 10:
      return DType::kF16;
    case 11:
      return DType::kF64;
    case 16:
      return DType::kBF16;
    default:
      return fail(ErrorCode::kUnsupported, "LayerNormalization stash_type " +
                                               std::to_string(stash_type) +
                                               " is not a float type (1, 10, 11 or 16)");
  }
}

/// Index map of an optional parameter broadcast (unidirectionally) to `shape`.
Result<std::vector<int64_t>> param_map(const Tensor& t, const std::vector<int64_t>& shape,
                                       const std::string& what) {
  auto b = broadcast_shapes({t.shape(), shape});
  if (!b || *b != shape)
    return fail(ErrorCode::kInvalidArgument, what + " " + t.describe() +
                                                 " does not broadcast to the normalized shape " +
                                                 shape_to_string(shape));
  return broadcast_index_map(t.shape(), shape);
}

Result<void> layer_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0)
    return fail(ErrorCode::kInvalidArgument, "LayerNormalization input X must not be a scalar");
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(node));
  HONE_TRY(const int64_t axis, normalize_axis(na.axis, rank, "LayerNormalization axis"));
  HONE_TRY(const DType stash, stash_dtype(na.stash_type));
  const double eps = na.epsilon;
  const std::vector<int64_t> norm_shape(x->shape().begin() + axis, x->shape().end());
  const int64_t inner = product(norm_shape);
  const int64_t outer =
      product(std::vector<int64_t>(x->shape().begin(), x->shape().begin() + axis));
  HONE_TRY(const Tensor* scale_t, ctx.tensor(1));
  HONE_TRY(auto scale_map, param_map(*scale_t, norm_shape, "LayerNormalization Scale"));
  const HostVector<double> scale = to_doubles(*scale_t);
  HostVector<double> bias;
  std::vector<int64_t> bias_map;
  if (ctx.has_input(2)) {
    HONE_TRY(bias_map, param_map(ctx.input(2), norm_shape, "LayerNormalization B"));
    bias = to_doubles(ctx.input(2));
  }
  HostVector<double> v = to_doubles(*x);
  HostVector<double> means(static_cast<size_t>(outer)), invs(static_cast<size_t>(outer));
  ctx.pool().parallel_for(outer, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      double* p = v.data() + row * inner;
      double mean, var;
      moments(p, inner, &mean, &var);
      const double inv = 1.0 / std::sqrt(var + eps);
      means[row] = mean;
      invs[row] = inv;
      for (int64_t i = 0; i < inner; ++i) {
        double y = (p[i] - mean) * inv * scale[scale_map[i]];
        if (!bias.empty()) y += bias[bias_map[i]];
        p[i] = y;
      }
    }
  });
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  std::vector<int64_t> stat_shape = x->shape();
  for (int64_t d = axis; d < rank; ++d) stat_shape[d] = 1;
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(stash, stat_shape, means));
  if (ctx.wants_output(2)) ctx.set_output(2, from_doubles(stash, stat_shape, invs));
  return {};
}

/// RMSNormalization-23: x / sqrt(mean(x^2 over axes [axis, rank)) + epsilon) * scale.
Result<void> rms_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0)
    return fail(ErrorCode::kInvalidArgument, "RMSNormalization input X must not be a scalar");
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(node));
  HONE_TRY(const int64_t axis, normalize_axis(na.axis, rank, "RMSNormalization axis"));
  HONE_TRY(const DType stash, stash_dtype(na.stash_type));
  (void)stash;  // the statistics are kept in double whatever it asks
  const double eps = na.epsilon;
  const std::vector<int64_t> norm_shape(x->shape().begin() + axis, x->shape().end());
  const int64_t inner = product(norm_shape);
  const int64_t outer = inner > 0 ? x->numel() / inner : 0;
  HONE_TRY(const Tensor* scale_t, ctx.tensor(1));
  HONE_TRY(auto scale_map, param_map(*scale_t, norm_shape, "RMSNormalization scale"));
  const HostVector<double> scale = to_doubles(*scale_t);
  HostVector<double> v = to_doubles(*x);
  ctx.pool().parallel_for(outer, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      double* p = v.data() + row * inner;
      double sq = 0.0;
      for (int64_t i = 0; i < inner; ++i) sq += p[i] * p[i];
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
      for (int64_t i = 0; i < inner; ++i) p[i] = p[i] * inv * scale[scale_map[i]];
    }
  });
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> group_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_CHECK_OK(check_nc_input(*x, 2, "GroupNormalization"));
  const Node& node = ctx.node();
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(node));
  const int64_t groups = na.num_groups;
  const int64_t c = x->dim(1);
  if (groups <= 0 || c % groups != 0)
    return fail(ErrorCode::kInvalidArgument,
                "GroupNormalization num_groups " + std::to_string(groups) +
                    " must be positive and divide the channels (" + std::to_string(c) + ")");
  HONE_TRY(const Tensor* scale_t, ctx.tensor(1));
  HONE_TRY(const Tensor* bias_t, ctx.tensor(2));
  // Opset 18 has one scale/bias per group, opset 21 one per channel.
  const int64_t params = scale_t->numel();
  if ((params != c && params != groups) || bias_t->numel() != params)
    return fail(ErrorCode::kInvalidArgument,
                "GroupNormalization scale " + scale_t->describe() + " and bias " +
                    bias_t->describe() + " must both have " + std::to_string(c) +
                    " (channels) or " + std::to_string(groups) + " (groups) values");
  const HostVector<double> scale = to_doubles(*scale_t), bias = to_doubles(*bias_t);
  const bool per_channel = params == c;
  const double eps = na.epsilon;
  const int64_t cg = c / groups, spatial = product(x->shape(), 2), inner = cg * spatial;
  HostVector<double> v = to_doubles(*x);
  ctx.pool().parallel_for(x->dim(0) * groups, [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      double* p = v.data() + ng * inner;
      double mean, var;
      moments(p, inner, &mean, &var);
      const double inv = 1.0 / std::sqrt(var + eps);
      const int64_t g = ng % groups;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = per_channel ? g * cg + i / spatial : g;
        p[i] = (p[i] - mean) * inv * scale[k] + bias[k];
      }
    }
  });
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> lrn(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_CHECK_OK(check_nc_input(*x, 2, "LRN"));
  const Node& node = ctx.node();
  HONE_TRY(const ops::LrnAttrs la, ops::lrn_attrs(node));
  const int64_t size = la.size;
  const double alpha = la.alpha, beta = la.beta;
  const double bias = la.bias;
  const int64_t c = x->dim(1), inner = product(x->shape(), 2);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const HostVector<double> v = to_doubles(*x);
  HostVector<double> out(v.size());
  for (int64_t n = 0; n < x->dim(0); ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0.0;
        for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
          const double e = v[(n * c + k) * inner + i];
          sq += e * e;
        }
        const int64_t at = (n * c + ch) * inner + i;
        out[at] = v[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
      }
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), out));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> mean_variance_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const int64_t rank = static_cast<int64_t>(x->rank());
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(ctx.node()));
  std::vector<int64_t> axes = na.axes;
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    HONE_TRY(const int64_t ax, normalize_axis(a, rank, "MeanVarianceNormalization axis"));
    reduced[ax] = true;
  }
  // Group id of each element: its linear index over the kept dims.
  const std::vector<int64_t>& shape = x->shape();
  std::vector<int64_t> kept_stride(static_cast<size_t>(rank), 0);
  int64_t groups = 1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!reduced[d]) {
      kept_stride[d] = groups;
      groups *= shape[d];
    }
  const int64_t n = x->numel();
  std::vector<int64_t> group(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t g = 0;
    for (int64_t d = 0; d < rank; ++d) g += idx[d] * kept_stride[d];
    group[i] = g;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  HostVector<double> v = to_doubles(*x);
  HostVector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
  const double count = groups > 0 ? static_cast<double>(n) / static_cast<double>(groups) : 1.0;
  for (int64_t i = 0; i < n; ++i) sum[group[i]] += v[i];
  for (double& s : sum) s /= count;
  for (int64_t i = 0; i < n; ++i) sq[group[i]] += (v[i] - sum[group[i]]) * (v[i] - sum[group[i]]);
  // The ONNX function body divides by sqrt(variance) + 1e-9.
  for (int64_t i = 0; i < n; ++i)
    v[i] = (v[i] - sum[group[i]]) / (std::sqrt(sq[group[i]] / count) + 1e-9);
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  return {};
}

/// LpNormalization: x / ||x||_p along `axis` (p 1 or 2); a zero norm gives 0.
Result<void> lp_norm(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0)
    return fail(ErrorCode::kInvalidArgument, "LpNormalization input must not be a scalar");
  HONE_TRY(const ops::NormAttrs na, ops::norm_attrs(node));
  HONE_TRY(const int64_t axis, normalize_axis(na.axis, rank, "LpNormalization axis"));
  const int64_t p = na.p;
  if (p != 1 && p != 2)
    return fail(ErrorCode::kInvalidArgument,
                "LpNormalization p must be 1 or 2, got " + std::to_string(p));
  const int64_t len = x->dim(axis), inner = product(x->shape(), static_cast<size_t>(axis) + 1);
  const int64_t outer = len * inner > 0 ? x->numel() / (len * inner) : 0;
  HostVector<double> v = to_doubles(*x);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double* base = v.data() + o * len * inner + i;
      double norm = 0.0;
      for (int64_t k = 0; k < len; ++k)
        norm += p == 1 ? std::fabs(base[k * inner]) : base[k * inner] * base[k * inner];
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < len; ++k)
        base[k * inner] = norm != 0.0 ? base[k * inner] / norm : 0.0;
    }
  HONE_TRY(Tensor y, to_tensor(x->dtype(), x->shape(), v));
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  r.add("LpNormalization", lp_norm);
  r.add("BatchNormalization", batch_norm);
  r.add("InstanceNormalization", instance_norm);
  r.add("LayerNormalization", layer_norm);
  r.add("RMSNormalization", rms_norm);
  r.add("GroupNormalization", group_norm);
  r.add("LRN", lrn);
  r.add("MeanVarianceNormalization", mean_variance_norm);
}

}  // namespace hone::eval::nn
