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

/// Runs `op` with `inputs` (an undefined Tensor() leaves that input out) as
/// graph inputs; returns all `num_outputs` outputs.
inline Result<std::vector<Tensor>> run(const std::string& op, const std::vector<Tensor>& inputs,
                                       std::map<std::string, Attribute> attrs = {},
                                       int num_outputs = 1, int64_t opset = 17) {
  GraphBuilder b("shape_test", opset);
  std::vector<ValueId> ins;
  std::vector<Tensor> feed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      ins.push_back(kNoValue);
      continue;
    }
    ins.push_back(
        b.input("in" + std::to_string(i), inputs[i].dtype(), Shape::of(inputs[i].shape())));
    feed.push_back(inputs[i]);
  }
  std::vector<ValueId> outs = b.op_n(op, ins, num_outputs, std::move(attrs), "node");
  for (size_t i = 0; i < outs.size(); ++i) b.output(outs[i], "out" + std::to_string(i));
  HONE_TRY(Graph g, std::move(b).build());
  return eval::Interpreter().run_tensors(g, feed);
}

/// Runs a one-output op and returns that output.
inline Result<Tensor> run1(const std::string& op, const std::vector<Tensor>& inputs,
                           std::map<std::string, Attribute> attrs = {}, int64_t opset = 17) {
  HONE_TRY(std::vector<Tensor> outs, run(op, inputs, std::move(attrs), 1, opset));
  return outs[0];
}

/// True when running fails with kInvalidArgument and the message contains `needle`.
inline bool fails_with(const Result<Tensor>& r, const std::string& needle) {
  return !r && r.error().code() == ErrorCode::kInvalidArgument &&
         r.error().to_string().find(needle) != std::string::npos;
}

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

}  // namespace hone::shape_test
