#include "eval/ops.h"

#include "eval/ops_elementwise_internal.h"

namespace hone::eval {

void register_elementwise_ops(OpRegistry& r) {
  register_elementwise_unary_ops(r);
  register_elementwise_activation_ops(r);
  register_elementwise_binary_ops(r);
  register_elementwise_variadic_ops(r);
  register_elementwise_cast_ops(r);
  register_elementwise_quantize_ops(r);
}

}  // namespace hone::eval
