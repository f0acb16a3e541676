#include "passes/dim_bounds.h"

#include <algorithm>
#include <optional>
#include <set>
#include <variant>

#include "hone/passes.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "ops/broadcast.h"
#include "ops/nonzero.h"
#include "ops/run_length.h"
#include "ops/sym_int.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone::passes {
namespace {

/// `g` with its inputs' symbolic dims replaced by their bounds and every
/// other computed value's shape forgotten (those hold the importer's names,
/// and propagation keeps a shape it finds already there).
Graph specialise(const Graph& g, const std::map<std::string, int64_t>& input_bounds) {
  Graph s = g;
  std::vector<bool> is_input(s.values().size(), false);
  for (ValueId v : s.inputs()) is_input[static_cast<size_t>(v)] = true;
  for (size_t i = 0; i < s.values().size(); ++i) {
    Value& v = s.value(static_cast<ValueId>(i));
    if (v.initializer || !v.shape) continue;
    if (!is_input[i]) {
      if (v.producer >= 0) v.shape.reset();
      continue;
    }
    for (Dim& d : v.shape->dims())
      if (d.is_symbolic())
        if (auto it = input_bounds.find(d.symbol_name()); it != input_bounds.end())
          d = Dim(it->second);
  }
  return s;
}

/// Ops whose output shapes depend on input values that are not shapes (or
/// that run subgraphs or draw random numbers): a stand-in input says nothing.
bool shape_depends_on_data(const Node& n) {
  static const std::set<std::string> k = {"NonZero",
                                          "Unique",
                                          "Compress",
                                          "NonMaxSuppression",
                                          "Loop",
                                          "If",
                                          "Scan",
                                          "RandomNormal",
                                          "RandomUniform",
                                          "RandomNormalLike",
                                          "RandomUniformLike",
                                          "Multinomial",
                                          "Bernoulli",
                                          "StringNormalizer",
                                          "TfIdfVectorizer",
                                          "SequenceConstruct",
                                          "SplitToSequence",
                                          "ConcatFromSequence",
                                          "SequenceAt",
                                          "SequenceInsert",
                                          "SequenceErase",
                                          "SequenceEmpty"};
  if (k.contains(n.op_type)) return true;
  for (const auto& [name, a] : n.attrs)
    if (std::holds_alternative<std::shared_ptr<const Graph>>(a) ||
        std::holds_alternative<std::vector<std::shared_ptr<const Graph>>>(a))
      return true;
  return false;
}

/// The ops the shape pass has no rule for (Resize, ConvTranspose, Pad,
/// Split, ...): each node whose outputs have no shape yet, whose float inputs
/// have static shapes and whose other inputs (shapes, sizes, pads, scales)
/// are constants, runs once on the interpreter with zeros standing in for the
/// float inputs, and its outputs take the shapes it gives. Returns how many
/// values got a shape.
int shapes_by_evaluation(Graph& s) {
  auto order = s.topological_order();
  if (!order) return 0;
  int filled = 0;
  for (NodeId id : *order) {
    const Node& n = s.node(id);
    bool missing = false;
    for (ValueId o : n.outputs) missing |= o >= 0 && !s.value(o).shape;
    if (!missing || shape_depends_on_data(n)) continue;
    std::map<ValueId, Tensor> known;
    bool ok = true;
    for (size_t i = 0; i < n.inputs.size() && ok; ++i) {
      const ValueId v = n.inputs[i];
      if (v < 0) continue;
      const Value& val = s.value(v);
      if (val.initializer) {
        known.emplace(v, *val.initializer);
      } else if (i == 0 && val.kind == ValueKind::kTensor && is_floating(val.dtype) && val.shape &&
                 val.shape->is_static()) {
        // Only the first input may be data: the others of these ops are
        // shapes, scales, pads or weights, and must be known.
        std::vector<int64_t> dims;
        for (const Dim& d : val.shape->dims()) dims.push_back(d.value());
        known.emplace(v, Tensor::zeros(val.dtype, std::move(dims)));
      } else {
        ok = false;
      }
    }
    if (!ok) continue;
    auto outs = evaluate_node(s, n, known);
    if (!outs || outs->size() != n.outputs.size()) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId o = n.outputs[k];
      if (o < 0 || s.value(o).shape) continue;
      s.value(o).shape = Shape::of((*outs)[k].shape());
      if (s.value(o).dtype == DType::kUndefined) s.value(o).dtype = (*outs)[k].dtype();
      ++filled;
    }
  }
  return filled;
}

/// `g` specialised to `input_bounds` with its shapes worked out as far as
/// folding, propagation and stand-in evaluation go.
Graph fold_at(const Graph& g, const std::map<std::string, int64_t>& input_bounds) {
  // Shapes become constants, constants fold, and what they feed gets a static
  // shape; each round can open the next (a Reshape's shape needs the Concat
  // folded before the Shape after it folds), so go until nothing changes.
  Graph s = specialise(g, input_bounds);
  propagate_shapes(s);
  for (int round = 0; round < 64; ++round) {
    PassStats st;
    auto shapes = fold_shapes(s, &st);
    if (!shapes) break;
    auto consts = fold_constants(*shapes, &st);
    if (!consts) break;
    s = std::move(*consts);
    int filled = 0;
    for (int f = 1; f > 0; filled += f) f = propagate_shapes(s) + shapes_by_evaluation(s);
    if (st.folded == 0 && filled == 0) break;
  }
  return s;
}

std::vector<int64_t> static_dims(const Value& v) {
  std::vector<int64_t> dims;
  for (const Dim& d : v.shape->dims()) dims.push_back(d.value());
  return dims;
}

/// Whether the folded graph contradicts itself: a node whose inputs are all
/// constants fails on the interpreter with an invalid argument (a Gather of
/// a position table past its last row, a Reshape to a size it cannot take),
/// an element-wise op's static input shapes do not broadcast, or a MatMul's
/// static inner dims differ (a sequence longer than a table it is added to,
/// an image whose patch count a weight fixes).
bool contradicts_itself(const Graph& s) {
  constexpr size_t kMaxEvaluatedBytes = size_t{16} << 20;
  for (const Node& n : s.nodes()) {
    bool all_constant = !n.inputs.empty(), all_static = true;
    size_t bytes = 0;
    std::vector<std::vector<int64_t>> shapes;
    std::map<ValueId, Tensor> known;
    for (ValueId v : n.inputs) {
      if (v < 0) continue;
      const Value& val = s.value(v);
      if (val.initializer) {
        bytes += val.initializer->nbytes();
        known.emplace(v, *val.initializer);
      } else {
        all_constant = false;
      }
      if (val.kind != ValueKind::kTensor || !val.shape || !val.shape->is_static())
        all_static = false;
      else
        shapes.push_back(static_dims(val));
    }
    if (all_constant && bytes <= kMaxEvaluatedBytes && !shape_depends_on_data(n)) {
      auto outs = evaluate_node(s, n, known);
      if (!outs && outs.error().code() == ErrorCode::kInvalidArgument) return true;
    }
    if (!all_static || shapes.size() < 2) continue;
    if (broadcasts(n.op_type) && !ops::broadcast_shapes(shapes)) return true;
    if (n.op_type == "MatMul" && shapes[0].size() >= 1 && shapes[1].size() >= 1) {
      const int64_t k_a = shapes[0].back();
      const int64_t k_b = shapes[1].size() == 1 ? shapes[1][0] : shapes[1][shapes[1].size() - 2];
      if (k_a != k_b) return true;
    }
  }
  return false;
}

/// The lengths a node finds when it runs (ops/run_length.h), as its output
/// names them, each with its most by `bound_of` of an input's dims: the
/// element count of NonZero's input or of NonMaxSuppression's scores
/// (ops::run_length_at), the axis' length of a TopK's of a run-time K or a
/// Slice's of a run-time length.
template <class BoundOf>
std::vector<std::pair<Dim, std::optional<int64_t>>> run_length_bounds(const Graph& s, const Node& n,
                                                                      BoundOf bound_of) {
  ValueId y = kNoValue;
  for (ValueId o : n.outputs)
    if (y == kNoValue && o >= 0) y = o;
  if (y == kNoValue || !s.value(y).shape) return {};
  const Shape& ys = *s.value(y).shape;
  if (ops::length_known_after_run(n)) {
    const ops::RunLengthAt at = ops::run_length_at(n);
    if (n.inputs.size() <= at.bounded_by || n.inputs[at.bounded_by] < 0) return {};
    const Value& x = s.value(n.inputs[at.bounded_by]);
    if (!x.shape || ys.rank() != 2) return {};
    std::optional<int64_t> numel = 1;
    for (const Dim& d : x.shape->dims()) {
      const auto b = bound_of(d);
      numel = b && numel ? std::optional<int64_t>(*numel * *b) : std::nullopt;
    }
    return {{ys[at.axis], numel}};
  }
  if (n.inputs.empty() || n.inputs[0] < 0) return {};
  const Value& x = s.value(n.inputs[0]);
  if (!x.shape || ys.rank() != x.shape->rank()) return {};
  std::vector<std::pair<Dim, std::optional<int64_t>>> found;
  for (size_t a = 0; a < ys.rank(); ++a)  // its own length, not its input's carried over
    if (ops::is_run_length(ys[a]) && ys[a] != (*x.shape)[a])
      found.emplace_back(ys[a], bound_of((*x.shape)[a]));
  return found;
}

/// The most of dim `d` by `bounds`: its number, its entry, or (an
/// expression of symbols) the top of its range by interval arithmetic
/// (ops::sym_range), never below 0.
std::optional<int64_t> most_of(const Dim& d, const std::map<std::string, int64_t>& bounds) {
  if (d.is_static()) return d.value();
  if (!d.is_symbolic()) return std::nullopt;
  if (auto it = bounds.find(d.symbol_name()); it != bounds.end()) return it->second;
  if (!ops::is_derived(d)) return std::nullopt;
  const auto r = ops::sym_range(d, bounds);
  if (!r) return std::nullopt;
  return std::max<int64_t>(r->second, 0);
}

/// Raises the bound of `symbol` to `most` (a symbol bounded twice takes the larger).
void raise(std::map<std::string, int64_t>& bounds, const std::string& symbol, int64_t most) {
  int64_t& b = bounds.try_emplace(symbol, most).first->second;
  b = std::max(b, most);
}

/// The bounds of a graph's dims and the folded graph they were read from.
struct Derived {
  std::map<std::string, int64_t> bounds;
  Graph folded;
};

// If bodies inside If bodies deeper than this are left unbounded.
constexpr int kMaxBodyDepth = 8;

Derived derive(const Graph& g, const std::map<std::string, int64_t>& input_bounds, int depth);

/// Branch `body` of a node of folded graph `s` as a graph of its own: each
/// name it captures takes its value in `s`, a constant's tensor or else an
/// input of its dtype and shape, each dim at its most by `bounds` where that
/// is known.
Graph body_in(const Graph& s, const Graph& body, const std::map<std::string, int64_t>& bounds) {
  Graph b = body;
  std::vector<ValueId> ins = b.inputs();
  for (ValueId c : b.captured_values()) {
    Value& v = b.value(c);
    const ValueId w = s.find_value(v.name);
    if (w == kNoValue || !s.value(w).shape) continue;
    const Value& outer = s.value(w);
    v.kind = outer.kind;
    v.dtype = outer.dtype;
    if (outer.initializer) {
      v.initializer = outer.initializer;
      v.shape = outer.shape;
      continue;
    }
    std::vector<Dim> dims;
    for (const Dim& d : outer.shape->dims()) {
      const auto m = most_of(d, bounds);
      dims.push_back(m ? Dim(*m) : d);
    }
    v.shape = Shape(std::move(dims));
    ins.push_back(c);
  }
  b.set_inputs(std::move(ins));
  return b;
}

/// Per output of If node `n` of folded graph `s`, the most of each of its
/// dims over both branches (a branch's output dims are its body's, derived
/// with its captures at their bounds): max(0, count) for a branch making an
/// empty tensor and one an NMS' selection. Where the branches' ranks differ
/// (the exporter's If(dim == 1, Squeeze, Identity)), the branch a condition
/// folded to a constant takes. Nothing for an output whose rank or a dim's
/// bound is left unknown. The bodies' own dims (that NMS' count) join
/// `bounds`.
std::vector<std::optional<std::vector<int64_t>>> if_output_most(
    const Graph& s, const Node& n, std::map<std::string, int64_t>& bounds, int depth) {
  using Dims = std::optional<std::vector<int64_t>>;
  std::vector<Dims> branch[2];
  const char* attrs[2] = {"then_branch", "else_branch"};
  for (int i = 0; i < 2; ++i) {
    const Graph* body = n.attr_graph(attrs[i]);
    if (body == nullptr || body->outputs().size() != n.outputs.size()) return {};
    const Derived d = derive(body_in(s, *body, bounds), {}, depth + 1);
    for (const auto& [name, b] : d.bounds) bounds.try_emplace(name, b);
    for (ValueId o : d.folded.outputs()) {
      const Value& y = d.folded.value(o);
      const std::optional<Shape> shape =
          y.initializer ? Shape::of(y.initializer->shape()) : y.shape;
      Dims dims;
      if (shape) {
        dims.emplace();
        for (const Dim& x : shape->dims()) {
          const auto m = most_of(x, d.bounds);
          if (!m) {
            dims.reset();
            break;
          }
          dims->push_back(*m);
        }
      }
      branch[i].push_back(std::move(dims));
    }
    if (branch[i].size() != n.outputs.size()) return {};
  }
  const Tensor* cond = n.inputs.empty() || n.inputs[0] < 0 ? nullptr : constant_of(s, n.inputs[0]);
  std::optional<int> taken;
  if (cond != nullptr && cond->numel() == 1 && cond->dtype() == DType::kBool)
    taken = cond->data<bool>()[0] ? 0 : 1;
  std::vector<Dims> most(n.outputs.size());
  for (size_t k = 0; k < most.size(); ++k) {
    const Dims& a = branch[0][k];
    const Dims& b = branch[1][k];
    if (a && b && a->size() == b->size()) {
      most[k] = a;
      for (size_t i = 0; i < a->size(); ++i) (*most[k])[i] = std::max((*a)[i], (*b)[i]);
    } else if (a && b && taken) {
      most[k] = branch[*taken][k];
    }
  }
  return most;
}

/// Bounds each If of `s` (in graph order, `g` the graph `s` was folded from)
/// can give its outputs' dims: a dim `g` names (the importer's "unk__215")
/// takes the most over the branches, and an output with no shape in `s`
/// takes `g`'s, so what reads it gets shapes, and bounds, too. Returns
/// whether a shape was given.
bool bound_if_outputs(const Graph& g, Graph& s, const Node& n,
                      std::map<std::string, int64_t>& bounds, int depth) {
  if (n.op_type != "If" || !n.domain.empty() || depth >= kMaxBodyDepth) return false;
  const auto most = if_output_most(s, n, bounds, depth);
  bool shaped = false;
  for (size_t k = 0; k < most.size(); ++k) {
    if (!most[k] || n.outputs[k] < 0) continue;
    Value& y = s.value(n.outputs[k]);
    if (!y.shape) {
      const ValueId w = g.find_value(y.name);
      if (w == kNoValue || !g.value(w).shape || g.value(w).shape->rank() != most[k]->size())
        continue;
      y.shape = g.value(w).shape;
      if (y.dtype == DType::kUndefined) y.dtype = g.value(w).dtype;
      shaped = true;
    }
    if (y.shape->rank() != most[k]->size()) continue;
    for (size_t i = 0; i < most[k]->size(); ++i) {
      const Dim& d = (*y.shape)[i];
      if (d.is_symbolic() && !ops::is_derived(d)) raise(bounds, d.symbol_name(), (*most[k])[i]);
    }
  }
  return shaped;
}

Derived derive(const Graph& g, const std::map<std::string, int64_t>& input_bounds, int depth) {
  Derived r{{}, fold_at(g, input_bounds)};
  std::map<std::string, int64_t>& out = r.bounds;
  Graph& s = r.folded;
  for (const Value& v : g.values()) {
    if (!v.shape) continue;
    const ValueId w = s.find_value(v.name);
    if (w == kNoValue || !s.value(w).shape || s.value(w).shape->rank() != v.shape->rank()) continue;
    for (size_t i = 0; i < v.shape->rank(); ++i) {
      const Dim& sym = (*v.shape)[i];
      const Dim& d = (*s.value(w).shape)[i];
      if (sym.is_symbolic() && d.is_static()) raise(out, sym.symbol_name(), d.value());
    }
  }
  for (const auto& [name, bound] : input_bounds) out.try_emplace(name, bound);
  // Lengths found when a node runs (ops/run_length.h), bounded by the
  // bounds found so far, in graph order: a NonZero's or NonMaxSuppression's
  // is at most an input's element count at its dims' bounds (a NonZero of a
  // TopK's output; a detector's NMS over boxes whose count was found
  // earlier), a TopK's or a Slice's at most its axis' length; an If's
  // outputs' dims the most over its branches.
  auto bound_of = [&out](const Dim& d) { return most_of(d, out); };
  if (auto order = s.topological_order()) {
    for (NodeId id : *order) {
      const Node& n = s.node(id);
      if (bound_if_outputs(g, s, n, out, depth)) propagate_shapes(s);
      if (!ops::length_known_after_run(s, n) && !ops::length_within_input(n)) continue;
      for (const auto& [len, most] : run_length_bounds(s, n, bound_of))
        if (most && ops::is_run_length(len)) raise(out, len.symbol_name(), *most);
    }
  }
  // A dim the graph names (the importer's "unk__7", an expression of symbols
  // (ops/sym_int.h)) that folding left without a number: the most of what
  // it is in the folded graph, or of its expression.
  std::map<std::string, int64_t> named;
  for (const Value& v : g.values()) {
    if (!v.shape) continue;
    const ValueId w = s.find_value(v.name);
    const bool same =
        w != kNoValue && s.value(w).shape && s.value(w).shape->rank() == v.shape->rank();
    for (size_t i = 0; i < v.shape->rank(); ++i) {
      const Dim& d = (*v.shape)[i];
      if (!d.is_symbolic() || out.contains(d.symbol_name())) continue;
      std::optional<int64_t> m = most_of(d, out);
      if (!m && same) m = most_of((*s.value(w).shape)[i], out);
      if (m) raise(named, d.symbol_name(), *m);
    }
  }
  out.merge(named);
  return r;
}

}  // namespace

std::map<std::string, int64_t> derive_dim_bounds(
    const Graph& g, const std::map<std::string, int64_t>& input_bounds) {
  return derive(g, input_bounds, 0).bounds;
}

bool dims_fit(const Graph& g, const std::map<std::string, int64_t>& input_dims) {
  return !contradicts_itself(fold_at(g, input_dims));
}

std::optional<int64_t> largest_fitting_dim(const Graph& g, std::map<std::string, int64_t> dims,
                                           const std::string& symbol, int64_t limit) {
  auto fits = [&](int64_t v) {
    dims[symbol] = v;
    return dims_fit(g, dims);
  };
  if (!fits(1)) return 0;
  // Doubling finds a size that does not fit, halving the gap the last that does.
  int64_t good = 1, bad = 0;
  for (int64_t v = 2; bad == 0; v = std::min(v * 2, limit)) {
    if (!fits(v)) {
      bad = v;
    } else {
      good = v;
      if (v >= limit) return std::nullopt;
    }
  }
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return good;
}

}  // namespace hone::passes
