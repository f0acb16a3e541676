#include "backends/reference/ops.h"

#include "backends/reference/ops_elementwise_internal.h"

namespace hone::reference {

void register_elementwise_ops(OpRegistry& r) {
  register_elementwise_unary_ops(r);
  register_elementwise_activation_ops(r);
  register_elementwise_binary_ops(r);
  register_elementwise_variadic_ops(r);
  register_elementwise_cast_ops(r);
  register_elementwise_quantize_ops(r);
}

}  // namespace hone::reference
