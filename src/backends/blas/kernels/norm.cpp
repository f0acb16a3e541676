#include "backends/blas/kernels/norm.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hone::blas::kernels {

void softmax(int64_t outer, int64_t axis, int64_t inner, bool log, const float* x, float* y,
             ThreadPool& pool) {
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(axis, 1));
  pool.parallel_for(
      outer * inner,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t o = r / inner, i = r % inner;
          const float* src = x + o * axis * inner + i;
          float* dst = y + o * axis * inner + i;
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t a = 0; a < axis; ++a) m = std::max(m, src[a * inner]);
          double sum = 0.0;
          for (int64_t a = 0; a < axis; ++a) {
            const double v = std::exp(static_cast<double>(src[a * inner]) - m);
            if (!log) dst[a * inner] = static_cast<float>(v);
            sum += v;
          }
          if (log) {
            const double ls = std::log(sum);
            for (int64_t a = 0; a < axis; ++a)
              dst[a * inner] = static_cast<float>(static_cast<double>(src[a * inner]) - m - ls);
          } else {
            const double inv = 1.0 / sum;
            for (int64_t a = 0; a < axis; ++a)
              dst[a * inner] = static_cast<float>(dst[a * inner] * inv);
          }
        }
      },
      grain);
}

void layer_norm(int64_t rows, int64_t size, float eps, const float* x, const float* scale,
                const float* bias, float* y, ThreadPool& pool) {
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(size, 1));
  pool.parallel_for(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const float* src = x + r * size;
          float* dst = y + r * size;
          double sum = 0.0;
          for (int64_t i = 0; i < size; ++i) sum += src[i];
          const double mean = sum / static_cast<double>(size);
          double sq = 0.0;
          for (int64_t i = 0; i < size; ++i) {
            const double d = src[i] - mean;
            sq += d * d;
          }
          const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + eps);
          for (int64_t i = 0; i < size; ++i) {
            const double v = (src[i] - mean) * inv * scale[i] + (bias ? bias[i] : 0.0f);
            dst[i] = static_cast<float>(v);
          }
        }
      },
      grain);
}

void reduce(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
            ops::ReduceKind kind, const float* x, float* y, ThreadPool& pool) {
  // Split the dims into kept (output) and reduced ones, with input strides.
  const size_t r = dims.size();
  std::vector<int64_t> stride(r, 1);
  for (size_t i = r; i-- > 1;) stride[i - 1] = stride[i] * dims[i];
  std::vector<int64_t> kd, ks, rd, rs;
  for (size_t i = 0; i < r; ++i) {
    (reduced[i] ? rd : kd).push_back(dims[i]);
    (reduced[i] ? rs : ks).push_back(stride[i]);
  }
  int64_t out_n = 1, red_n = 1;
  for (int64_t d : kd) out_n *= d;
  for (int64_t d : rd) red_n *= d;
  const bool sum = kind == ops::ReduceKind::kSum || kind == ops::ReduceKind::kMean;
  // The other kinds read the reduced values by offset, in ops::reduce_f64
  // (the reference's formulas: NaN propagated by Max/Min, the identities of
  // an empty set), which may pass over them twice (LogSumExp).
  std::vector<int64_t> offsets;
  if (!sum) {
    offsets.resize(static_cast<size_t>(red_n));
    std::vector<int64_t> idx(rd.size(), 0);
    int64_t off = 0;
    for (int64_t t = 0; t < red_n; ++t) {
      offsets[static_cast<size_t>(t)] = off;
      for (size_t k = rd.size(); k-- > 0;) {
        off += rs[k];
        if (++idx[k] < rd[k]) break;
        off -= rs[k] * rd[k];
        idx[k] = 0;
      }
    }
  }
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(red_n, 1));
  pool.parallel_for(
      out_n,
      [&](int64_t b, int64_t e) {
        std::vector<int64_t> idx(rd.size());
        for (int64_t o = b; o < e; ++o) {
          int64_t base = 0, rem = o;
          for (size_t k = kd.size(); k-- > 0;) {
            base += (rem % kd[k]) * ks[k];
            rem /= kd[k];
          }
          if (!sum) {
            const float* at = x + base;
            y[o] = static_cast<float>(ops::reduce_f64(kind, red_n, [&](int64_t t) {
              return static_cast<double>(at[offsets[static_cast<size_t>(t)]]);
            }));
            continue;
          }
          double total = 0.0;
          std::fill(idx.begin(), idx.end(), 0);
          int64_t off = 0;
          for (int64_t t = 0; t < red_n; ++t) {
            total += x[base + off];
            // Odometer over the reduced dims.
            for (size_t k = rd.size(); k-- > 0;) {
              off += rs[k];
              if (++idx[k] < rd[k]) break;
              off -= rs[k] * rd[k];
              idx[k] = 0;
            }
          }
          y[o] = static_cast<float>(
              kind == ops::ReduceKind::kMean ? total / static_cast<double>(red_n) : total);
        }
      },
      grain);
}

}  // namespace hone::blas::kernels
