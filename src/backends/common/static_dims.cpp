#include "backends/common/static_dims.h"

namespace hone {

std::optional<ShapeSignature> static_input_dims(const Graph& block) {
  ShapeSignature sig;
  for (ValueId v : block.inputs()) {
    const Value& val = block.value(v);
    if (!val.shape) return std::nullopt;
    auto dims = val.shape->to_static();
    if (!dims) return std::nullopt;
    sig.push_back(std::move(*dims));
  }
  return sig;
}

ShapeSignature signature_of(const std::vector<Tensor>& inputs) {
  ShapeSignature sig;
  sig.reserve(inputs.size());
  for (const Tensor& t : inputs) sig.push_back(t.shape());
  return sig;
}

bool all_f32(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs)
    if (t.dtype() != DType::kF32) return false;
  return true;
}

std::string signature_text(const ShapeSignature& s) {
  std::string out;
  for (const std::vector<int64_t>& d : s) out += (out.empty() ? "" : " ") + shape_to_string(d);
  return out;
}

}  // namespace hone
