// hone::GraphBuilder: write models in C++ without ONNX.
//
//   GraphBuilder b("mlp");
//   auto x = b.input("x", DType::kF32, {Dim::symbol("batch"), 4});
//   auto h = b.relu(b.gemm(x, b.constant("w", w), b.constant("b", bias), {.trans_b = true}));
//   b.output(h, "y");
//   Result<Graph> g = std::move(b).build();       // validates
//
// Every helper is a thin spelling of one ONNX op; `op()` adds any other op.
// Errors (an op with a bad value id, a duplicate name) surface from build().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "hone/graph.h"

namespace hone {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph", int64_t opset = 17);

  ValueId input(std::string name, DType dtype, Shape shape);
  ValueId constant(std::string name, Tensor value);
  /// Marks `v` as a graph output, renaming it to `name` when given.
  void output(ValueId v, std::string name = "");

  /// Any op with one output.
  ValueId op(std::string op_type, std::vector<ValueId> inputs,
             std::map<std::string, Attribute> attrs = {}, std::string name = "");
  /// Any op with `num_outputs` outputs.
  std::vector<ValueId> op_n(std::string op_type, std::vector<ValueId> inputs, int num_outputs,
                            std::map<std::string, Attribute> attrs = {}, std::string name = "");

  // Common ops.
  ValueId add(ValueId a, ValueId b) { return op("Add", {a, b}); }
  ValueId sub(ValueId a, ValueId b) { return op("Sub", {a, b}); }
  ValueId mul(ValueId a, ValueId b) { return op("Mul", {a, b}); }
  ValueId div(ValueId a, ValueId b) { return op("Div", {a, b}); }
  ValueId relu(ValueId x) { return op("Relu", {x}); }
  ValueId sigmoid(ValueId x) { return op("Sigmoid", {x}); }
  ValueId tanh(ValueId x) { return op("Tanh", {x}); }
  ValueId gelu(ValueId x);  // erf form, built from Div/Erf/Add/Mul (opset 17 has no Gelu)
  ValueId matmul(ValueId a, ValueId b) { return op("MatMul", {a, b}); }
  struct GemmOptions {
    bool trans_a = false;
    bool trans_b = false;
    float alpha = 1.0f;
    float beta = 1.0f;
  };
  ValueId gemm(ValueId a, ValueId b, ValueId c, GemmOptions o);
  ValueId gemm(ValueId a, ValueId b, ValueId c) { return gemm(a, b, c, GemmOptions{}); }
  struct ConvOptions {
    std::vector<int64_t> strides{1, 1};
    std::vector<int64_t> pads{0, 0, 0, 0};
    std::vector<int64_t> dilations{1, 1};
    int64_t group = 1;
  };
  ValueId conv(ValueId x, ValueId w, ValueId bias, ConvOptions o);
  ValueId conv(ValueId x, ValueId w, ValueId bias) { return conv(x, w, bias, ConvOptions{}); }
  ValueId max_pool(ValueId x, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                   std::vector<int64_t> pads);
  ValueId global_average_pool(ValueId x) { return op("GlobalAveragePool", {x}); }
  ValueId softmax(ValueId x, int64_t axis = -1) { return op("Softmax", {x}, {{"axis", axis}}); }
  ValueId layer_norm(ValueId x, ValueId scale, ValueId bias, int64_t axis = -1,
                     float epsilon = 1e-5f);
  ValueId transpose(ValueId x, std::vector<int64_t> perm);
  /// Reshape to `shape` (a constant i64 tensor is added for it).
  ValueId reshape(ValueId x, std::vector<int64_t> shape);
  ValueId flatten(ValueId x, int64_t axis = 1) { return op("Flatten", {x}, {{"axis", axis}}); }
  ValueId concat(std::vector<ValueId> xs, int64_t axis) {
    return op("Concat", std::move(xs), {{"axis", axis}});
  }
  ValueId scalar_f32(std::string name, float v) {
    return constant(std::move(name), Tensor::scalar(v));
  }

  Graph& graph() { return graph_; }
  /// Validates and hands over the graph.
  [[nodiscard]] Result<Graph> build() &&;

 private:
  Graph graph_;
  int64_t constants_ = 0;
};

}  // namespace hone
