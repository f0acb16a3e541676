// Private to the reduce family (ops_reduce*.cpp): the per-part registration
// functions and the reduction plan they share.
//
//   HONE_TRY(ReducePlan p, plan_reduce(x.shape(), axes, /*keepdims=*/true));
//   for (o : p.kept_offs) for (r : p.red_offs) ... x[o + r] ...
#pragma once

#include <cstdint>
#include <vector>

#include "eval/kernel.h"

namespace hone::eval {

void register_reduce_softmax_ops(OpRegistry& r);  // Softmax, LogSoftmax, Hardmax, TopK, CumSum
void register_reduce_loss_ops(OpRegistry& r);  // SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss

/// Element offsets of a reduction: out[i] combines x[kept_offs[i] + red_offs[r]]
/// over all r. Empty `axes` reduces every axis.
struct ReducePlan {
  std::vector<int64_t> out_shape;
  std::vector<int64_t> kept_offs;
  std::vector<int64_t> red_offs;
};
[[nodiscard]] Result<ReducePlan> plan_reduce(const std::vector<int64_t>& shape,
                                             std::vector<int64_t> axes, bool keepdims);

}  // namespace hone::eval
