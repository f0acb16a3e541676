#include "backends/blas/kernels/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "eval/openblas.h"

namespace hone::blas::kernels {
namespace {

blasint to_blas(int64_t v) {
  return static_cast<blasint>(v);
}

}  // namespace

std::string_view openblas_variant() {
  return eval::openblas_variant();
}

std::string openblas_version() {
  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64"
  std::istringstream words(openblas_get_config());
  std::string name, version;
  words >> name >> version;
  return version.empty() ? std::string("unknown") : version;
}

void pin_openblas_single_thread() {
  eval::pin_openblas_single_thread();
}

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // BLAS leaves C untouched for k = 0 only when beta = 1; spell it out.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  pin_openblas_single_thread();
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, to_blas(m), to_blas(n), to_blas(k), alpha, a,
              to_blas(lda), b, to_blas(ldb), beta, c, to_blas(ldc));
}

int64_t gemm_row_blocks(int64_t m, int64_t n, int64_t k, int threads) {
  // Below ~256k multiply-adds per block the hand-off costs more than it saves.
  constexpr int64_t kMinWork = 1 << 18;
  const int64_t work = m * n * std::max<int64_t>(k, 1);
  const int64_t by_work = std::max<int64_t>(1, work / kMinWork);
  const int64_t by_rows = std::max<int64_t>(1, m / 4);
  return std::min<int64_t>({threads, by_work, by_rows});
}

void sgemm_rows(ThreadPool& pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                float* c, int64_t ldc, const RowsDone* done) {
  const int64_t blocks = gemm_row_blocks(m, n, k, pool.num_threads());
  const int64_t rows = (m + blocks - 1) / blocks;
  pool.parallel_for(blocks, [&](int64_t bb, int64_t be) {
    for (int64_t blk = bb; blk < be; ++blk) {
      const int64_t r0 = blk * rows, r1 = std::min(m, r0 + rows);
      if (r0 >= r1) continue;
      // Row r of op(A) starts at a + r*lda untransposed, at a + r transposed.
      const float* a0 = trans_a ? a + r0 : a + r0 * lda;
      sgemm(trans_a, trans_b, r1 - r0, n, k, alpha, a0, lda, b, ldb, beta, c + r0 * ldc, ldc);
      if (done != nullptr && *done) (*done)(r0, r1);
    }
  });
}

}  // namespace hone::blas::kernels
