// Test helpers for the control-flow and sequence kernels: a registry holding
// those kernels plus two tiny test-only kernels (Add, Identity) for bodies, so
// these tests do not depend on other op families.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "eval/ops.h"
#include "graph/body_test_util.h"
#include "hone/graph.h"

namespace hone::eval::testing {

// Add for f32 or i64: same shapes, or b a one-element tensor.
inline Result<void> test_add(KernelContext& ctx) {
  HONE_TRY(const Tensor* a, ctx.tensor(0));
  HONE_TRY(const Tensor* b, ctx.tensor(1));
  if (a->dtype() != b->dtype() || (b->numel() != 1 && a->shape() != b->shape()))
    return fail(ErrorCode::kInvalidArgument, "test Add: " + a->describe() + " + " + b->describe());
  Tensor out = Tensor::zeros(a->dtype(), a->shape());
  for (int64_t i = 0; i < a->numel(); ++i) {
    const int64_t j = b->numel() == 1 ? 0 : i;
    if (a->dtype() == DType::kF32)
      out.data<float>()[i] = a->data<float>()[i] + b->data<float>()[j];
    else if (a->dtype() == DType::kI64)
      out.data<int64_t>()[i] = a->data<int64_t>()[i] + b->data<int64_t>()[j];
    else
      return fail(ErrorCode::kUnsupported, "test Add: dtype");
  }
  ctx.set_output(0, std::move(out));
  return {};
}

inline Result<void> test_identity(KernelContext& ctx) {
  if (ctx.value(0) == nullptr) return fail(ErrorCode::kInvalidArgument, "test Identity: no input");
  ctx.set_output_value(0, *ctx.value(0));
  return {};
}

inline const OpRegistry& control_registry() {
  static const OpRegistry r = [] {
    OpRegistry reg;
    register_control_ops(reg);
    reg.add("Add", test_add);
    reg.add("Identity", test_identity);
    return reg;
  }();
  return r;
}

inline Result<std::vector<RuntimeValue>> run_values(const Graph& g, std::vector<RuntimeValue> ins) {
  return Interpreter(control_registry()).run(g, std::move(ins));
}

using body_test::share;

template <class T>
std::vector<T> values_of(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

/// A value declaration with no producer (a captured name or a non-tensor input).
inline Value declared(std::string name, ValueKind kind = ValueKind::kTensor,
                      DType dtype = DType::kUndefined) {
  Value v;
  v.name = std::move(name);
  v.kind = kind;
  v.dtype = dtype;
  return v;
}

inline Shape scalar_shape() {
  return Shape(std::vector<Dim>{});
}

}  // namespace hone::eval::testing
