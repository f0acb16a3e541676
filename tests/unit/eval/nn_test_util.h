// Test helpers for the nn family of reference kernels: run one op through a
// GraphBuilder graph and the reference Interpreter, compare with tolerance,
// and a few deliberately naive loops used as independent oracles.
//
//   auto y = nn_test::run1("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
//   ASSERT_TRUE(y) << y.error().to_string();
//   nn_test::expect_near(*y, expected, 1e-5);
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "hone/graph_builder.h"
#include "hone/half.h"
#include "one_op_test_util.h"

namespace hone::nn_test {

inline Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::from<float>(std::move(shape), values);
}
inline Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Tensor::from<int64_t>(std::move(shape), values);
}
inline Tensor iota(std::vector<int64_t> shape, float start = 0.0f) {
  Tensor x = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = start + static_cast<float>(i);
  return x;
}
inline Tensor random(std::vector<int64_t> shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor x = Tensor::zeros(DType::kF32, std::move(shape));
  for (float& v : x.span<float>()) v = dist(rng);
  return x;
}
inline std::vector<float> values(const Tensor& x) {
  return std::vector<float>(x.data<float>(), x.data<float>() + x.numel());
}
using Ints = std::vector<int64_t>;

using eval_test::run;
using eval_test::run1;

inline void expect_near(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape()) << got.describe() << " vs " << want.describe();
  ASSERT_EQ(got.dtype(), want.dtype());
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], tol) << "at element " << i;
}

inline void expect_values(const Tensor& got, Ints shape, const std::vector<float>& want,
                          double tol = 1e-5) {
  expect_near(got, f32(std::move(shape), want), tol);
}

/// True when `r` failed with `code` and its text contains `needle`.
inline bool fails_with(const Result<Tensor>& r, ErrorCode code, const std::string& needle) {
  return !r && r.error().code() == code && r.error().to_string().find(needle) != std::string::npos;
}

/// Naive 2-D convolution with explicit pads (oracle for the row-based kernel).
inline Tensor naive_conv2d(const Tensor& x, const Tensor& w, const std::vector<float>& bias,
                           Ints strides, Ints pads, Ints dil, int64_t group) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t m = w.dim(0), cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  const int64_t oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / strides[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / strides[1] + 1;
  Tensor y = Tensor::zeros(DType::kF32, {n, m, oh, ow});
  const int64_t mg = m / group;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0.0 : bias[oc];
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t q = 0; q < kw; ++q) {
                const int64_t yy = i * strides[0] + a * dil[0] - pads[0];
                const int64_t xx = j * strides[1] + q * dil[1] - pads[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                const int64_t chan = (oc / mg) * cg + ic;
                acc += static_cast<double>(x.data<float>()[((b * c + chan) * h + yy) * wd + xx]) *
                       w.data<float>()[((oc * cg + ic) * kh + a) * kw + q];
              }
          y.data<float>()[((b * m + oc) * oh + i) * ow + j] = static_cast<float>(acc);
        }
  return y;
}

}  // namespace hone::nn_test
