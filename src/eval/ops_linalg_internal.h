// Private to the linalg family (ops_linalg*.cpp): the per-part registration
// functions and the matmul core they share.
//
//   std::vector<double> a = load_acc<double>(A), b = load_acc<double>(B);
//   matmul_batched<double>(pool, batch, M, K, N, a_off, b_off, a.data(), b.data(), c.data());
//   store_acc(c, out);
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "eval/kernel.h"
#include "eval/kernel_util.h"
#include "eval/openblas.h"

namespace hone::eval {

void register_linalg_einsum_ops(OpRegistry& r);  // Einsum
void register_linalg_quant_ops(OpRegistry& r);   // MatMulInteger, QLinearMatMul
void register_linalg_signal_ops(OpRegistry& r);  // DFT, STFT, MelWeightMatrix, windows

/// Shapes of a MatMul-style product: A [..., M, K] · B [..., K, N] with 1-D
/// operands promoted (and the promoted dims dropped from `out_shape`) and the
/// batch dims broadcast. `a_off`/`b_off` give each output batch's element
/// offset into A and B.
struct MatMulPlan {
  int64_t batch = 1, M = 0, K = 0, N = 0;
  std::vector<int64_t> out_shape;                   // final output shape
  std::vector<int64_t> out_full_shape;              // batch + [M, N] before dropping promoted dims
  std::vector<int64_t> a_full_shape, b_full_shape;  // after 1-D promotion
  std::vector<int64_t> a_off, b_off;
};
[[nodiscard]] Result<MatMulPlan> plan_matmul(const std::vector<int64_t>& a_shape,
                                             const std::vector<int64_t>& b_shape);

/// Accumulator of the reference math: double for floats; for integers
/// uint64_t, whose wrapping arithmetic gives the exact low bits of the
/// two's-complement result without signed-overflow UB.
template <class T>
using AccOf = std::conditional_t<kIsFloat<T>, double, uint64_t>;

template <class Acc, class T>
inline Acc to_acc(T v) {
  if constexpr (std::is_same_v<Acc, double>)
    return to_f64(v);
  else if constexpr (std::is_signed_v<T>)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    return static_cast<uint64_t>(v);
}

template <class T, class Acc>
inline T from_acc(Acc v) {
  if constexpr (std::is_same_v<Acc, double>)
    return from_f64<T>(v);
  else
    return static_cast<T>(v);  // modular, as C++20 defines it
}

/// All elements of `t` (whose element type is T) as accumulators, converted
/// on `pool` (a large copy's buffer from the block cache).
template <class Acc, class T>
HostVector<Acc> load_acc_as(ThreadPool& pool, const Tensor& t) {
  HostVector<Acc> out(static_cast<size_t>(t.numel()));
  const T* p = t.data<T>();
  pool.parallel_for(
      t.numel(),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] = to_acc<Acc>(p[i]);
      },
      int64_t{1} << 16);
  return out;
}

/// Rows [r0, r1) of c[M×N] = a[M×K] · b[K×N] (row-major, contiguous). Tiles
/// of 4 rows × 256 columns keep the accumulators in L1 and reuse each
/// streamed row of b four times.
template <class Acc>
void matmul_rows(const Acc* a, const Acc* b, Acc* c, int64_t r0, int64_t r1, int64_t K, int64_t N) {
  constexpr int64_t kRows = 4, kCols = 256;
  for (int64_t i0 = r0; i0 < r1; i0 += kRows) {
    const int64_t i1 = std::min(i0 + kRows, r1);
    for (int64_t j0 = 0; j0 < N; j0 += kCols) {
      const int64_t j1 = std::min(j0 + kCols, N);
      for (int64_t i = i0; i < i1; ++i) std::fill(c + i * N + j0, c + i * N + j1, Acc{0});
      for (int64_t k = 0; k < K; ++k) {
        const Acc* brow = b + k * N;
        for (int64_t i = i0; i < i1; ++i) {
          const Acc av = a[i * K + k];
          Acc* crow = c + i * N;
          for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
        }
      }
    }
  }
}

/// Whether M, K and N fit BLAS's int dims.
inline bool fits_blas(int64_t M, int64_t K, int64_t N) {
  constexpr int64_t kMax = 0x7fffffff;
  return M <= kMax && K <= kMax && N <= kMax;
}

/// For each batch index bi: c[bi] = a[a_off[bi]] · b[b_off[bi]], with c
/// contiguous (batch × M × N). Work is split over (batch, 4-row tile) pairs.
template <class Acc>
void matmul_batched(ThreadPool& pool, int64_t batch, int64_t M, int64_t K, int64_t N,
                    const std::vector<int64_t>& a_off, const std::vector<int64_t>& b_off,
                    const Acc* a, const Acc* b, Acc* c) {
  if (batch == 0 || M == 0 || N == 0) return;
  if constexpr (std::is_same_v<Acc, double>) {  // every float type's products: OpenBLAS
    if (batch * M * K * N >= 4096 && fits_blas(M, K, N)) {
      dgemm_batched(pool, batch, M, K, N, a_off, b_off, a, b, c);
      return;
    }
  }
  const int64_t tiles = (M + 3) / 4;
  const int64_t work_per_task = 4 * std::max<int64_t>(K, 1) * N;
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(work_per_task, 1));
  pool.parallel_for(
      batch * tiles,
      [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t bi = t / tiles, tile = t % tiles;
          const int64_t r0 = tile * 4, r1 = std::min(r0 + 4, M);
          matmul_rows(a + a_off[bi], b + b_off[bi], c + bi * M * N, r0, r1, K, N);
        }
      },
      grain);
}

}  // namespace hone::eval
