// Helpers for the element-wise kernel tests: build a one-node graph with
// GraphBuilder and run it on the reference interpreter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "eval/kernel_util.h"
#include "hone/graph_builder.h"

namespace hone::eval::ew_test {

/// Runs `op` on `inputs` (an undefined Tensor() marks an omitted optional
/// input) and returns its `num_outputs` outputs.
inline Result<std::vector<Tensor>> run_op(const std::string& op, const std::vector<Tensor>& inputs,
                                          std::map<std::string, Attribute> attrs = {},
                                          int num_outputs = 1, int64_t opset = 17) {
  GraphBuilder b("t", opset);
  std::vector<ValueId> ids;
  std::vector<Tensor> given;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(
        b.input("in" + std::to_string(i), inputs[i].dtype(), Shape::of(inputs[i].shape())));
    given.push_back(inputs[i]);
  }
  std::vector<ValueId> outs = b.op_n(op, ids, num_outputs, std::move(attrs), "node");
  for (int i = 0; i < num_outputs; ++i) b.output(outs[i], "out" + std::to_string(i));
  HONE_TRY(Graph g, std::move(b).build());
  return Interpreter().run_tensors(g, given);
}

/// Single-output convenience.
inline Result<Tensor> run1(const std::string& op, const std::vector<Tensor>& inputs,
                           std::map<std::string, Attribute> attrs = {}, int64_t opset = 17) {
  HONE_TRY(std::vector<Tensor> outs, run_op(op, inputs, std::move(attrs), 1, opset));
  return outs[0];
}

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
