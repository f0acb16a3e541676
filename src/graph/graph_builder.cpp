#include "hone/graph_builder.h"

namespace hone {

GraphBuilder::GraphBuilder(std::string name, int64_t opset) : graph_(std::move(name)) {
  graph_.opsets()[""] = opset;
}

ValueId GraphBuilder::input(std::string name, DType dtype, Shape shape) {
  return graph_.add_input(std::move(name), dtype, std::move(shape));
}

ValueId GraphBuilder::constant(std::string name, Tensor value) {
  if (name.empty()) name = "const_" + std::to_string(constants_++);
  return graph_.add_initializer(std::move(name), std::move(value));
}

void GraphBuilder::output(ValueId v, std::string name) {
  if (!name.empty() && v >= 0 && static_cast<size_t>(v) < graph_.values().size())
    graph_.value(v).name = std::move(name);
  graph_.add_output(v);
}

ValueId GraphBuilder::op(std::string op_type, std::vector<ValueId> inputs,
                         std::map<std::string, Attribute> attrs, std::string name) {
  return graph_.add_node(std::move(op_type), std::move(inputs), 1, std::move(attrs),
                         std::move(name))[0];
}

std::vector<ValueId> GraphBuilder::op_n(std::string op_type, std::vector<ValueId> inputs,
                                        int num_outputs, std::map<std::string, Attribute> attrs,
                                        std::string name) {
  return graph_.add_node(std::move(op_type), std::move(inputs), num_outputs, std::move(attrs),
                         std::move(name));
}

ValueId GraphBuilder::gelu(ValueId x) {
  const ValueId sqrt2 = scalar_f32("", 1.4142135623730951f);
  const ValueId one = scalar_f32("", 1.0f);
  const ValueId half = scalar_f32("", 0.5f);
  const ValueId e = op("Erf", {div(x, sqrt2)});
  return mul(mul(x, add(e, one)), half);
}

ValueId GraphBuilder::gemm(ValueId a, ValueId b, ValueId c, GemmOptions o) {
  std::vector<ValueId> ins{a, b};
  if (c != kNoValue) ins.push_back(c);
  return op("Gemm", std::move(ins),
            {{"transA", int64_t{o.trans_a}},
             {"transB", int64_t{o.trans_b}},
             {"alpha", o.alpha},
             {"beta", o.beta}});
}

ValueId GraphBuilder::conv(ValueId x, ValueId w, ValueId bias, ConvOptions o) {
  std::vector<ValueId> ins{x, w};
  if (bias != kNoValue) ins.push_back(bias);
  return op(
      "Conv", std::move(ins),
      {{"strides", o.strides}, {"pads", o.pads}, {"dilations", o.dilations}, {"group", o.group}});
}

ValueId GraphBuilder::max_pool(ValueId x, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                               std::vector<int64_t> pads) {
  return op("MaxPool", {x},
            {{"kernel_shape", std::move(kernel)},
             {"strides", std::move(strides)},
             {"pads", std::move(pads)}});
}

ValueId GraphBuilder::layer_norm(ValueId x, ValueId scale, ValueId bias, int64_t axis,
                                 float epsilon) {
  std::vector<ValueId> ins{x, scale};
  if (bias != kNoValue) ins.push_back(bias);
  return op("LayerNormalization", std::move(ins), {{"axis", axis}, {"epsilon", epsilon}});
}

ValueId GraphBuilder::transpose(ValueId x, std::vector<int64_t> perm) {
  return op("Transpose", {x}, {{"perm", std::move(perm)}});
}

ValueId GraphBuilder::reshape(ValueId x, std::vector<int64_t> shape) {
  const auto n = static_cast<int64_t>(shape.size());
  const ValueId s = constant("", Tensor::from<int64_t>({n}, shape));
  return op("Reshape", {x, s});
}

Result<Graph> GraphBuilder::build() && {
  HONE_CHECK_OK(graph_.validate());
  return std::move(graph_);
}

}  // namespace hone
