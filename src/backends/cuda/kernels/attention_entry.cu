// The attention module's entry points (attention_kernels.cpp's
// attention_module compiles attention.cu with this file). attention.cu holds
// only templates and device helpers, so attention_async_module, which joins
// it to attention_async.cu, compiles none of these kernels a second time.

extern "C" __global__ void __launch_bounds__(128) hone_attn_tf32_32(HoneAttn p) { hone_attn_tf32<32, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_tf32_64(HoneAttn p) { hone_attn_tf32<64, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_3xtf32_32(HoneAttn p) { hone_attn_tf32<32, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_3xtf32_64(HoneAttn p) { hone_attn_tf32<64, 1>(p); }
extern "C" __global__ void __launch_bounds__(64) hone_attn_simt_32(HoneAttn p) { hone_attn_simt<32>(p); }
extern "C" __global__ void __launch_bounds__(64) hone_attn_simt_64(HoneAttn p) { hone_attn_simt<64>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_32_bf16(HoneAttn p) { hone_attn_mma<32, 1, 0>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_64_bf16(HoneAttn p) { hone_attn_mma<64, 1, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_128_bf16(HoneAttn p) { hone_attn_mma<128, 1, 0>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_32_f16(HoneAttn p) { hone_attn_mma<32, 0, 0>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_64_f16(HoneAttn p) { hone_attn_mma<64, 0, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_128_f16(HoneAttn p) { hone_attn_mma<128, 0, 0>(p); }
// Q, K, V and O bf16/f16 in memory (half-precision activations, storage.h).
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_32_bf16_hio(HoneAttn p) { hone_attn_mma<32, 1, 1>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_64_bf16_hio(HoneAttn p) { hone_attn_mma<64, 1, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_128_bf16_hio(HoneAttn p) { hone_attn_mma<128, 1, 1>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_32_f16_hio(HoneAttn p) { hone_attn_mma<32, 0, 1>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_64_f16_hio(HoneAttn p) { hone_attn_mma<64, 0, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_128_f16_hio(HoneAttn p) { hone_attn_mma<128, 0, 1>(p); }
