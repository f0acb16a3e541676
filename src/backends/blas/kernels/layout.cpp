#include "backends/blas/kernels/layout.h"

#include <algorithm>
#include <cstring>

namespace hone::blas::kernels {

void transpose(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, const float* x,
               float* y, ThreadPool& pool) {
  const size_t r = dims.size();
  std::vector<int64_t> in_stride(r, 1);
  for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * dims[i];
  std::vector<int64_t> od(r), os(r);  // output dims and the input stride of each
  for (size_t i = 0; i < r; ++i) {
    od[i] = dims[static_cast<size_t>(perm[i])];
    os[i] = in_stride[static_cast<size_t>(perm[i])];
  }
  int64_t n = 1;
  for (int64_t d : od) n *= d;
  const int64_t inner = r ? od[r - 1] : 1;
  const int64_t inner_stride = r ? os[r - 1] : 1;
  const int64_t rows = inner ? n / inner : 0;
  pool.parallel_for(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t src = 0, rem = row;
          for (size_t k = r - 1; k-- > 0;) {
            src += (rem % od[k]) * os[k];
            rem /= od[k];
          }
          float* dst = y + row * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] = x[src + i * inner_stride];
        }
      },
      std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1)));
}

void concat(int64_t outer, const std::vector<int64_t>& inner, const std::vector<const float*>& xs,
            float* y, ThreadPool& pool) {
  int64_t total = 0;
  for (int64_t i : inner) total += i;
  pool.parallel_for(
      outer,
      [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          float* dst = y + o * total;
          for (size_t k = 0; k < xs.size(); ++k) {
            if (inner[k] > 0)
              std::memcpy(dst, xs[k] + o * inner[k], static_cast<size_t>(inner[k]) * sizeof(float));
            dst += inner[k];
          }
        }
      },
      std::max<int64_t>(1, 8192 / std::max<int64_t>(total, 1)));
}

}  // namespace hone::blas::kernels
