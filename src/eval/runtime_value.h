// A value as the reference interpreter holds it while running: a tensor, a
// sequence of tensors, or an empty optional.
#pragma once

#include <vector>

#include "hone/tensor.h"

namespace hone::eval {

struct RuntimeValue {
  enum class Kind : uint8_t { kNone, kTensor, kSequence };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  bool optional = false;                // wrapped in an ONNX optional (kNone then means "no value")
  DType elem_type = DType::kUndefined;  // element type, kept for empty sequences/optionals

  static RuntimeValue of(Tensor t) {
    RuntimeValue v;
    v.kind = Kind::kTensor;
    v.elem_type = t.dtype();
    v.tensor = std::move(t);
    return v;
  }
  static RuntimeValue of_sequence(std::vector<Tensor> seq, DType elem) {
    RuntimeValue v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(seq);
    v.elem_type = elem;
    return v;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_none() const { return kind == Kind::kNone; }
};

}  // namespace hone::eval
