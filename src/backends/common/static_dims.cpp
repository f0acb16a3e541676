#include "backends/common/static_dims.h"

namespace hone {

std::optional<std::vector<std::vector<int64_t>>> static_input_dims(const Graph& block) {
  std::vector<std::vector<int64_t>> sig;
  for (ValueId v : block.inputs()) {
    const Value& val = block.value(v);
    if (!val.shape) return std::nullopt;
    auto dims = val.shape->to_static();
    if (!dims) return std::nullopt;
    sig.push_back(std::move(*dims));
  }
  return sig;
}

}  // namespace hone
