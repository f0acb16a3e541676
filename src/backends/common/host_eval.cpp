#include "backends/common/host_eval.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "eval/interpreter.h"
#include "ops/attrs.h"

namespace hone::host_eval {
namespace {

// Ops that, given integer inputs, stay in the world of shapes and indices.
// ReduceMin and ReduceMax: a count capped by a constant, as torchvision's
// detectors take TopK's K = min(pre_nms_top_n, anchors) from a Concat of both.
const std::set<std::string>& integer_ops() {
  static const std::set<std::string> k = {
      "Cast", "Slice", "Concat",   "Gather",  "Unsqueeze",  "Squeeze",   "Add",      "Sub",
      "Mul",  "Div",   "Identity", "Reshape", "ReduceProd", "ReduceMin", "ReduceMax"};
  return k;
}

// kAnyDtype adds what exporters build masks, scales and broadcast shapes
// with: -1 placeholders (ConstantOfShape, Equal, Where), position ranges
// (Range, comparisons), the 1/sqrt(head dim) of scaled dot-product attention,
// causal masks (Trilu, CumSum), shifted-window masks (ScatterND), relative
// position buckets (Log of a Range), rotary tables (Sin, Cos of a Range), a
// position table resized to the input's patch grid (DINOv2: Resize of a
// constant to sizes computed from the image's dims), an identity matrix of
// the sequence's size (XLNet's torch.eye(qlen) mask: EyeLike).
const std::set<std::string>& any_dtype_ops() {
  static const std::set<std::string> k = [] {
    std::set<std::string> s = integer_ops();
    for (const char* op : {"Mod",
                           "Neg",
                           "Abs",
                           "Min",
                           "Max",
                           "Floor",
                           "Ceil",
                           "Sqrt",
                           "Reciprocal",
                           "Pow",
                           "Equal",
                           "Less",
                           "LessOrEqual",
                           "Greater",
                           "GreaterOrEqual",
                           "Not",
                           "And",
                           "Or",
                           "Where",
                           "Expand",
                           "ConstantOfShape",
                           "Range",
                           "GatherElements",
                           "Tile",
                           "Transpose",
                           "Log",
                           "Exp",
                           "Sin",
                           "Cos",
                           "Sign",
                           "Trilu",
                           "CumSum",
                           "Split",
                           "ScatterND",
                           "ScatterElements",
                           "Resize",
                           "EyeLike"})
      s.insert(op);
    return s;
  }();
  return k;
}

bool integer_dtype(DType t) {
  return t == DType::kI64 || t == DType::kI32;
}

bool allowed_dtype(DType t, Policy p) {
  return p == Policy::kAnyDtype || integer_dtype(t);
}

/// One question's walk up the graph: each node's answer once (a shape
/// subgraph is a DAG whose Shape nodes many paths share: without the memo a
/// walk is exponential in its depth).
struct Walk {
  const Graph& g;
  Policy p;
  std::vector<int8_t> memo;  // per node: -1 unknown, 0 no, 1 yes
  const Known& known;
};

bool host_node_at(Walk& w, const Node& n, int depth);
bool host_node_here(Walk& w, const Node& n, int depth);

bool host_value_at(Walk& w, ValueId v, int depth) {
  if (v < 0) return true;  // an omitted optional input
  const Value& val = w.g.value(v);
  if (val.initializer) return allowed_dtype(val.initializer->dtype(), w.p);
  if (static_cast<size_t>(v) < w.known.size() && w.known[static_cast<size_t>(v)])
    return allowed_dtype(val.dtype, w.p);
  if (val.producer < 0 || (val.dtype != DType::kUndefined && !allowed_dtype(val.dtype, w.p)))
    return false;
  return host_node_at(w, w.g.node(val.producer), depth + 1);
}

bool host_node_at(Walk& w, const Node& n, int depth) {
  const auto id = static_cast<size_t>(&n - w.g.nodes().data());
  const bool in_graph = id < w.memo.size();
  if (in_graph && w.memo[id] >= 0) return w.memo[id] == 1;
  bool ok = host_node_here(w, n, depth);
  if (in_graph) w.memo[id] = ok ? 1 : 0;
  return ok;
}

bool host_node_here(Walk& w, const Node& n, int depth) {
  const Graph& g = w.g;
  const Policy p = w.p;
  // A walk stops at the first op outside the list (every matrix product and
  // activation is), so it stays within one shape subgraph; the bound only
  // keeps a pathological chain off the stack. swin_t's shifted-window mask
  // (ScatterND into zeros, then Equal, Not, Cast, Where) is about 30 deep.
  if (depth > 256 || (!n.domain.empty() && n.domain != "ai.onnx")) return false;
  if (n.op_type == "Shape" || n.op_type == "Size")
    return !n.inputs.empty() && n.inputs[0] >= 0 && n.outputs.size() == 1;
  if (!(p == Policy::kAnyDtype ? any_dtype_ops() : integer_ops()).count(n.op_type)) return false;
  // Builders leave intermediates' dtypes undefined; these ops keep their
  // inputs' integer type, except Cast, whose target is checked instead.
  for (ValueId out : n.outputs)
    if (out >= 0 && g.value(out).dtype != DType::kUndefined &&
        !allowed_dtype(g.value(out).dtype, p))
      return false;
  if (p == Policy::kIntegers && n.op_type == "Cast" && ops::cast_to(n) != 6 && ops::cast_to(n) != 7)
    return false;  // ONNX TensorProto: 6 = INT32, 7 = INT64
  for (ValueId in : n.inputs)
    if (!host_value_at(w, in, depth)) return false;
  return true;
}

Tensor shape_of(const Node& n, const std::vector<int64_t>& dims) {
  if (n.op_type == "Size") {
    int64_t numel = 1;
    for (int64_t d : dims) numel *= d;
    return Tensor::from<int64_t>({}, {numel});
  }
  // Opset 15's start/end select a range of dims, clamped as the spec says.
  const auto [start, end] = ops::shape_range(n, static_cast<int64_t>(dims.size()));
  const std::vector<int64_t> part(dims.begin() + start, dims.begin() + std::max(start, end));
  return Tensor::from<int64_t>({static_cast<int64_t>(part.size())}, part);
}

}  // namespace

bool host_node(const Graph& g, const Node& n, Policy policy, const Known& known) {
  Walk w{g, policy, std::vector<int8_t>(g.nodes().size(), -1), known};
  return host_node_at(w, n, 0);
}

bool host_value(const Graph& g, ValueId v, Policy policy, const Known& known) {
  Walk w{g, policy, std::vector<int8_t>(g.nodes().size(), -1), known};
  return host_value_at(w, v, 0);
}

Result<std::vector<Tensor>> evaluate(const Graph& g, const Node& n, const Env& env) {
  if (n.op_type == "Shape" || n.op_type == "Size") {
    const std::vector<int64_t>* dims = env.dims ? env.dims(n.inputs[0]) : nullptr;
    if (dims == nullptr)
      return fail(ErrorCode::kInternal, "the dims of '" + g.value(n.inputs[0]).name +
                                            "', read by " + n.describe() +
                                            ", are not known at plan time");
    std::vector<Tensor> out;
    out.push_back(shape_of(n, *dims));
    return out;
  }
  // Everything else: the node alone, on the reference, with its inputs as initializers.
  Graph one("host");
  one.opsets() = g.opsets();
  Node copy = n;
  for (ValueId& v : copy.inputs) {
    if (v < 0) continue;
    const Tensor* t = env.value ? env.value(v) : nullptr;
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
  auto outs = eval::Interpreter().run_tensors(one, {});
  if (!outs)
    return fail(
        std::move(outs).error().add_context("while evaluating " + n.describe() + " at plan time"));
  return std::move(*outs);
}

Result<std::vector<int64_t>> ints(const Node& n, size_t i, const Env& env,
                                  const std::string& what) {
  const Tensor* t =
      i < n.inputs.size() && n.inputs[i] >= 0 && env.value ? env.value(n.inputs[i]) : nullptr;
  if (t == nullptr)
    return fail(ErrorCode::kUnsupported,
                n.describe() + ": " + what +
                    " is not known when the plan is built (it is computed outside this block)");
  if (t->dtype() == DType::kI64)
    return std::vector<int64_t>(t->span<int64_t>().begin(), t->span<int64_t>().end());
  if (t->dtype() == DType::kI32)
    return std::vector<int64_t>(t->span<int32_t>().begin(), t->span<int32_t>().end());
  return fail(ErrorCode::kInvalidArgument, n.describe() + ": " + what + " is " +
                                               std::string(dtype_name(t->dtype())) +
                                               ", not an integer tensor");
}

Result<ops::SliceWindow> slice_window(const Node& n, int64_t opset, const std::vector<int64_t>& x,
                                      const Env& env) {
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (opset < 10) {
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    has_axes = n.has_attr("axes");
    if (has_axes) axes = n.attr_ints("axes");
  } else {
    HONE_TRY(starts, ints(n, 1, env, "Slice starts"));
    HONE_TRY(ends, ints(n, 2, env, "Slice ends"));
    has_axes = n.inputs.size() > 3 && n.inputs[3] >= 0;
    has_steps = n.inputs.size() > 4 && n.inputs[4] >= 0;
    if (has_axes) {
      HONE_TRY(axes, ints(n, 3, env, "Slice axes"));
    }
    if (has_steps) {
      HONE_TRY(steps, ints(n, 4, env, "Slice steps"));
    }
  }
  auto w = ops::slice_window(x, std::move(starts), std::move(ends), has_axes ? &axes : nullptr,
                             has_steps ? &steps : nullptr);
  if (!w) return fail(std::move(w).error().add_context("in " + n.describe()));
  return w;
}

Result<ops::SplitParts> split_parts(const Node& n, const std::vector<int64_t>& x, const Env& env) {
  std::vector<int64_t> given;
  const bool has_given = n.inputs.size() > 1 && n.inputs[1] >= 0;
  if (has_given) {
    HONE_TRY(given, ints(n, 1, env, "Split split"));
  }
  auto p = ops::split_parts(n, x, n.outputs.size(), has_given ? &given : nullptr);
  if (!p) return fail(std::move(p).error().add_context("in " + n.describe()));
  return p;
}

Known known_inputs(const Graph& block, const std::function<bool(const Node&, size_t)>& data_slot) {
  const std::vector<bool> dims_only = dims_only_inputs(block);
  Known known(block.values().size(), false);
  std::vector<bool> read_as_data(block.values().size(), false);
  if (data_slot)
    for (const Node& n : block.nodes())
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (n.inputs[i] >= 0 && data_slot(n, i))
          read_as_data[static_cast<size_t>(n.inputs[i])] = true;
  for (size_t i = 0; i < block.inputs().size(); ++i) {
    const auto v = static_cast<size_t>(block.inputs()[i]);
    const DType t = block.value(block.inputs()[i]).dtype;
    known[v] = !dims_only[i] && !read_as_data[v] && (integer_dtype(t) || t == DType::kBool);
  }
  return known;
}

std::vector<bool> dims_only_inputs(const Graph& block) {
  std::vector<bool> only(block.values().size(), true);
  for (const Node& n : block.nodes())
    if (n.op_type != "Shape" && n.op_type != "Size")
      for (ValueId v : n.inputs)
        if (v >= 0) only[static_cast<size_t>(v)] = false;
  for (ValueId v : block.outputs()) only[static_cast<size_t>(v)] = false;
  std::vector<bool> out;
  for (ValueId v : block.inputs()) out.push_back(only[static_cast<size_t>(v)]);
  return out;
}

}  // namespace hone::host_eval
