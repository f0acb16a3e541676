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

namespace {

/// Rows of the output (all axes but the last) split on `pool`; `row(r, offs)`
/// gets each operand's element offset of row r's first element.
template <class Row>
void for_rows(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& strides,
              ThreadPool& pool, Row&& row) {
  const size_t r = out.size();
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  const int64_t inner = r ? out[r - 1] : 1;
  if (n == 0 || inner == 0) return;
  const int64_t rows = n / inner;
  pool.parallel_for(
      rows,
      [&](int64_t b, int64_t e) {
        std::vector<int64_t> offs(strides.size());
        for (int64_t i = b; i < e; ++i) {
          std::fill(offs.begin(), offs.end(), 0);
          int64_t rem = i;
          for (size_t k = r - 1; r > 0 && k-- > 0;) {
            const int64_t at = rem % out[k];
            rem /= out[k];
            for (size_t o = 0; o < strides.size(); ++o) offs[o] += at * strides[o][k];
          }
          row(i, offs);
        }
      },
      std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1)));
}

}  // namespace

void strided_copy(const std::vector<int64_t>& out, const std::vector<int64_t>& strides,
                  const float* x, float* y, ThreadPool& pool) {
  const int64_t inner = out.empty() ? 1 : out.back();
  const int64_t step = out.empty() ? 0 : strides.back();
  for_rows(out, {strides}, pool, [&](int64_t row, const std::vector<int64_t>& offs) {
    const float* src = x + offs[0];
    float* dst = y + row * inner;
    if (step == 1) {
      std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(float));
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * step];
    }
  });
}

void gather_rows(int64_t outer, int64_t dim, int64_t inner, const std::vector<int64_t>& idx,
                 const float* x, float* y, ThreadPool& pool) {
  const auto count = static_cast<int64_t>(idx.size());
  if (inner == 0) return;
  pool.parallel_for(
      outer * count,
      [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / count, j = t % count;
          std::memcpy(y + t * inner, x + (o * dim + idx[static_cast<size_t>(j)]) * inner,
                      static_cast<size_t>(inner) * sizeof(float));
        }
      },
      std::max<int64_t>(1, 8192 / inner));
}

void select(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& strides,
            const uint8_t* cond, const float* x, const float* y, float* dst, ThreadPool& pool) {
  const int64_t inner = out.empty() ? 1 : out.back();
  const int64_t sc = out.empty() ? 0 : strides[0].back(), sx = out.empty() ? 0 : strides[1].back(),
                sy = out.empty() ? 0 : strides[2].back();
  for_rows(out, strides, pool, [&](int64_t row, const std::vector<int64_t>& offs) {
    const uint8_t* c = cond + offs[0];
    const float* a = x + offs[1];
    const float* b = y + offs[2];
    float* d = dst + row * inner;
    for (int64_t i = 0; i < inner; ++i) d[i] = c[i * sc] ? a[i * sx] : b[i * sy];
  });
}

}  // namespace hone::blas::kernels
