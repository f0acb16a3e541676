// Runs one op on tensors through a GraphBuilder graph and the reference
// Interpreter: the step every family of reference-kernel tests shares
// (linalg_test_util.h, nn_test_util.h, shape_test_util.h,
// elementwise_test_util.h bring it into their namespaces).
//
//   auto y = eval_test::run1("MatMul", {a, b});
//   ASSERT_TRUE(y) << y.error().to_string();
//   auto outs = eval_test::run("Split", {x}, {{"axis", int64_t{0}}}, /*num_outputs=*/2);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::eval_test {

/// Runs `op` with `inputs` as graph inputs (an undefined Tensor() leaves
/// that input out) at `opset`; returns all `num_outputs` outputs, or the
/// builder's or the interpreter's error.
inline Result<std::vector<Tensor>> run(const std::string& op, const std::vector<Tensor>& inputs,
                                       std::map<std::string, Attribute> attrs = {},
                                       int num_outputs = 1, int64_t opset = 17) {
  GraphBuilder b("one_op", opset);
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

}  // namespace hone::eval_test
