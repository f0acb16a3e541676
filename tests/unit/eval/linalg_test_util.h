// Test helpers for the linalg and reduce families of reference kernels: run
// one op on tensors through a GraphBuilder graph and the reference Interpreter.
//
//   auto y = lr_test::run1("MatMul", {a, b});
//   ASSERT_TRUE(y) << y.error().to_string();
//   lr_test::expect_near(*y, {1, 2, 3}, 1e-6);
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "hone/graph_builder.h"
#include "one_op_test_util.h"

namespace hone::lr_test {

template <class T>
Tensor t(std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::from<T>(std::move(shape), values);
}
inline Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::from<float>(std::move(shape), values);
}
inline Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Tensor::from<int64_t>(std::move(shape), values);
}
/// 1-D int64 tensor.
inline Tensor ints(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from<int64_t>({n}, values);
}
/// 0, 1, 2, ... (times `scale`) as floats in the given shape.
inline Tensor iota(std::vector<int64_t> shape, float scale = 1.0f) {
  Tensor x = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i) * scale;
  return x;
}

template <class T>
std::vector<T> values(const Tensor& x) {
  std::vector<T> v(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) v[static_cast<size_t>(i)] = x.data<T>()[i];
  return v;
}

using eval_test::run;
using eval_test::run1;

/// Element-wise |got - want| <= tol (NaN matches NaN, inf matches inf).
inline void expect_near(const Tensor& got, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << got.describe();
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = tensor_element_as_double(got, static_cast<int64_t>(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(g, want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(g, want[i], tol) << "at " << i;
    }
  }
}

/// True when the result failed with `code` and its text contains `needle`.
template <class R>
bool fails_with(const R& r, const std::string& needle,
                ErrorCode code = ErrorCode::kInvalidArgument) {
  return !r && r.error().code() == code && r.error().to_string().find(needle) != std::string::npos;
}

}  // namespace hone::lr_test
