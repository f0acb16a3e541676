#include "backends/reference/ops_nn_internal.h"
namespace hone::reference::nn {
void register_vision_ops(OpRegistry& r) { (void)r; }
}  // namespace hone::reference::nn
