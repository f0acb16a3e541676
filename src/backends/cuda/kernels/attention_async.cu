// Appended to attention.cu as an NVRTC program of its own
// (attention_kernels.cpp's attention_async_module), so that this file failing
// to compile on some device leaves the other attention kernels usable.
//
// hone_attn_mma_async_D_{bf16,f16}_hio: the _hio tensor-core kernel (Q, K, V
// and O bf16/f16 in memory) with its K and V tiles staged by cp.async into two
// shared-memory buffers: the copies of key tile j + 1 are in flight while the
// block computes on tile j, and nothing passes through registers. It needs K's
// and V's rows contiguous and 16-byte aligned (`vec` bits 3 and 4); the host
// launches hone_attn_mma_D_*_hio where they are not.
//
// hone_attn_mma_split_D_{bf16,f16}_hio: the same arithmetic split along the
// keys, for few (batch, head) pairs (one image's heads), where 64-row query
// tiles leave most multiprocessors idle: a block takes 16 query rows, its four
// warps take every fourth 32-key tile each (staged by cp.async into a buffer
// of the warp's own), each with its own running softmax, and the four partial
// results are merged through shared memory. Same needs as the async kernel;
// blocks: (batch, head) pairs times ceil(len_q / 16).

__device__ __forceinline__ void hone_cp_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most N of this thread's committed copy groups are pending.
template <int N>
__device__ __forceinline__ void hone_cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// One key tile of KB keys for a warp's 16 query rows, its K and V rows in
// shared memory at the ldmatrix addresses `kaddr` and `vaddr` (as in
// hone_attn_mma_tiles) plus `boff` bytes (the buffer's): S = Q·Kᵀ, the
// running softmax, O += P·V. Of the tile's keys only the first `keys` (> 0)
// are in range; the others are skipped in groups of 8 for the scores (the
// softmax masks them: -inf) and of 16 for P·V (their probabilities are 0).
// `keys` is warp-uniform. The async and the key-split kernel share it.
template <int D, int KB, int BF16>
__device__ __forceinline__ void hone_attn_key_tile(const HoneAttn& p, const HoneAttnAt& at,
                                                   unsigned (*qa)[4], unsigned kaddr,
                                                   unsigned vaddr, unsigned boff, int keys,
                                                   int j0, int r0, bool live0, bool live1,
                                                   float (*acc)[4], float& m0, float& m1,
                                                   float& l0, float& l1) {
  constexpr int S = HONE_ATTN_S(D);
  float s[KB / 8][4];
#pragma unroll
  for (int n = 0; n < KB / 8; ++n) {
    s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    if (n * 8 >= keys) continue;
#pragma unroll
    for (int kc = 0; kc < D / 16; kc += 2) {
      unsigned b[4];
      hone_ldm4<0>(b, kaddr + boff + (unsigned)((n * 8 * S + kc * 16) * 2));
      hone_mma<BF16>(s[n], qa[kc], b[0], b[1]);
      hone_mma<BF16>(s[n], qa[kc + 1], b[2], b[3]);
    }
  }
  hone_attn_softmax_at<D, KB>(p, at, s, acc, j0, r0, live0, live1, m0, m1, l0, l1);
#pragma unroll
  for (int kc = 0; kc < KB / 16; ++kc) {
    if (kc * 16 >= keys) continue;
    unsigned pa[4];
    pa[0] = hone_pack2<BF16>(s[2 * kc][0], s[2 * kc][1]);
    pa[1] = hone_pack2<BF16>(s[2 * kc][2], s[2 * kc][3]);
    pa[2] = hone_pack2<BF16>(s[2 * kc + 1][0], s[2 * kc + 1][1]);
    pa[3] = hone_pack2<BF16>(s[2 * kc + 1][2], s[2 * kc + 1][3]);
#pragma unroll
    for (int n = 0; n < D / 8; n += 2) {
      unsigned b[4];
      hone_ldm4<1>(b, vaddr + boff + (unsigned)((kc * 16 * S + n * 8) * 2));
      hone_mma<BF16>(acc[n], pa, b[0], b[1]);
      hone_mma<BF16>(acc[n + 1], pa, b[2], b[3]);
    }
  }
}

template <int D, int BF16>
__device__ __forceinline__ void hone_attn_mma_async(const HoneAttn& p) {
  constexpr int KB = 64, THREADS = 128, S = HONE_ATTN_S(D);
  constexpr int CPR = D / 8;            // 16-byte chunks per row
  constexpr int RSTEP = THREADS / CPR;  // rows between one thread's chunks
  constexpr int PER = KB / RSTEP;       // chunks of K (and of V) per thread per tile
  constexpr int TILE = KB * S;          // halves per buffer
  __shared__ __align__(16) unsigned short ks[2 * TILE];  // [buffer][key * S + d]
  __shared__ __align__(16) unsigned short vs[2 * TILE];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x / hone_attn_tiles(p));
  const int r0 = (blockIdx.x % hone_attn_tiles(p)) * 64 + warp * 16 + (lane >> 2);
  const bool live0 = r0 < p.len_q, live1 = r0 + 8 < p.len_q;
  const bool warp_live = r0 - (lane >> 2) < p.len_q;  // the warp's first row
  const unsigned short* kg = reinterpret_cast<const unsigned short*>(p.k) + at.k;
  const unsigned short* vg = reinterpret_cast<const unsigned short*>(p.v) + at.v;
  const int jt = tid / CPR, c8 = (tid % CPR) * 8;
  // Key tile j0's K and V rows into buffer `buf`, one commit group; rows
  // past len_k are zero-filled (their scores are masked to -inf anyway).
  auto stage = [&](int buf, int j0) {
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int row = jt + i * RSTEP, key = j0 + row;
      const bool in = key < p.len_k;
      const long long src = in ? key : 0;
      const int dst = buf * TILE + row * S + c8;
      hone_cp16(ks + dst, kg + src * p.k_row + c8, in);
      hone_cp16(vs + dst, vg + src * p.v_row + c8, in);
    }
    hone_cp_commit();
  };
  stage(0, 0);  // the first tile's copies overlap Q's loads
  unsigned qa[D / 16][4];
  hone_attn_q_frags<D, BF16, 1>(p, at, r0, live0, live1, qa);
  // ldmatrix rows as in hone_attn_mma_tiles, in buffer 0.
  const int li = lane >> 3, lr = lane & 7;
  const unsigned kaddr = hone_smem(ks + lr * S + li * 8);
  const unsigned vaddr = hone_smem(vs + ((li & 1) * 8 + lr) * S + (li >> 1) * 8);
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  float m0 = HONE_NEG_INF, m1 = HONE_NEG_INF, l0 = 0.f, l1 = 0.f;
  int buf = 0;
  for (int j0 = 0; j0 < p.len_k; j0 += KB, buf ^= 1) {
    // The next tile into the other buffer (every warp finished reading it
    // at the end of the previous iteration), then wait for this one.
    if (j0 + KB < p.len_k) {
      stage(buf ^ 1, j0 + KB);
      hone_cp_wait<1>();
    } else {
      hone_cp_wait<0>();
    }
    __syncthreads();  // every thread's copies of this tile are visible
    // A warp whose 16 rows are all past len_q (the last query tile's) only
    // helps stage; keys past len_k (the last key tile's) are skipped in
    // groups of 8 for the scores (left to the softmax's mask: -inf) and of 16
    // for P·V (their probabilities are 0). Both conditions are warp-uniform.
    if (!warp_live) {
      __syncthreads();
      continue;
    }
    const int keys = p.len_k - j0;  // keys of this tile in range (> 0)
    const unsigned boff = (unsigned)(buf * TILE * 2);
    hone_attn_key_tile<D, KB, BF16>(p, at, qa, kaddr, vaddr, boff, keys, j0, r0, live0,
                                    live1, acc, m0, m1, l0, l1);
    __syncthreads();  // this buffer is read before the stage() that refills it
  }
  hone_attn_store<D, BF16, 1>(p, at, acc, l0, l1, r0, live0, live1);
}

// The key-split kernel (see the top of this file).
template <int D, int BF16>
__device__ __forceinline__ void hone_attn_mma_split(const HoneAttn& p) {
  constexpr int KB = 32, WARPS = 4, S = HONE_ATTN_S(D);
  constexpr int CPR = D / 8;          // 16-byte chunks per row
  constexpr int RSTEP = 32 / CPR;     // rows between one lane's chunks
  constexpr int PER = KB / RSTEP;     // chunks of K (and of V) per lane per tile
  constexpr int TILE = KB * S;        // halves per warp's buffer
  __shared__ __align__(16) unsigned short ks[WARPS * TILE];  // [warp][key * S + d]
  __shared__ __align__(16) unsigned short vs[WARPS * TILE];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const unsigned tiles = (unsigned)(p.len_q + 15) / 16u;
  const HoneAttnAt at = hone_attn_batch(p, blockIdx.x / tiles);
  const int r0 = (int)(blockIdx.x % tiles) * 16 + g;
  const bool live0 = r0 < p.len_q, live1 = r0 + 8 < p.len_q;
  const unsigned short* kg = reinterpret_cast<const unsigned short*>(p.k) + at.k;
  const unsigned short* vg = reinterpret_cast<const unsigned short*>(p.v) + at.v;
  unsigned short* kw = ks + warp * TILE;
  unsigned short* vw = vs + warp * TILE;
  unsigned qa[D / 16][4];
  hone_attn_q_frags<D, BF16, 1>(p, at, r0, live0, live1, qa);
  const int li = lane >> 3, lr = lane & 7;
  const unsigned kaddr = hone_smem(kw + lr * S + li * 8);
  const unsigned vaddr = hone_smem(vw + ((li & 1) * 8 + lr) * S + (li >> 1) * 8);
  const int jt = lane / CPR, c8 = (lane % CPR) * 8;
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  float m0 = HONE_NEG_INF, m1 = HONE_NEG_INF, l0 = 0.f, l1 = 0.f;
  for (int j0 = warp * KB; j0 < p.len_k; j0 += WARPS * KB) {
    // This warp's tile: rows past len_k zero-filled (their probabilities are
    // 0, and 0 times a stale half could be NaN).
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int row = jt + i * RSTEP, key = j0 + row;
      const bool in = key < p.len_k;
      const long long src = in ? key : 0;
      hone_cp16(kw + row * S + c8, kg + src * p.k_row + c8, in);
      hone_cp16(vw + row * S + c8, vg + src * p.v_row + c8, in);
    }
    hone_cp_commit();
    hone_cp_wait<0>();
    __syncwarp();
    const int keys = p.len_k - j0;  // keys of this tile in range (> 0)
    hone_attn_key_tile<D, KB, BF16>(p, at, qa, kaddr, vaddr, 0u, keys, j0, r0, live0, live1,
                                    acc, m0, m1, l0, l1);
    __syncwarp();  // the tile is read before the next one overwrites it
  }
  // Each warp's rows' sums (its four lanes' parts added), maxima and
  // accumulators into shared memory, over the tiles (all warps are done).
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  __syncthreads();
  float* part = reinterpret_cast<float*>(ks);  // [warp][16 rows][D]
  float* ml = reinterpret_cast<float*>(vs);    // [warp][16 rows][max, sum]
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const int c = n * 8 + 2 * t;
    part[(warp * 16 + g) * D + c] = acc[n][0];
    part[(warp * 16 + g) * D + c + 1] = acc[n][1];
    part[(warp * 16 + g + 8) * D + c] = acc[n][2];
    part[(warp * 16 + g + 8) * D + c + 1] = acc[n][3];
  }
  if (t == 0) {
    ml[(warp * 16 + g) * 2] = m0;
    ml[(warp * 16 + g) * 2 + 1] = l0;
    ml[(warp * 16 + g + 8) * 2] = m1;
    ml[(warp * 16 + g + 8) * 2 + 1] = l1;
  }
  __syncthreads();
  if (warp != 0) return;
  // Warp 0 merges: each part rescaled from its own maximum to the row's (a
  // part that saw no key in range has sum and accumulators 0).
  float c0[WARPS], c1[WARPS];
  float mx0 = HONE_NEG_INF, mx1 = HONE_NEG_INF, sum0 = 0.f, sum1 = 0.f;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    mx0 = fmaxf(mx0, ml[(w * 16 + g) * 2]);
    mx1 = fmaxf(mx1, ml[(w * 16 + g + 8) * 2]);
  }
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    const float a0 = ml[(w * 16 + g) * 2], a1 = ml[(w * 16 + g + 8) * 2];
    c0[w] = a0 == HONE_NEG_INF ? 0.f : hone_exp2(a0 - mx0);
    c1[w] = a1 == HONE_NEG_INF ? 0.f : hone_exp2(a1 - mx1);
    sum0 += c0[w] * ml[(w * 16 + g) * 2 + 1];
    sum1 += c1[w] * ml[(w * 16 + g + 8) * 2 + 1];
  }
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const int c = n * 8 + 2 * t;
    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      acc[n][0] += c0[w] * part[(w * 16 + g) * D + c];
      acc[n][1] += c0[w] * part[(w * 16 + g) * D + c + 1];
      acc[n][2] += c1[w] * part[(w * 16 + g + 8) * D + c];
      acc[n][3] += c1[w] * part[(w * 16 + g + 8) * D + c + 1];
    }
  }
  // hone_attn_store adds its four lanes' sums: each gives a quarter (exact).
  hone_attn_store<D, BF16, 1>(p, at, acc, sum0 * 0.25f, sum1 * 0.25f, r0, live0, live1);
}

extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_async_32_bf16_hio(HoneAttn p) { hone_attn_mma_async<32, 1>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_async_64_bf16_hio(HoneAttn p) { hone_attn_mma_async<64, 1>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_async_32_f16_hio(HoneAttn p) { hone_attn_mma_async<32, 0>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) hone_attn_mma_async_64_f16_hio(HoneAttn p) { hone_attn_mma_async<64, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_split_32_bf16_hio(HoneAttn p) { hone_attn_mma_split<32, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_split_64_bf16_hio(HoneAttn p) { hone_attn_mma_split<64, 1>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_split_32_f16_hio(HoneAttn p) { hone_attn_mma_split<32, 0>(p); }
extern "C" __global__ void __launch_bounds__(128) hone_attn_mma_split_64_f16_hio(HoneAttn p) { hone_attn_mma_split<64, 0>(p); }
