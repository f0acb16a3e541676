#include "eval/ops.h"

namespace hone::eval {

const OpRegistry& OpRegistry::reference() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_nn_ops(r);
    register_linalg_ops(r);
    register_shape_ops(r);
    register_reduce_ops(r);
    register_rnn_ops(r);
    register_control_ops(r);
    register_random_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace hone::eval
