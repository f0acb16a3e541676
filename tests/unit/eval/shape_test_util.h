// Test helpers for the shape family of reference kernels: run one op on
// tensors through a GraphBuilder graph and the reference Interpreter.
//
//   auto outs = shape_test::run("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}});
//   ASSERT_TRUE(outs) << outs.error().to_string();
//   EXPECT_EQ(shape_test::values<float>((*outs)[0]), (std::vector<float>{...}));
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "hone/graph_builder.h"
#include "hone/half.h"
#include "one_op_test_util.h"

namespace hone::shape_test {

/// A tensor from a shape and values: t<float>({2, 2}, {1, 2, 3, 4}).
template <class T>
Tensor t(std::vector<int64_t> shape, std::vector<T> values) {
  return Tensor::from<T>(std::move(shape), values);
}
inline Tensor i64(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from<int64_t>({n}, values);
}
inline Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::from<float>(std::move(shape), values);
}
/// 0, 1, 2, ... as floats in the given shape.
inline Tensor iota_f32(std::vector<int64_t> shape) {
  Tensor x = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i);
  return x;
}

template <class T>
std::vector<T> values(const Tensor& x) {
  std::vector<T> v(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) v[i] = x.data<T>()[i];
  return v;
}

using eval_test::run;
using eval_test::run1;

/// True when running fails with kInvalidArgument and the message contains `needle`.
inline bool fails_with(const Result<Tensor>& r, const std::string& needle) {
  return !r && r.error().code() == ErrorCode::kInvalidArgument &&
         r.error().to_string().find(needle) != std::string::npos;
}

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

}  // namespace hone::shape_test
