#include "eval/openblas.h"

#include <cblas.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <mutex>

namespace hone::eval {
namespace {

// openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP.
int parallel_kind() {
  static const int kind = openblas_get_parallel();
  return kind;
}

}  // namespace

std::string_view openblas_variant() {
  switch (parallel_kind()) {
    case 0:
      return "sequential";
    case 1:
      return "pthreads";
    default:
      return "openmp";
  }
}

std::string_view openblas_core() {
  const char* c = openblas_get_corename();
  return c != nullptr ? std::string_view(c) : std::string_view();
}

std::string better_openblas_core(std::string_view core, bool avx2_fma, bool avx512) {
  std::string lower(core);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // Kernel sets older than AVX2 (x86-64 only; other architectures never match).
  static constexpr std::string_view kOld[] = {
      "prescott", "core2",  "penryn",    "dunnington", "nehalem",     "atom",
      "banias",   "katmai", "northwood", "coppermine", "sandybridge", "unknown"};
  const bool old = std::find(std::begin(kOld), std::end(kOld), lower) != std::end(kOld);
  if (!old) return {};
  if (avx512) return "SkylakeX";
  if (avx2_fma) return "Haswell";
  return {};
}

std::string better_openblas_core_here() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
  return better_openblas_core(openblas_core(), avx2_fma, avx512);
#else
  return {};
#endif
}

void pin_openblas_single_thread() {
  if (parallel_kind() == 1) {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
  } else if (parallel_kind() == 2) {
    // The OpenMP build sets omp_set_num_threads for the calling thread only.
    thread_local bool pinned = false;
    if (!pinned) {
      openblas_set_num_threads(1);
      pinned = true;
    }
  }
}

void dgemm_batched(ThreadPool& pool, int64_t batch, int64_t M, int64_t K, int64_t N,
                   const std::vector<int64_t>& a_off, const std::vector<int64_t>& b_off,
                   const double* a, const double* b, double* c) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  if (K <= 0) {
    std::fill(c, c + batch * M * N, 0.0);
    return;
  }
  // One B for every batch, the A batches one after another: a single product
  // of batch·M rows (vit's [197, 32, 768] · [768, 2304] is one 6304-row
  // GEMM, not 197 of 32 rows, each packing all of B again).
  bool stacked = batch > 1;
  for (int64_t bi = 1; bi < batch && stacked; ++bi) {
    const auto u = static_cast<size_t>(bi);
    stacked = b_off[u] == b_off[0] && a_off[u] == a_off[0] + bi * M * K;
  }
  if (stacked) {
    dgemm_batched(pool, 1, batch * M, K, N, {a_off[0]}, {b_off[0]}, a, b, c);
    return;
  }
  // Blocks of rows big enough that a call's set-up is noise (64k multiply-
  // adds or more), at least four blocks a thread where the rows allow.
  const int64_t threads = std::max(1, pool.num_threads());
  const int64_t by_work = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(K * N, 1));
  const int64_t want = std::max<int64_t>(1, (4 * threads + batch - 1) / batch);
  const int64_t rows = std::clamp<int64_t>((M + want - 1) / want, std::min(by_work, M), M);
  const int64_t per = (M + rows - 1) / rows;
  pool.parallel_for(batch * per, [&](int64_t t0, int64_t t1) {
    pin_openblas_single_thread();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bi = t / per, r0 = (t % per) * rows, r1 = std::min(M, r0 + rows);
      const auto u = static_cast<size_t>(bi);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(r1 - r0),
                  static_cast<blasint>(N), static_cast<blasint>(K), 1.0, a + a_off[u] + r0 * K,
                  static_cast<blasint>(K), b + b_off[u], static_cast<blasint>(N), 0.0,
                  c + bi * M * N + r0 * N, static_cast<blasint>(N));
    }
  });
}

}  // namespace hone::eval
