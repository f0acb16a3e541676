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

}  // namespace

std::map<std::string, int64_t> derive_dim_bounds(
    const Graph& g, const std::map<std::string, int64_t>& input_bounds) {
  std::map<std::string, int64_t> out;
  const Graph s = fold_at(g, input_bounds);
  auto note = [&](const Dim& sym, const Dim& d) {
    if (!sym.is_symbolic() || !d.is_static()) return;
    int64_t& b = out.try_emplace(sym.symbol_name(), d.value()).first->second;
    b = std::max(b, d.value());
  };
  for (const Value& v : g.values()) {
    if (!v.shape) continue;
    const ValueId w = s.find_value(v.name);
    if (w == kNoValue || !s.value(w).shape || s.value(w).shape->rank() != v.shape->rank()) continue;
    for (size_t i = 0; i < v.shape->rank(); ++i) note((*v.shape)[i], (*s.value(w).shape)[i]);
  }
  for (const auto& [name, bound] : input_bounds) out.try_emplace(name, bound);
  // Lengths found when a node runs (ops/run_length.h), bounded by the
  // bounds found so far, in graph order: a NonZero's or NonMaxSuppression's
  // is at most an input's element count at its dims' bounds (a NonZero of a
  // TopK's output; a detector's NMS over boxes whose count was found
  // earlier), a TopK's of a run-time K or a Slice's at most its axis' length.
  auto bound_of = [&out](const Dim& d) -> std::optional<int64_t> {
    if (d.is_static()) return d.value();
    if (!d.is_symbolic()) return std::nullopt;
    if (auto it = out.find(d.symbol_name()); it != out.end()) return it->second;
    if (!ops::is_derived(d) || d.symbol_name().find('-') != std::string::npos) return std::nullopt;
    return ops::sym_eval(d, out);
  };
  if (auto order = s.topological_order()) {
    for (NodeId id : *order) {
      const Node& n = s.node(id);
      if (!ops::length_known_after_run(s, n)) continue;
      for (const auto& [len, most] : run_length_bounds(s, n, bound_of)) {
        if (!most || !ops::is_run_length(len)) continue;
        int64_t& b = out.try_emplace(len.symbol_name(), *most).first->second;
        b = std::max(b, *most);
      }
    }
  }
  // A dim named by an expression of symbols (ops/sym_int.h) that folding left
  // without a number: its value at its symbols' bounds, where that is the
  // largest (no minus sign: sums, products and floor quotients of them).
  for (const Value& v : g.values()) {
    if (!v.shape) continue;
    for (const Dim& d : v.shape->dims()) {
      if (!ops::is_derived(d) || out.contains(d.symbol_name())) continue;
      if (d.symbol_name().find('-') != std::string::npos) continue;
      if (auto b = ops::sym_eval(d, out)) out[d.symbol_name()] = *b;
    }
  }
  return out;
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
