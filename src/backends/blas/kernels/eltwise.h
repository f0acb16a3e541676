// Fused element-wise programs: a run of unary and binary element-wise ops
// executed as one pass over the output, tile by tile, with no intermediate
// tensors. Also the epilogue of Conv/Gemm/MatMul (bias, residual, activation).
//
//   EwProgram p;  p.code = {{EwOp::kAdd, 1}, {EwOp::kRelu}};      // relu(x0 + x1)
//   HONE_TRY(EwLayout l, EwLayout::make(out_dims, {x0_dims, x1_dims}));
//   kernels::eltwise_run(p, l, {x0, x1}, y, 0, l.numel);           // any sub-range
//
// Operand 0 is loaded into the accumulator; every instruction then updates
// it, binary ones reading another operand (broadcast as ONNX does). The
// output may alias operand 0 (epilogues run in place). Transcendental ops
// compute in double and round once, as the reference does.
// Kernel id: "eltwise.f32.blas.fused".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/thread_pool.h"
#include "ops/unary.h"

namespace hone::blas::kernels {

enum class EwOp : uint8_t {
  // binary: acc = acc (op) operand, or operand (op) acc when `reversed`
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kPRelu,  // acc < 0 ? operand * acc : acc
  // unary
  kRelu,
  kLeakyRelu,  // a = alpha
  kSigmoid,
  kTanh,
  kClip,  // [a, b]
  kErf,
  kExp,
  kLog,
  kSqrt,
  kAbs,
  kNeg,
  kReciprocal,
  kGelu,      // erf form
  kGeluTanh,  // tanh approximation
  kAffine,    // acc * a + b
  kFormula,   // formula->eval(acc, a, b): a unary formula of the schema (ops/unary.h)
};

bool ew_is_binary(EwOp op);

struct EwInstr {
  EwOp op = EwOp::kRelu;
  int operand = -1;  // binary ops: which operand
  bool reversed = false;
  float a = 0.0f, b = 0.0f;
  const ops::UnaryFormula* formula = nullptr;  // kFormula
};

struct EwProgram {
  std::vector<EwInstr> code;
  /// "add,relu"
  std::string describe() const;
};

/// How each operand maps onto the output: merged dims and per-operand strides
/// (0 on broadcast dims). Built once per input-shape signature.
struct EwLayout {
  std::vector<int64_t> dims;                  // merged output dims
  std::vector<std::vector<int64_t>> strides;  // per operand, per merged dim
  int64_t numel = 0;
  int64_t inner = 1;  // the last merged dim

  /// Fails with kInvalidArgument when an operand does not broadcast to `out`.
  [[nodiscard]] static Result<EwLayout> make(const std::vector<int64_t>& out,
                                             const std::vector<std::vector<int64_t>>& operands);
};

/// Runs `p` over output elements [begin, end) on the calling thread.
void eltwise_run(const EwProgram& p, const EwLayout& l, const std::vector<const float*>& operands,
                 float* out, int64_t begin, int64_t end);

/// Runs `p` over the whole output, split on `pool`.
void eltwise_run_parallel(ThreadPool& pool, const EwProgram& p, const EwLayout& l,
                          const std::vector<const float*>& operands, float* out);

}  // namespace hone::blas::kernels
