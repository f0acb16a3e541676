// Registration of the reference kernels, one function per op family. Each
// family lives in its own ops_<family>.cpp; OpRegistry::reference() calls
// them all from the one list in ops.cpp.
#pragma once

#include "eval/kernel.h"

namespace hone::eval {

void register_elementwise_ops(
    OpRegistry& r);  // unary/binary math, activations, compare, logic, Cast, Where, Clip
void register_nn_ops(OpRegistry& r);      // Conv, ConvTranspose, pools, normalizations
void register_linalg_ops(OpRegistry& r);  // Gemm, MatMul, Einsum
void register_shape_ops(
    OpRegistry& r);  // Reshape, Transpose, Concat, Slice, Gather, Pad, Resize, ...
void register_reduce_ops(OpRegistry& r);   // Reduce*, ArgMax/Min, Softmax, TopK, CumSum, ...
void register_rnn_ops(OpRegistry& r);      // LSTM, GRU, RNN
void register_control_ops(OpRegistry& r);  // If, Loop, Scan, sequences, optionals
void register_random_ops(OpRegistry& r);   // RandomNormal/Uniform(Like), Bernoulli, Multinomial

}  // namespace hone::eval
