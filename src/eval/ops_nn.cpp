// The nn kernel family: registration and the input check shared by
// convolutions and pools (their window geometry is ops/window.h). The kernels
// live in ops_nn_<part>.cpp.
#include "eval/ops.h"

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"

namespace hone::eval {

namespace nn {

Result<void> check_nc_input(const Tensor& x, size_t min_rank, const std::string& op) {
  if (x.rank() < min_rank)
    return fail(ErrorCode::kInvalidArgument,
                op + " input X must have rank >= " + std::to_string(min_rank) +
                    " ([N, C, spatial...]), got " + x.describe());
  return {};
}

}  // namespace nn

void register_nn_ops(OpRegistry& r) {
  nn::register_conv_ops(r);
  nn::register_pool_ops(r);
  nn::register_norm_ops(r);
  nn::register_resize_ops(r);
  nn::register_vision_ops(r);
  nn::register_attention_ops(r);
  nn::register_deform_ops(r);
}

}  // namespace hone::eval
