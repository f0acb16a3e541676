// fuse_layer_norm and fuse_gelu: the decomposed spellings exporters write for
// LayerNorm (9 nodes) and GELU (5-9 nodes) become one node each, which every
// backend runs as one kernel instead of a string of full-tensor passes.
#include <cmath>
#include <numbers>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

using passes::constant_of;
using passes::is_op;
using passes::is_scalar;
using passes::other_operand;

/// Nodes a match consumes, and a place to say it failed.
struct Match {
  std::vector<NodeId> nodes;
  bool take(const Graph& g, ValueId v) {  // the producer of `v` joins the match
    nodes.push_back(g.value(v).producer);
    return true;
  }
};

/// The node reading `v` when it is the only one and of type `op` with
/// `inputs` inputs; nullptr otherwise.
const Node* next(const Graph& g, const passes::Uses& uses, ValueId v, const char* op, size_t inputs,
                 NodeId* id) {
  *id = uses.sole_reader(v);
  if (*id < 0) return nullptr;
  const Node& n = g.node(*id);
  return is_op(n, op, inputs) ? &n : nullptr;
}

/// The normalized axes of a ReduceMean over the last axis only (keepdims).
bool reduces_last_axis(const Graph& g, const Node& m, size_t rank) {
  const auto ra = ops::reduce_attrs(m);
  if (!ra || !ra->keepdims) return false;
  auto axes = passes::int_list(g, m, "axes", 1);
  if (!axes || axes->size() != 1) return false;
  const int64_t a = (*axes)[0];
  return a == -1 || (rank != 0 && a == static_cast<int64_t>(rank) - 1);
}

/// A constant that, broadcast against [..., D], holds one value per entry of
/// the last axis; flattened to [D]. `d` < 0 when D is not known statically.
std::optional<Tensor> last_axis_param(const Tensor* t, int64_t d) {
  if (t == nullptr || t->dtype() != DType::kF32 || t->rank() == 0) return std::nullopt;
  for (size_t i = 0; i + 1 < t->rank(); ++i)
    if (t->dim(i) != 1) return std::nullopt;
  if (d >= 0 && t->shape().back() != d) return std::nullopt;
  return t->reshaped({t->shape().back()}).value_or(Tensor());
}

bool fuse_one_layer_norm(const Graph& g, const passes::Uses& uses, passes::Rewriter& rw,
                         NodeId mean_id) {
  const Node& mean = g.node(mean_id);
  if (!is_op(mean, "ReduceMean", mean.inputs.size()) || mean.inputs.empty()) return false;
  const ValueId x = mean.inputs[0];
  const Value& xv = g.value(x);
  const size_t rank = xv.shape ? xv.shape->rank() : 0;
  if (!reduces_last_axis(g, mean, rank)) return false;
  Match m{{mean_id}};
  NodeId id = -1;
  const Node* sub = next(g, uses, mean.outputs[0], "Sub", 2, &id);
  if (!sub || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) return false;
  m.nodes.push_back(id);
  const ValueId d = sub->outputs[0];
  // d is read twice: squared, and divided by the deviation.
  if (uses.is_output(d) || uses.readers(d).size() != 2) return false;
  const Node* sq = nullptr;
  const Node* div = nullptr;
  NodeId sq_id = -1, div_id = -1;
  for (NodeId r : uses.readers(d)) {
    const Node& n = g.node(r);
    if (is_op(n, "Pow", 2) && n.inputs[0] == d && is_scalar(g, n.inputs[1], 2.0)) {
      sq = &n, sq_id = r;
    } else if (is_op(n, "Mul", 2) && n.inputs[0] == d && n.inputs[1] == d) {
      sq = &n, sq_id = r;
    } else if (is_op(n, "Div", 2) && n.inputs[0] == d) {
      div = &n, div_id = r;
    }
  }
  if (!sq || !div) return false;
  m.nodes.push_back(sq_id);
  const Node* var = next(g, uses, sq->outputs[0], "ReduceMean", g.opset() >= 18 ? 2 : 1, &id);
  if (!var) var = next(g, uses, sq->outputs[0], "ReduceMean", 1, &id);
  if (!var || !reduces_last_axis(g, *var, rank)) return false;
  m.nodes.push_back(id);
  const Node* add_eps = next(g, uses, var->outputs[0], "Add", 2, &id);
  if (!add_eps) return false;
  const auto eps = passes::scalar_of(g, other_operand(*add_eps, var->outputs[0]));
  if (!eps || *eps < 0) return false;
  m.nodes.push_back(id);
  const Node* sqrt = next(g, uses, add_eps->outputs[0], "Sqrt", 1, &id);
  if (!sqrt || uses.sole_reader(sqrt->outputs[0]) != div_id || div->inputs[1] != sqrt->outputs[0])
    return false;
  m.nodes.push_back(id);
  m.nodes.push_back(div_id);
  ValueId out = div->outputs[0];
  const int64_t dim = xv.shape && rank > 0 && (*xv.shape)[rank - 1].is_static()
                          ? (*xv.shape)[rank - 1].value()
                          : -1;
  std::optional<Tensor> scale, bias;
  if (const Node* mul = next(g, uses, out, "Mul", 2, &id)) {
    scale = last_axis_param(constant_of(g, other_operand(*mul, out)), dim);
    if (scale && scale->defined()) {
      m.nodes.push_back(id);
      out = mul->outputs[0];
      if (const Node* add = next(g, uses, out, "Add", 2, &id)) {
        bias = last_axis_param(constant_of(g, other_operand(*add, out)), scale->numel());
        if (bias && bias->defined()) {
          m.nodes.push_back(id);
          out = add->outputs[0];
        }
      }
    }
  }
  if (!scale || !scale->defined()) {
    if (dim < 0) return false;  // LayerNormalization needs a scale of known size
    Tensor ones = Tensor::zeros(DType::kF32, {dim});
    for (float& f : ones.span<float>()) f = 1.0f;
    scale = ones;
  }
  if (rw.any_taken(m.nodes)) return false;
  Node ln;
  ln.name = rw.node_name(mean.name + "_layernorm");
  ln.op_type = "LayerNormalization";
  ln.inputs = {x, rw.add_constant(ln.name + ".scale", *scale)};
  if (bias && bias->defined()) ln.inputs.push_back(rw.add_constant(ln.name + ".bias", *bias));
  ln.outputs = {out};
  ln.attrs = {{"axis", int64_t{-1}}, {"epsilon", static_cast<float>(*eps)}};
  for (NodeId n : m.nodes) rw.remove(n);
  rw.add_node(std::move(ln));
  return true;
}

/// From `a` = 1 + erf/tanh(...), the Mul chain that multiplies it by x and
/// 0.5 in any order and grouping. Returns the chain's output, adding its nodes.
ValueId times_half_x(const Graph& g, const passes::Uses& uses, ValueId a, ValueId x, Match* m) {
  bool has_x = false, has_half = false;
  ValueId cur = a;
  for (int step = 0; step < 2 && !(has_x && has_half); ++step) {
    NodeId id = -1;
    const Node* mul = next(g, uses, cur, "Mul", 2, &id);
    if (!mul) return kNoValue;
    const ValueId o = other_operand(*mul, cur);
    if (o == kNoValue) return kNoValue;
    if (o == x && !has_x) {
      has_x = true;
    } else if (is_scalar(g, o, 0.5) && !has_half) {
      has_half = true;
    } else if (const Node* p = uses.producer(o);
               p && is_op(*p, "Mul", 2) && !has_x && !has_half && uses.sole_reader(o) == id &&
               (other_operand(*p, x) != kNoValue && is_scalar(g, other_operand(*p, x), 0.5))) {
      m->take(g, o);
      has_x = has_half = true;
    } else {
      return kNoValue;
    }
    m->nodes.push_back(id);
    cur = mul->outputs[0];
  }
  return has_x && has_half ? cur : kNoValue;
}

/// x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x): the x, adding the nodes.
ValueId cube_base(const Graph& g, const passes::Uses& uses, ValueId cube, Match* m) {
  const Node* p = uses.producer(cube);
  if (!p || uses.sole_reader(cube) < 0) return kNoValue;
  if (is_op(*p, "Pow", 2) && is_scalar(g, p->inputs[1], 3.0)) {
    m->take(g, cube);
    return p->inputs[0];
  }
  if (!is_op(*p, "Mul", 2)) return kNoValue;
  for (size_t s = 0; s < 2; ++s) {
    const ValueId sq = p->inputs[s], x = p->inputs[1 - s];
    const Node* q = uses.producer(sq);
    if (q && is_op(*q, "Mul", 2) && q->inputs[0] == x && q->inputs[1] == x &&
        uses.sole_reader(sq) == g.value(cube).producer) {
      m->take(g, cube);
      m->take(g, sq);
      return x;
    }
  }
  return kNoValue;
}

/// The x of x / sqrt(2) (or x * 1/sqrt(2)) feeding an Erf.
ValueId erf_input(const Graph& g, const passes::Uses& uses, ValueId u, Match* m) {
  const Node* p = uses.producer(u);
  if (!p || uses.sole_reader(u) < 0) return kNoValue;
  if (is_op(*p, "Div", 2) && is_scalar(g, p->inputs[1], std::numbers::sqrt2, 1e-6)) {
    m->take(g, u);
    return p->inputs[0];
  }
  if (is_op(*p, "Mul", 2))
    for (size_t s = 0; s < 2; ++s)
      if (is_scalar(g, p->inputs[1 - s], 1.0 / std::numbers::sqrt2, 1e-6)) {
        m->take(g, u);
        return p->inputs[s];
      }
  return kNoValue;
}

/// The x of sqrt(2/pi) * (x + 0.044715 * x^3) feeding a Tanh.
ValueId tanh_input(const Graph& g, const passes::Uses& uses, ValueId v, Match* m) {
  const Node* p = uses.producer(v);
  if (!p || !is_op(*p, "Mul", 2) || uses.sole_reader(v) < 0) return kNoValue;
  const double k = std::sqrt(2.0 / std::numbers::pi);
  for (size_t s = 0; s < 2; ++s) {
    if (!is_scalar(g, p->inputs[1 - s], k, 1e-5)) continue;
    const ValueId w = p->inputs[s];
    const Node* add = uses.producer(w);
    if (!add || !is_op(*add, "Add", 2) || uses.sole_reader(w) < 0) return kNoValue;
    for (size_t t = 0; t < 2; ++t) {
      const ValueId x = add->inputs[t], term = add->inputs[1 - t];
      const Node* mul = uses.producer(term);
      if (!mul || !is_op(*mul, "Mul", 2) || uses.sole_reader(term) < 0) continue;
      for (size_t r = 0; r < 2; ++r) {
        if (!is_scalar(g, mul->inputs[1 - r], 0.044715, 1e-5)) continue;
        Match inner;
        if (cube_base(g, uses, mul->inputs[r], &inner) != x) continue;
        m->take(g, v);
        m->take(g, w);
        m->take(g, term);
        m->nodes.insert(m->nodes.end(), inner.nodes.begin(), inner.nodes.end());
        return x;
      }
    }
  }
  return kNoValue;
}

bool fuse_one_gelu(const Graph& g, const passes::Uses& uses, passes::Rewriter& rw, NodeId f_id) {
  const Node& f = g.node(f_id);
  const bool erf = is_op(f, "Erf", 1);
  if (!erf && !is_op(f, "Tanh", 1)) return false;
  Match m{{f_id}};
  const ValueId x =
      erf ? erf_input(g, uses, f.inputs[0], &m) : tanh_input(g, uses, f.inputs[0], &m);
  if (x == kNoValue) return false;
  NodeId id = -1;
  const Node* add = next(g, uses, f.outputs[0], "Add", 2, &id);
  if (!add || !is_scalar(g, other_operand(*add, f.outputs[0]), 1.0)) return false;
  m.nodes.push_back(id);
  const ValueId out = times_half_x(g, uses, add->outputs[0], x, &m);
  if (out == kNoValue || rw.any_taken(m.nodes)) return false;
  Node gelu;
  gelu.name = rw.node_name(f.name + "_gelu");
  gelu.op_type = "Gelu";
  gelu.inputs = {x};
  gelu.outputs = {out};
  gelu.attrs = {{"approximate", std::string(erf ? "none" : "tanh")}};
  for (NodeId n : m.nodes) rw.remove(n);
  rw.add_node(std::move(gelu));
  return true;
}

template <class Fn>
Result<Graph> run_matcher(const Graph& in, PassStats* stats, Fn fn) {
  Graph g = in;
  passes::propagate_shapes(g);
  passes::Uses uses(g);
  passes::Rewriter rw(g);
  int count = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (!rw.taken(static_cast<NodeId>(i)) && fn(g, uses, rw, static_cast<NodeId>(i))) ++count;
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace

Result<Graph> fuse_layer_norm(const Graph& g, PassStats* stats) {
  return run_matcher(g, stats, fuse_one_layer_norm);
}

Result<Graph> fuse_gelu(const Graph& g, PassStats* stats) {
  return run_matcher(g, stats, fuse_one_gelu);
}

}  // namespace hone
