// Private to the aot backend: what a GEMM step absorbs from its neighbours.
// A Transpose that only reorders the dims of a MatMul operand (as attention
// heads do: [b, s, h, d] -> [b, h, s, d]) costs a copy; the MatMul can read
// the untransposed buffer through strides and a transposed-operand flag
// instead. Likewise a Transpose right after a MatMul becomes strides of the
// GEMM's output, and a scalar Mul or Div right after it becomes SGEMM's alpha.
//
//   if (folds_into_matmul_operand(p, consumers, t)) /* t's output: a strided view */;
//   const Strided a = matmul_operand(p, ops[0]);     // base, dims, strides
//   const GemmScale s = gemm_scale(p, step);         // alpha and the nodes it absorbed
#pragma once

#include <vector>

#include "backends/aot/program.h"

namespace hone::aot {

/// True when Transpose `t`'s output is read only by MatMuls (and is no graph
/// output), and its permutation keeps the last or second-to-last axis on the
/// input's last (contiguous) axis, so one of the matrix dims has unit stride.
bool folds_into_matmul_operand(const Program& p, const std::vector<std::vector<NodeId>>& consumers,
                               NodeId t);

/// True when Transpose `t` reads the result of `s`, a lone MatMul anchor, is
/// that result's only reader, and keeps the last axis in place, so the MatMul
/// can write its rows straight into `t`'s output with a row stride.
bool folds_into_matmul_result(const Program& p, const std::vector<std::vector<NodeId>>& consumers,
                              const Step& s, NodeId t);

/// A tensor as a MatMul reads or writes it: the storage it lives in, its dims
/// (1-D operands get their unit axis), and the stride of every axis, in floats.
struct Strided {
  ValueId storage = kNoValue;
  DimExprs dims;
  DimExprs strides;
};

/// Operand `v` of a MatMul: contiguous, or through the strides of the folded
/// Transpose that made it. `b_side` places a 1-D operand's unit axis last.
Strided matmul_operand(const Program& p, ValueId v, bool b_side);

/// The output of MatMul step `s` with dims `out`: contiguous in the step's
/// result buffer, or through the folded output Transpose's strides.
Strided matmul_result(const Program& p, const Step& s, const DimExprs& out);

/// The scale a GEMM anchor applies through alpha, its bias, and how many of
/// the step's leading chain nodes the anchor absorbs (a folded output
/// Transpose, scalar Muls and Divs, then a MatMul's bias Add); those nodes'
/// values equal what the anchor stores.
struct GemmScale {
  float alpha = 1.0f;
  ValueId bias = kNoValue;  // a MatMul's bias row the output starts from (beta 1)
  size_t absorbed = 0;
};
GemmScale gemm_scale(const Program& p, const Step& s);

}  // namespace hone::aot
