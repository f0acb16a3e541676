// Reference losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (the latter is NLL over a LogSoftmax along the class axis 1).
//
// Input [N, C, d1..dk], target [N, d1..dk] with class indices, optional
// weight [C]. loss[n, d] = -weight[t] * input[n, t, d] with t = target[n, d];
// entries whose target equals ignore_index contribute 0 and weigh 0.
// reduction: "none" keeps the target's shape, "sum" adds everything, "mean"
// divides the sum by the total weight of the entries not ignored.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "eval/kernel_util.h"
#include "eval/ops.h"
#include "eval/ops_reduce_internal.h"
#include "hone/shape.h"

namespace hone::eval {
namespace {

struct LossShape {
  int64_t N = 0, C = 0, D = 1;
};

Result<LossShape> check_loss_shapes(const char* op, const Tensor& x, const Tensor& target,
                                    const Tensor* weight) {
  if (x.rank() < 2)
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " input must be [N, C, ...], got " + x.describe());
  if (!is_integer(target.dtype()))
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " target must be an integer tensor, got " + target.describe());
  std::vector<int64_t> expect = x.shape();
  expect.erase(expect.begin() + 1);
  if (target.shape() != expect)
    return fail(ErrorCode::kInvalidArgument, std::string(op) + " target " + target.describe() +
                                                 " must have shape " + shape_to_string(expect) +
                                                 " for input " + x.describe());
  LossShape s;
  s.N = x.dim(0);
  s.C = x.dim(1);
  for (size_t i = 2; i < x.rank(); ++i) s.D *= x.dim(i);
  if (weight && (weight->rank() != 1 || weight->dim(0) != s.C))
    return fail(ErrorCode::kInvalidArgument, std::string(op) + " weight " + weight->describe() +
                                                 " must be [" + std::to_string(s.C) + "]");
  return s;
}

// NLL over log-probabilities `lp` laid out [N, C, D]; writes the output tensor.
Result<Tensor> nll(const char* op, const HostVector<double>& lp, const Tensor& target,
                   const Tensor* weight, const LossShape& s, const Node& node, DType dtype) {
  const std::string reduction = node.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return fail(ErrorCode::kInvalidArgument,
                std::string(op) + " reduction '" + reduction + "' is not one of none, sum, mean");
  std::optional<int64_t> ignore;
  if (node.has_attr("ignore_index")) ignore = node.attr_int("ignore_index", 0);
  const std::vector<int64_t> t = to_int64s(target);
  const HostVector<double> w = weight ? to_doubles(*weight) : HostVector<double>();
  HostVector<double> loss(t.size());
  double total = 0.0, total_weight = 0.0;
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t d = 0; d < s.D; ++d) {
      const size_t i = static_cast<size_t>(n * s.D + d);
      const int64_t c = t[i];
      if (ignore && c == *ignore) {
        loss[i] = 0.0;
        continue;
      }
      if (c < 0 || c >= s.C)
        return fail(ErrorCode::kInvalidArgument,
                    std::string(op) + " target " + std::to_string(c) + " at flat index " +
                        std::to_string(i) + " is outside [0, " + std::to_string(s.C) + ")");
      const double wc = weight ? w[static_cast<size_t>(c)] : 1.0;
      loss[i] = -lp[static_cast<size_t>((n * s.C + c) * s.D + d)] * wc;
      total += loss[i];
      total_weight += wc;
    }
  }
  if (reduction == "none") return from_doubles(dtype, target.shape(), loss);
  const double v = reduction == "sum" ? total : total / total_weight;
  return from_doubles(dtype, {}, std::span<const double>(&v, 1));
}

Result<void> nll_loss(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* target, ctx.tensor(1));
  const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (!is_floating(x->dtype()))
    return fail(ErrorCode::kUnsupported,
                "NegativeLogLikelihoodLoss needs a float input, got " + x->describe());
  HONE_TRY(LossShape s, check_loss_shapes("NegativeLogLikelihoodLoss", *x, *target, weight));
  HONE_TRY(Tensor out, nll("NegativeLogLikelihoodLoss", to_doubles(*x), *target, weight, s,
                           ctx.node(), x->dtype()));
  ctx.set_output(0, std::move(out));
  return {};
}

Result<void> softmax_cross_entropy_loss(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* target, ctx.tensor(1));
  const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (!is_floating(x->dtype()))
    return fail(ErrorCode::kUnsupported,
                "SoftmaxCrossEntropyLoss needs a float input, got " + x->describe());
  HONE_TRY(LossShape s, check_loss_shapes("SoftmaxCrossEntropyLoss", *x, *target, weight));
  HostVector<double> lp = to_doubles(*x);
  // LogSoftmax along the class axis, per (n, d).
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t d = 0; d < s.D; ++d) {
      const size_t base = static_cast<size_t>(n * s.C * s.D + d), step = static_cast<size_t>(s.D);
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < s.C; ++c) m = std::max(m, lp[base + c * step]);
      if (std::isinf(m) && m < 0) m = 0.0;
      double sum = 0.0;
      for (int64_t c = 0; c < s.C; ++c) sum += std::exp(lp[base + c * step] - m);
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < s.C; ++c) lp[base + c * step] = lp[base + c * step] - m - log_sum;
    }
  }
  HONE_TRY(Tensor out,
           nll("SoftmaxCrossEntropyLoss", lp, *target, weight, s, ctx.node(), x->dtype()));
  ctx.set_output(0, std::move(out));
  if (ctx.wants_output(1)) ctx.set_output(1, from_doubles(x->dtype(), x->shape(), lp));
  return {};
}

}  // namespace

void register_reduce_loss_ops(OpRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", nll_loss);
  r.add("SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss);
}

}  // namespace hone::eval
