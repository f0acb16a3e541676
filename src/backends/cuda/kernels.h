// Private to the cuda backend: the CUDA C++ source of its kernels, compiled
// at run time by NVRTC, and the host mirrors of the structs they take by
// value (same members, same order, so the same layout on both sides).
//
//   HONE_TRY(const Module* m, fixed_module(driver));            // compiled once per process
//   HONE_TRY(CUfunction f, m->function("hone_softmax"));
//   std::string src = ew_prelude() + my_generated_kernel;       // per-block element-wise chains
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/cuda_api.h"

namespace hone::cuda {

inline constexpr int kMaxRank = 6;      // element-wise and copy kernels index up to 6 dims
inline constexpr int kMaxOperands = 8;  // operands of one fused element-wise chain

/// Host mirror of `HoneShape`: y[dst offset] = x[src offset] over `dims`.
struct CopyShape {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src[kMaxRank] = {};
  int64_t dst[kMaxRank] = {};
};

/// Host mirror of `HoneEw`: the operands of one element-wise chain launch.
/// `flat[k]`: operand k has the output's shape (no index arithmetic).
struct EwArgs {
  CUdeviceptr in[kMaxOperands] = {};
  int64_t st[kMaxOperands][kMaxRank] = {};
  int64_t dims[kMaxRank] = {};
  int32_t rank = 0;
  int32_t flat[kMaxOperands] = {};
};
/// Host mirror of `HonePad` (kernels/index_ops.cu): Pad in reflect (mode
/// 1), edge (2) or wrap (3) mode; per axis the output dims, the pad before,
/// the kept input's length and its stride in elements.
struct PadShape {
  int32_t rank = 0;
  int32_t mode = 0;
  int64_t out[kMaxRank] = {};
  int64_t begin[kMaxRank] = {};
  int64_t len[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
};
static_assert(sizeof(CopyShape) == 152 && sizeof(EwArgs) == 536 && sizeof(PadShape) == 200,
              "must match the CUDA structs in kernels/prelude.cu and kernels/index_ops.cu");

/// Shared definitions (HoneEw, hone_ld, math helpers) every module starts with.
const std::string& ew_prelude();
/// The module of fixed kernels (im2col, copies, pools, reductions, softmax,
/// layer norm), compiled on first use and kept for the process.
[[nodiscard]] Result<const Module*> fixed_module(const Driver& d);

}  // namespace hone::cuda
