// Helpers for the element-wise kernel tests: build a one-node graph with
// GraphBuilder and run it on the reference interpreter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "eval/kernel_util.h"
#include "hone/graph_builder.h"
#include "one_op_test_util.h"

namespace hone::eval::ew_test {

using eval_test::run;
using eval_test::run1;

template <class T>
Tensor t(std::vector<int64_t> shape, std::vector<T> v) {
  return Tensor::from<T>(std::move(shape), v);
}
inline Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return t<float>(shape, v);
}
inline Tensor f32v(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return t<float>({n}, v);
}

template <class T>
std::vector<T> vals(const Tensor& x) {
  return std::vector<T>(x.data<T>(), x.data<T>() + x.numel());
}

}  // namespace hone::eval::ew_test
