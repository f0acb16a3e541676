// A value an ONNX graph takes or gives at run time: a tensor, a sequence of tensors, or
// an empty optional. Backends take and give tensors only; the reference
// interpreter (hone/reference.h) also runs graphs whose inputs or outputs are
// sequences or optionals.
//
//   RunValue t = RunValue::of(Tensor::zeros(DType::kF32, {2, 3}));
//   RunValue s = RunValue::of_sequence({a, b}, DType::kF32);
#pragma once

#include <cstdint>
#include <vector>

#include "hone/tensor.h"

namespace hone {

struct RunValue {
  enum class Kind : uint8_t { kNone, kTensor, kSequence };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  bool optional = false;                // wrapped in an ONNX optional (kNone then means "no value")
  DType elem_type = DType::kUndefined;  // element type, kept for empty sequences/optionals

  static RunValue of(Tensor t) {
    RunValue v;
    v.kind = Kind::kTensor;
    v.elem_type = t.dtype();
    v.tensor = std::move(t);
    return v;
  }
  static RunValue of_sequence(std::vector<Tensor> seq, DType elem) {
    RunValue v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(seq);
    v.elem_type = elem;
    return v;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_none() const { return kind == Kind::kNone; }
};

}  // namespace hone
