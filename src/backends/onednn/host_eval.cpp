#include "backends/onednn/host_eval.h"

#include <set>

#include "backends/onednn/plan.h"
#include "eval/interpreter.h"

namespace hone::onednn {
namespace {

// Ops that, given integer inputs, stay in the world of shapes and indices.
const std::set<std::string>& host_ops() {
  static const std::set<std::string> k = {"Cast",     "Slice",      "Concat", "Gather", "Unsqueeze",
                                          "Squeeze",  "Add",        "Sub",    "Mul",    "Div",
                                          "Identity", "ReduceProd", "Reshape"};
  return k;
}

bool integer_dtype(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

bool host_node_depth(const Graph& g, const Node& n, int depth);

bool host_value_depth(const Graph& g, ValueId v, int depth) {
  if (v < 0) return true;  // an omitted optional input
  const Value& val = g.value(v);
  if (val.initializer) return integer_dtype(val.initializer->dtype());
  if (val.producer < 0 || (val.dtype != DType::kUndefined && !integer_dtype(val.dtype)))
    return false;
  return host_node_depth(g, g.node(val.producer), depth + 1);
}

bool host_node_depth(const Graph& g, const Node& n, int depth) {
  // Shape chains are short; the bound keeps a pathological graph cheap.
  if (depth > 16 || (!n.domain.empty() && n.domain != "ai.onnx")) return false;
  if (n.op_type == "Shape" || n.op_type == "Size")
    return !n.inputs.empty() && n.inputs[0] >= 0 && n.outputs.size() == 1;
  if (!host_ops().count(n.op_type)) return false;
  // Builders leave intermediates' dtypes undefined; these ops keep their
  // inputs' integer type, except Cast, whose target is checked instead.
  for (ValueId out : n.outputs)
    if (out >= 0 && g.value(out).dtype != DType::kUndefined && !integer_dtype(g.value(out).dtype))
      return false;
  if (n.op_type == "Cast" && n.attr_int("to", 0) != 6 && n.attr_int("to", 0) != 7)
    return false;  // ONNX TensorProto: 6 = INT32, 7 = INT64
  for (ValueId in : n.inputs)
    if (!host_value_depth(g, in, depth)) return false;
  return true;
}

}  // namespace

bool host_node(const Graph& g, const Node& n) {
  return host_node_depth(g, n, 0);
}

bool host_value(const Graph& g, ValueId v) {
  return host_value_depth(g, v, 0);
}

Result<void> lower_host(PlanBuilder& b, const Node& n) {
  const Graph& g = b.graph();
  if (n.op_type == "Shape" || n.op_type == "Size") {
    const dims_t dims = b.value(n.inputs[0]).dims;
    if (n.op_type == "Size") {
      b.set_host(n.outputs[0], Tensor::from<int64_t>({}, {shape_numel(dims)}));
      return {};
    }
    // Opset 15's start/end select a range of dims, clamped as the spec says.
    const auto rank = static_cast<int64_t>(dims.size());
    auto clamp = [&](int64_t i) {
      if (i < 0) i += rank;
      return std::clamp<int64_t>(i, 0, rank);
    };
    const int64_t start = clamp(n.attr_int("start", 0)), end = clamp(n.attr_int("end", rank));
    const dims_t part(dims.begin() + start, dims.begin() + std::max(start, end));
    b.set_host(n.outputs[0], Tensor::from<int64_t>({static_cast<int64_t>(part.size())}, part));
    return {};
  }
  // Everything else: the node alone, on the reference, with its inputs as initializers.
  Graph one("host");
  one.opsets() = g.opsets();
  Node copy = n;
  for (ValueId& v : copy.inputs) {
    if (v < 0) continue;
    const Tensor* t = b.constant(v);
    if (t == nullptr)
      return fail(ErrorCode::kInternal, "input '" + g.value(v).name + "' of host node " +
                                            n.describe() + " is not known at plan time");
    Value c;
    c.name = g.value(v).name;
    c.initializer = *t;
    c.dtype = t->dtype();
    c.shape = Shape::of(t->shape());
    v = one.add_value(std::move(c));
  }
  for (ValueId& v : copy.outputs) {
    if (v < 0) continue;
    Value c;
    c.name = g.value(v).name;
    c.dtype = g.value(v).dtype;
    v = one.add_value(std::move(c));
    one.add_output(v);
  }
  one.add_node_with_outputs(std::move(copy));
  HONE_TRY(std::vector<Tensor> outs, eval::Interpreter().run_tensors(one, {}));
  size_t k = 0;
  for (ValueId v : n.outputs) {
    if (v < 0) continue;
    if (!integer_dtype(outs[k].dtype()))
      return fail(ErrorCode::kUnsupported, "host node " + n.describe() + " produced " +
                                               std::string(dtype_name(outs[k].dtype())) +
                                               ", not an integer tensor");
    b.set_host(v, std::move(outs[k++]));
  }
  return {};
}

}  // namespace hone::onednn
