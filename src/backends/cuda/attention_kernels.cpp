#include "backends/cuda/attention_kernels.h"

#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/kernel_text.h"

namespace hone::cuda {

// The kernels of kernels/attention.cu. O = softmax(Q·Kᵀ·scale + mask)·V per batch index, one pass
// over K and V with the running (online) softmax: no score matrix reaches memory.
//
// hone_attn_simt_D: f32 arithmetic throughout (strict fp32 and tf32 builds).
//   A block of 64 threads owns 64 query rows, one row per thread (q and the
//   output row in registers); key tiles of 32 keys are staged in shared
//   memory (K transposed so a float4 holds four keys' values of one dim) and
//   every thread walks the same tile, so shared reads are broadcasts.
// hone_attn_mma_D_bf16 / _f16: tensor cores (mma.sync m16n8k16, f32
//   accumulation). A block of 4 warps owns 64 query rows, 16 per warp; K and
//   V tiles of 64 keys are loaded with all their loads in flight, converted
//   to bf16/f16 into shared memory and read as mma operands by ldmatrix (V's
//   transposing form); the scores stay in the mma accumulators, whose layout
//   is the A operand's for P·V, so the probabilities never leave registers.
//   Row maxima and sums are f32, reduced over the four lanes sharing a row.
// hone_attn_mma_async_D_{bf16,f16}_hio (kernels/attention_async.cu, D 32 or
//   64): the _hio kernel with K and V tiles copied by cp.async into two
//   buffers, tile j + 1 in flight while tile j is computed; for K and V rows
//   contiguous and 16-byte aligned. A module of its own (attention_async_module).
// All kernels number their blocks query tile fastest: one head's tiles run
// side by side and find its K and V in L2.

int32_t vector_access(const AttnArgs& a, int64_t elem_bytes) {
  // Rows of `col` 1 whose start (pointer, row and batch strides) is a
  // multiple of `e` elements (`e` * elem_bytes bytes).
  auto rows = [&](CUdeviceptr ptr, int64_t row, int64_t col, const int64_t* st, int64_t e) {
    if (col != 1 || ptr % static_cast<CUdeviceptr>(e * elem_bytes) != 0 || row % e != 0)
      return false;
    for (int32_t i = 0; i < a.nb; ++i)
      if (st[i] % e != 0) return false;
    return true;
  };
  // K and V load four elements at once, O stores two; K and V rows copy in
  // 16-byte pieces (the cp.async kernels, bf16/f16 elements).
  return (rows(a.k, a.k_row, a.k_col, a.sk, 4) ? 1 : 0) |
         (rows(a.v, a.v_row, a.v_col, a.sv, 4) ? 2 : 0) |
         (rows(a.o, a.o_row, a.o_col, a.so, 2) ? 4 : 0) |
         (rows(a.k, a.k_row, a.k_col, a.sk, 16 / elem_bytes) ? 8 : 0) |
         (rows(a.v, a.v_row, a.v_col, a.sv, 16 / elem_bytes) ? 16 : 0);
}

const std::string& attention_source() {
  static const std::string s{kernel_text::kAttention};
  return s;
}

namespace {

const std::string& attention_entry_source() {
  static const std::string s{kernel_text::kAttentionEntry};
  return s;
}

}  // namespace

Result<const Module*> attention_module(const Driver& d) {
  static std::mutex mu;
  static std::unique_ptr<Module> module;
  std::lock_guard lock(mu);
  if (!module) {
    HONE_TRY(Module m,
             Module::compile(d, attention_source() + attention_entry_source(), "hone_attention"));
    module = std::make_unique<Module>(std::move(m));
  }
  return module.get();
}

Result<const Module*> attention_async_module(const Driver& d) {
  static std::mutex mu;
  static std::unique_ptr<Module> module;
  static std::optional<Error> failed;  // compiled once: a refusal is kept
  std::lock_guard lock(mu);
  if (failed) return fail(*failed);
  if (!module) {
    auto m = Module::compile(d, attention_source() + std::string(kernel_text::kAttentionAsync),
                             "hone_attention_async");
    if (!m) {
      failed = m.error();
      return fail(std::move(m).error());
    }
    module = std::make_unique<Module>(std::move(*m));
  }
  return module.get();
}

}  // namespace hone::cuda
