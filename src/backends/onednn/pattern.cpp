#include "backends/onednn/pattern.h"
#include "ops/attrs.h"

#include <cmath>

namespace hone::onednn {
namespace {

bool is_scalar_const(const Graph& g, ValueId v, float want) {
  if (v < 0) return false;
  const Value& val = g.value(v);
  if (!val.initializer || val.initializer->dtype() != DType::kF32 || val.initializer->numel() != 1)
    return false;
  return std::abs(val.initializer->data<float>()[0] - want) <=
         1e-6f * std::max(1.0f, std::abs(want));
}

/// The only node reading `v`, when `v` is no graph output; else nullptr.
const Node* sole_reader(const Graph& g, ValueId v) {
  for (ValueId o : g.outputs())
    if (o == v) return nullptr;
  const Node* found = nullptr;
  for (const Node& n : g.nodes())
    for (ValueId in : n.inputs)
      if (in == v) {
        if (found != nullptr) return nullptr;
        found = &n;
      }
  return found;
}

/// `n` is op(a, b) with one operand `from` and the other satisfying `other`.
template <class Pred>
bool binary_with(const Node& n, const char* op, ValueId from, Pred other) {
  if (n.op_type != op || n.inputs.size() != 2 || n.outputs.size() != 1 || !n.domain.empty())
    return false;
  if (n.inputs[0] == from) return other(n.inputs[1]);
  if (n.inputs[1] == from) return other(n.inputs[0]);
  return false;
}

/// Every node reading `v`, in graph order.
std::vector<const Node*> readers(const Graph& g, ValueId v) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes())
    for (ValueId in : n.inputs)
      if (in == v) {
        out.push_back(&n);
        break;
      }
  return out;
}

/// Clip(x) with bounds lo and hi, from attributes (before opset 11) or constant inputs.
bool clip_between(const Graph& g, const Node& clip, float lo, float hi) {
  if (clip.op_type != "Clip" || clip.outputs.size() != 1 || !clip.domain.empty()) return false;
  if (clip.inputs.size() == 1)
    return ops::clip_attrs(clip).min == lo && ops::clip_attrs(clip).max == hi;
  return clip.inputs.size() == 3 && is_scalar_const(g, clip.inputs[1], lo) &&
         is_scalar_const(g, clip.inputs[2], hi);
}

/// `y` is no graph output and exactly two nodes read it (`r`): the shape of
/// x · f(x) activations, whose x feeds both the gate and the product.
bool read_by_two(const Graph& g, ValueId y, std::vector<const Node*>* r) {
  if (y < 0) return false;
  for (ValueId o : g.outputs())
    if (o == y) return false;
  *r = readers(g, y);
  return r->size() == 2;
}

}  // namespace

bool match_hardswish(const Graph& g, ValueId y, std::vector<const Node*>* nodes) {
  std::vector<const Node*> r;
  if (!read_by_two(g, y, &r)) return false;
  for (int first = 0; first < 2; ++first) {
    const Node* add = r[static_cast<size_t>(first)];
    const Node* mul = r[static_cast<size_t>(1 - first)];
    if (!binary_with(*add, "Add", y, [&](ValueId v) { return is_scalar_const(g, v, 3.0f); }))
      continue;
    const Node* clip = sole_reader(g, add->outputs[0]);
    if (clip == nullptr || clip->inputs[0] != add->outputs[0] || !clip_between(g, *clip, 0, 6))
      continue;
    if (sole_reader(g, clip->outputs[0]) != mul ||
        !binary_with(*mul, "Mul", y, [&](ValueId v) { return v == clip->outputs[0]; }))
      continue;
    const Node* div = sole_reader(g, mul->outputs[0]);
    if (div == nullptr || div->op_type != "Div" || div->inputs.size() != 2 ||
        div->outputs.size() != 1 || div->inputs[0] != mul->outputs[0] ||
        !is_scalar_const(g, div->inputs[1], 6.0f))
      continue;
    if (nodes != nullptr) *nodes = {add, clip, mul, div};
    return true;
  }
  return false;
}

bool match_swish(const Graph& g, ValueId y, std::vector<const Node*>* nodes) {
  std::vector<const Node*> r;
  if (!read_by_two(g, y, &r)) return false;
  for (int first = 0; first < 2; ++first) {
    const Node* sig = r[static_cast<size_t>(first)];
    const Node* mul = r[static_cast<size_t>(1 - first)];
    if (sig->op_type != "Sigmoid" || !sig->domain.empty() || sig->inputs.size() != 1 ||
        sig->outputs.size() != 1 || sig->outputs[0] < 0)
      continue;
    if (sole_reader(g, sig->outputs[0]) != mul ||
        !binary_with(*mul, "Mul", y, [&](ValueId v) { return v == sig->outputs[0]; }))
      continue;
    if (nodes != nullptr) *nodes = {sig, mul};
    return true;
  }
  return false;
}

bool match_gelu(const Graph& g, const Node& div, std::vector<const Node*>* rest) {
  if (div.op_type != "Div" || div.inputs.size() != 2 || div.outputs.size() != 1) return false;
  const ValueId x = div.inputs[0];
  if (!is_scalar_const(g, div.inputs[1], 1.4142135623730951f)) return false;
  const Node* erf = sole_reader(g, div.outputs[0]);
  if (erf == nullptr || erf->op_type != "Erf" || erf->outputs.size() != 1) return false;
  const Node* add = sole_reader(g, erf->outputs[0]);
  if (add == nullptr || !binary_with(*add, "Add", erf->outputs[0],
                                     [&](ValueId v) { return is_scalar_const(g, v, 1.0f); }))
    return false;
  const Node* mul = sole_reader(g, add->outputs[0]);
  if (mul == nullptr ||
      !binary_with(*mul, "Mul", add->outputs[0], [&](ValueId v) { return v == x; }))
    return false;
  const Node* half = sole_reader(g, mul->outputs[0]);
  if (half == nullptr || !binary_with(*half, "Mul", mul->outputs[0],
                                      [&](ValueId v) { return is_scalar_const(g, v, 0.5f); }))
    return false;
  if (rest != nullptr) *rest = {erf, add, mul, half};
  return true;
}

const Node* gelu_start_of_erf(const Graph& g, const Node& erf) {
  if (erf.inputs.size() != 1 || erf.inputs[0] < 0) return nullptr;
  const NodeId p = g.value(erf.inputs[0]).producer;
  if (p < 0) return nullptr;
  const Node& div = g.node(p);
  std::vector<const Node*> rest;
  return match_gelu(g, div, &rest) && rest[0] == &erf ? &div : nullptr;
}

}  // namespace hone::onednn
