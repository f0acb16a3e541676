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

bool append_values(ShapeSignature& key, const std::vector<Tensor>& inputs,
                   const std::vector<bool>& take, int64_t max_numel) {
  for (size_t i = 0; i < inputs.size() && i < take.size(); ++i) {
    if (!take[i]) continue;
    const Tensor& t = inputs[i];
    if (t.numel() > max_numel || !(is_integer(t.dtype()) || t.dtype() == DType::kBool))
      return false;
    std::vector<int64_t> entry{static_cast<int64_t>(i), static_cast<int64_t>(t.dtype())};
    for (int64_t k = 0; k < t.numel(); ++k) entry.push_back(tensor_element_as_int64(t, k));
    key.push_back(std::move(entry));
  }
  return true;
}

Result<std::vector<std::pair<size_t, Tensor>>> values_of_key(const ShapeSignature& key,
                                                             size_t num_inputs) {
  std::vector<std::pair<size_t, Tensor>> out;
  for (size_t e = num_inputs; e < key.size(); ++e) {
    const std::vector<int64_t>& entry = key[e];
    const auto i = entry.size() < 2 ? num_inputs : static_cast<size_t>(entry[0]);
    if (i >= num_inputs) return fail(ErrorCode::kInternal, "a plan key's value names no input");
    HONE_TRY(Tensor t, value_of_key_entry(entry, key[i]));
    out.emplace_back(i, std::move(t));
  }
  return out;
}

Result<Tensor> value_of_key_entry(const std::vector<int64_t>& entry,
                                  const std::vector<int64_t>& dims) {
  Tensor t = Tensor::zeros(static_cast<DType>(entry[1]), dims);
  if (static_cast<size_t>(t.numel()) + 2 != entry.size())
    return fail(ErrorCode::kInternal, "a plan key's value does not match its input's dims");
  for (int64_t k = 0; k < t.numel(); ++k) {
    const int64_t v = entry[static_cast<size_t>(k) + 2];
    if (t.dtype() == DType::kI64)
      t.data<int64_t>()[k] = v;
    else if (t.dtype() == DType::kU64)
      t.data<uint64_t>()[k] = static_cast<uint64_t>(v);
    else
      tensor_set_element_from_double(t, k, static_cast<double>(v));  // exact: 32 bits or fewer
  }
  return t;
}

std::string signature_text(const ShapeSignature& s) {
  std::string out;
  for (const std::vector<int64_t>& d : s) out += (out.empty() ? "" : " ") + shape_to_string(d);
  return out;
}

}  // namespace hone
