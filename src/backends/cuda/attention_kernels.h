// Private to the cuda backend: fused attention kernels (flash-style online
// softmax), compiled by NVRTC on first use, and the host mirror of the
// struct they take by value.
//
//   HONE_TRY(const Module* m, attention_module(driver));
//   HONE_TRY(CUfunction f, m->function("hone_attn_mma_64_bf16"));   // or hone_attn_simt_64
//
// Kernels: hone_attn_simt_{32,64} (f32 arithmetic, 64 query rows per block of
// 64 threads); on tensor cores, 64 query rows per block of 128 threads, f32
// accumulation and softmax statistics: hone_attn_mma_{32,64,128}_{bf16,f16}
// (operands rounded to bf16/f16; the _hio forms read Q, K, V and write O as
// bf16/f16, under half-precision activations; hone_attn_mma_async_{32,64}_*_hio
// stage K and V by cp.async, attention_async_module()), hone_attn_tf32_{32,64} (operands rounded to
// tf32) and hone_attn_3xtf32_{32,64} (each product as three tf32 products,
// about f32's precision). Grid: x = batch index (over the product of the
// batch dims) times query tiles, the tiles of one batch index adjacent.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/cuda_api.h"

namespace hone::cuda {

inline constexpr int kAttnMaxBatch = 4;    // batch dims of one attention launch
inline constexpr int kAttnRows = 64;       // query rows per block (both kernel families)
inline constexpr int kAttnSplitRows = 16;  // per block of the key-split kernels (_split_)

/// Host mirror of `HoneAttn`. Logically Q is [batch..., len_q, D], K and V
/// [batch..., len_k, D] and O [batch..., len_q, D]; element (row r, dim d) of
/// each is at r * X_row + d * X_col past its batch offset (any layout: K or Kᵀ
/// stored, heads not yet transposed). Batch offsets: index b decomposed over
/// bdims[0..nb), times each tensor's strides (0 where it broadcasts). mask (f32, may be null) adds
/// mask[sm·b + r * mask_r + j * mask_c] to score (r, j).
struct AttnArgs {
  CUdeviceptr q = 0, k = 0, v = 0, mask = 0, o = 0;
  int64_t bdims[kAttnMaxBatch] = {};
  int64_t sq[kAttnMaxBatch] = {};
  int64_t sk[kAttnMaxBatch] = {};
  int64_t sv[kAttnMaxBatch] = {};
  int64_t sm[kAttnMaxBatch] = {};
  int64_t so[kAttnMaxBatch] = {};
  int64_t mask_r = 0, mask_c = 0;
  int64_t q_row = 0, q_col = 0, k_row = 0, k_col = 0, v_row = 0, v_col = 0, o_row = 0, o_col = 0;
  int32_t nb = 0, len_q = 0, len_k = 0, has_mask = 0;
  float scale = 1.0f;
  /// Bit 0: K's rows, bit 1: V's rows are contiguous and aligned to four
  /// elements (one load of four); bit 2: O's rows are contiguous and aligned
  /// to two (one store of two); bits 3 and 4: K's and V's rows are contiguous
  /// and 16-byte aligned (the cp.async kernels). Set per launch from the
  /// pointers (vector_access()).
  int32_t vec = 0;
};
static_assert(sizeof(AttnArgs) == 336, "must match HoneAttn in kernels/attention.cu");

/// The `vec` bits for `a` with its pointers set, its elements `elem_bytes`
/// wide (4: f32; 2: the _hio kernels' bf16/f16).
int32_t vector_access(const AttnArgs& a, int64_t elem_bytes = 4);

/// kernels/attention.cu: the kernels' templates and device helpers, the start
/// of both attention programs (attention_entry.cu's kernels follow it in the
/// one, attention_async.cu's in the other).
const std::string& attention_source();
/// The attention module, compiled on first use and kept for the process.
[[nodiscard]] Result<const Module*> attention_module(const Driver& d);
/// attention.cu with kernels/attention_async.cu (hone_attn_mma_async_*), a
/// module of its own so that its failing to compile (kept: tried once) leaves
/// attention_module() usable.
[[nodiscard]] Result<const Module*> attention_async_module(const Driver& d);

}  // namespace hone::cuda
