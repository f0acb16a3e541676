// fold_slice_bounds: a Slice whose starts or ends are computed from dims
// (Shape -> Gather -> Unsqueeze, the way exporters write `y[..., :length]`
// after a causal conv padded both sides, with `length` the input's size) gets
// constant bounds where each is a number or its axis' dim less a number: the
// bound `seq` of an axis of (seq+3) is -3, counted from the end. Then every
// backend sees a constant Slice, and one that runs a symbolic axis only with
// bounds counted from either end (aot) runs it.
// Only steps of 1 or more (a negative step clamps its bounds otherwise), and
// only a bound that cannot be negative (no term subtracted: dims and positive
// numbers), since a negative one would itself count from the end.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hone/passes.h"
#include "passes/rewrite.h"
#include "passes/shape_values.h"

namespace hone {
namespace {

using passes::constant_of;

std::optional<std::vector<int64_t>> ints_of(const Graph& g, ValueId v) {
  const Tensor* t = constant_of(g, v);
  if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32)) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numel(); ++i) out.push_back(tensor_element_as_int64(*t, i));
  return out;
}

/// `b` as a constant bound of an axis of `dim`: its number, or -(dim - b)
/// where that difference is a number (INT64_MAX where it is 0: the end).
std::optional<int64_t> constant_bound(const ops::SymInt& b, const Dim& dim) {
  if (b.is_number()) return b.number();
  if (!b.is_known() || dim.is_unknown() || b.to_string().find('-') != std::string::npos)
    return std::nullopt;
  const ops::SymInt rest = ops::SymInt::of(dim) - b;
  if (!rest.is_number() || rest.number() < 0) return std::nullopt;
  return rest.number() == 0 ? std::numeric_limits<int64_t>::max() : -rest.number();
}

/// The constant starts and ends of `n`, or why not.
std::string bounds_of(const Graph& g, const Node& n, passes::ShapeValues& values,
                      std::vector<int64_t>* starts, std::vector<int64_t>* ends) {
  if (n.inputs.size() < 3 || n.outputs.empty()) return "it has no starts and ends";
  if (constant_of(g, n.inputs[1]) && constant_of(g, n.inputs[2])) return "constant already";
  const Value& x = g.value(n.inputs[0]);
  if (!x.shape) return "its input's rank is not known";
  const auto rank = static_cast<int64_t>(x.shape->rank());
  const auto s = values.of(n.inputs[1]), e = values.of(n.inputs[2]);
  if (!s || !e || s->size() != e->size()) return "its bounds are not known from dims";
  std::vector<int64_t> axes, steps(s->size(), 1);
  if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
    auto a = ints_of(g, n.inputs[3]);
    if (!a) return "its axes are not constant";
    axes = *a;
  } else {
    for (int64_t i = 0; i < static_cast<int64_t>(s->size()); ++i) axes.push_back(i);
  }
  if (n.inputs.size() > 4 && n.inputs[4] >= 0) {
    auto st = ints_of(g, n.inputs[4]);
    if (!st) return "its steps are not constant";
    steps = *st;
  }
  if (axes.size() != s->size() || steps.size() != s->size()) return "its lists differ in length";
  for (size_t k = 0; k < s->size(); ++k) {
    if (steps[k] < 1) return "a step below 1";
    const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank) return "an axis out of range";
    const Dim& dim = (*x.shape)[static_cast<size_t>(a)];
    const auto b = constant_bound((*s)[k], dim), f = constant_bound((*e)[k], dim);
    if (!b || !f)
      return "bound " + (*s)[k].to_string() + " or " + (*e)[k].to_string() + " of axis " +
             dim.to_string() + " is neither a number nor the axis less a number";
    starts->push_back(*b);
    ends->push_back(*f);
  }
  return {};
}

}  // namespace

Result<Graph> fold_slice_bounds(const Graph& in, PassStats* stats) {
  // Slices with bounds that are not both constant already.
  auto match = [&in](const Node& n) {
    return n.op_type == "Slice" && n.domain.empty() && n.inputs.size() >= 3 && !n.outputs.empty() &&
           !(constant_of(in, n.inputs[1]) && constant_of(in, n.inputs[2]));
  };
  std::unique_ptr<passes::ShapeValues> values;  // of the shaped copy, made once
  auto fold = [&values](const Graph& g, passes::Rewriter& rw, NodeId id) -> std::string {
    const Node& n = g.node(id);
    if (!values) values = std::make_unique<passes::ShapeValues>(g);
    std::vector<int64_t> starts, ends;
    if (std::string why = bounds_of(g, n, *values, &starts, &ends); !why.empty()) return why;
    Node m = n;
    const auto len = static_cast<int64_t>(starts.size());
    m.inputs[1] = rw.add_constant(n.name + "_starts", Tensor::from<int64_t>({len}, starts));
    m.inputs[2] = rw.add_constant(n.name + "_ends", Tensor::from<int64_t>({len}, ends));
    rw.add_node(std::move(m));
    return {};
  };
  return passes::rewrite_nodes(in, stats, "fold_slice_bounds", match, fold, &PassStats::folded);
}

}  // namespace hone
