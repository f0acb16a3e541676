// lower_embedding_bag: PyTorch's TorchScript exporter writes an EmbeddingBag
// over a 2-D input (every bag the same length L, a recommender's multi-hot
// features) as a Loop over the bags: the ids flattened, bag offsets made by
// Range(0, B*L, L) with the total appended, and a body that slices bag i's
// ids, gathers their rows and reduces them (sum, mean or max). No backend
// compiles a Loop, so the whole lookup ran on the reference. Where the graph
// proves that form (the offsets and the trip count computed from the 2-D
// ids' own shape, the body exactly slice -> gather -> reduce over axis 0),
// it becomes Gather(weight, ids) [B, L, D] and the same reduction over axis 1,
// which every backend runs. The dynamo exporter's form (a Loop with no trip
// count carrying a sequence, then ConcatFromSequence) is matched by
// embedding_bag_dynamo.cpp and becomes Reduce(Reshape(rows, [-1, L, D])) over
// axis 1. Anything else stays a Loop (reason at debug level).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/log.h"
#include "hone/passes.h"
#include "passes/embedding_bag.h"
#include "passes/rewrite.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

using passes::constant_of;

/// The node making `v` in `g`, looking through Casts; nullptr for none.
const Node* made_by(const Graph& g, ValueId v, const char* op) {
  for (int hops = 0; v >= 0 && hops < 4; ++hops) {
    const NodeId p = g.value(v).producer;
    if (p < 0) return nullptr;
    const Node& n = g.node(p);
    if (n.op_type == op) return &n;
    if (n.op_type != "Cast" || n.inputs.empty()) return nullptr;
    v = n.inputs[0];
  }
  return nullptr;
}

/// The constant integers of `v`, or nothing.
std::optional<std::vector<int64_t>> ints(const Graph& g, ValueId v) {
  const Tensor* t = constant_of(g, v);
  if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32)) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->numel(); ++i) out.push_back(tensor_element_as_int64(*t, i));
  return out;
}

bool is_ints(const Graph& g, ValueId v, const std::vector<int64_t>& want) {
  const auto got = ints(g, v);
  return got && *got == want;
}

/// `v` is Gather(Shape(y), k) (through Casts) for the given y and k.
bool is_dim_of(const Graph& g, ValueId v, ValueId y, int64_t k) {
  const Node* gather = made_by(g, v, "Gather");
  if (gather == nullptr || gather->inputs.size() != 2) return false;
  const auto at = ints(g, gather->inputs[1]);
  if (!at || at->size() != 1 || (*at)[0] != k) return false;
  const Node* shape = made_by(g, gather->inputs[0], "Shape");
  return shape != nullptr && shape->inputs[0] == y && shape->attrs.empty();
}

/// The outer value a body value captures by name, or kNoValue.
ValueId captured(const Graph& outer, const Graph& body, ValueId v) {
  if (v < 0 || body.value(v).producer >= 0 || body.value(v).initializer) return kNoValue;
  return outer.find_value(body.value(v).name);
}

/// A body value's constant integers: its own initializer, or that of the
/// outer value it captures (exporters leave loop constants outside).
bool body_ints(const Graph& outer, const Graph& body, ValueId v, const std::vector<int64_t>& want) {
  if (is_ints(body, v, want)) return true;
  const ValueId o = captured(outer, body, v);
  return o >= 0 && is_ints(outer, o, want);
}

struct Bag {
  ValueId weight = kNoValue, ids = kNoValue;  // outer: [V, D] table, [B, L] ids
  const Node* reduce = nullptr;               // the body's reduction (op and attributes)
};

/// Why `loop` is not a lowerable EmbeddingBag; "" with `bag` set when it is.
std::string match(const Graph& g, const Node& loop, Bag* bag) {
  const auto it = loop.attrs.find("body");
  const auto* body_ptr =
      it == loop.attrs.end() ? nullptr : std::get_if<std::shared_ptr<const Graph>>(&it->second);
  if (body_ptr == nullptr || !*body_ptr) return "no body";
  const Graph& b = **body_ptr;
  if (loop.inputs.size() != 2 || loop.outputs.size() != 1 || b.inputs().size() != 2 ||
      b.outputs().size() != 2)
    return "loop-carried values or several scan outputs";
  // Body: out = Reduce(Gather(W, Slice(X, [S[i]], [E[i]], [0])), [0]).
  const Node* r =
      b.value(b.outputs()[1]).producer >= 0 ? &b.node(b.value(b.outputs()[1]).producer) : nullptr;
  if (r == nullptr ||
      (r->op_type != "ReduceSum" && r->op_type != "ReduceMean" && r->op_type != "ReduceMax"))
    return "the scan output is not a sum, mean or max";
  const bool axes_in = r->inputs.size() > 1;
  if (r->attr_int("keepdims", 1) != 0 ||
      (axes_in ? !body_ints(g, b, r->inputs[1], {0})
               : r->attr_ints("axes") != std::vector<int64_t>{0}))
    return "the reduction is not over axis 0 without keepdims";
  const Node* gw = made_by(b, r->inputs[0], "Gather");
  if (gw == nullptr || gw->attr_int("axis", 0) != 0) return "no row gather before the reduction";
  const ValueId w = captured(g, b, gw->inputs[0]);
  if (w < 0 || !g.value(w).initializer || g.value(w).initializer->rank() != 2)
    return "the table is not a constant matrix";
  const Node* sl = made_by(b, gw->inputs[1], "Slice");
  if (sl == nullptr || sl->inputs.size() < 3 ||
      (sl->inputs.size() > 3 && !body_ints(g, b, sl->inputs[3], {0})) ||
      (sl->inputs.size() > 4 && sl->inputs[4] >= 0 && !body_ints(g, b, sl->inputs[4], {1})))
    return "the ids are not one slice along axis 0";
  const ValueId x = captured(g, b, sl->inputs[0]);
  ValueId bounds[2];
  for (int k = 0; k < 2; ++k) {
    const Node* un = made_by(b, sl->inputs[1 + k], "Unsqueeze");
    const Node* at = un ? made_by(b, un->inputs[0], "Gather") : nullptr;
    if (at == nullptr || at->inputs[1] != b.inputs()[0])
      return "the slice bounds are not S[i], E[i]";
    bounds[k] = captured(g, b, at->inputs[0]);
  }
  // Outer: X = Reshape(Y, [-1]) with Y [B, L]; S = Concat(Range(0, B*L, L), ...);
  // E = S[1:]; the trip count is E's length.
  const Node* flat = x >= 0 ? made_by(g, x, "Reshape") : nullptr;
  if (flat == nullptr || !is_ints(g, flat->inputs[1], {-1}))
    return "the ids are not a flattened tensor";
  const ValueId y = flat->inputs[0];
  if (!g.value(y).shape || g.value(y).shape->rank() != 2) return "the ids are not 2-D";
  const Node* cat = bounds[0] >= 0 ? made_by(g, bounds[0], "Concat") : nullptr;
  const Node* range = cat && !cat->inputs.empty() ? made_by(g, cat->inputs[0], "Range") : nullptr;
  if (range == nullptr || cat->attr_int("axis", 0) != 0 || !is_ints(g, range->inputs[0], {0}) ||
      !is_dim_of(g, range->inputs[2], y, 1))
    return "the bag starts are not Range(0, ., L) over the ids' row length";
  const Node* total = made_by(g, range->inputs[1], "ReduceProd");
  const Node* total_shape = total ? made_by(g, total->inputs[0], "Shape") : nullptr;
  if (total_shape == nullptr || total_shape->inputs[0] != y || total->attr_int("keepdims", 1) != 0)
    return "the offsets' end is not the ids' element count";
  const Node* ends = bounds[1] >= 0 ? made_by(g, bounds[1], "Slice") : nullptr;
  if (ends == nullptr || ends->inputs[0] != bounds[0] || !is_ints(g, ends->inputs[1], {1}) ||
      (ends->inputs.size() > 3 && !is_ints(g, ends->inputs[3], {0})) ||
      (ends->inputs.size() > 4 && ends->inputs[4] >= 0 && !is_ints(g, ends->inputs[4], {1})))
    return "the bag ends are not the starts shifted by one";
  const auto end_at = ints(g, ends->inputs[2]);
  if (!end_at || end_at->size() != 1 || (*end_at)[0] < (int64_t{1} << 30))
    return "the bag ends stop early";
  if (!is_dim_of(g, loop.inputs[0], bounds[1], 0)) return "the trip count is not the bag count";
  if (const auto c = constant_of(g, loop.inputs[1]);
      c == nullptr || c->numel() != 1 || tensor_element_as_double(*c, 0) == 0.0)
    return "the loop condition is not a constant true";
  bag->weight = w;
  bag->ids = y;
  bag->reduce = r;
  return {};
}

/// The bag's reduction (the body's Reduce op and attributes) of `bags`
/// [B, L, D] over axis 1 without keepdims, written to `out`; the axes an
/// input or an attribute as the body's were.
void add_bag_reduction(passes::Rewriter& rw, const Node& loop, const Node& body_reduce,
                       ValueId bags, ValueId out) {
  Node reduce;
  reduce.name = rw.node_name(loop.name + "_" + body_reduce.op_type);
  reduce.op_type = body_reduce.op_type;
  reduce.attrs = body_reduce.attrs;
  reduce.attrs["keepdims"] = int64_t{0};
  reduce.inputs = {bags};
  if (body_reduce.inputs.size() > 1)
    reduce.inputs.push_back(rw.add_constant(loop.name + "_axes", Tensor::from<int64_t>({1}, {1})));
  else
    reduce.attrs["axes"] = std::vector<int64_t>{1};
  reduce.outputs = {out};
  rw.add_node(std::move(reduce));
}

/// TorchScript's form: Reduce(Gather(weight, ids)) over axis 1.
void lower_torchscript(passes::Rewriter& rw, const Graph& in, const Node& loop, const Bag& bag) {
  const ValueId rows = rw.new_value(loop.name + "_rows", in.value(bag.weight).dtype);
  Node gather;
  gather.name = rw.node_name(loop.name + "_gather");
  gather.op_type = "Gather";
  gather.inputs = {bag.weight, bag.ids};
  gather.outputs = {rows};
  rw.add_node(std::move(gather));
  add_bag_reduction(rw, loop, *bag.reduce, rows, loop.outputs[0]);
}

/// The dynamo form: Reduce(Reshape(rows, [-1, L, D])) over axis 1.
void lower_dynamo(passes::Rewriter& rw, const Graph& in, const Node& loop,
                  const passes::DynamoBag& d) {
  const ValueId bags = rw.new_value(loop.name + "_bags", in.value(d.rows).dtype);
  Node reshape;
  reshape.name = rw.node_name(loop.name + "_bags");
  reshape.op_type = "Reshape";
  reshape.inputs = {d.rows, rw.add_constant(loop.name + "_bag_shape",
                                            Tensor::from<int64_t>({3}, {-1, d.length, d.width}))};
  reshape.outputs = {bags};
  rw.add_node(std::move(reshape));
  add_bag_reduction(rw, loop, *d.reduce, bags, in.node(d.concat).outputs[0]);
}

}  // namespace

Result<Graph> lower_embedding_bag(const Graph& in, PassStats* stats) {
  bool any = false;
  for (const Node& n : in.nodes()) any = any || n.op_type == "Loop";
  if (!any) return in;
  passes::Rewriter rw(in);
  int count = 0;
  // For the dynamo form: the graph with every shape the rules tell (same ids).
  std::unique_ptr<Graph> shaped;
  std::unique_ptr<passes::ShapeValues> values;
  std::unique_ptr<passes::Uses> uses;
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    const Node& n = in.node(static_cast<NodeId>(i));
    if (n.op_type != "Loop" || !n.domain.empty()) continue;
    if (n.inputs.size() == 4 && n.inputs[0] < 0) {  // no trip count: the dynamo form
      if (!shaped) {
        shaped = std::make_unique<Graph>(in);
        passes::propagate_shapes(*shaped);
        values = std::make_unique<passes::ShapeValues>(*shaped);
        uses = std::make_unique<passes::Uses>(*shaped);
      }
      passes::DynamoBag d;
      const std::string why =
          passes::match_dynamo_embedding_bag(*shaped, static_cast<NodeId>(i), *uses, *values, &d);
      if (!why.empty() || rw.taken(d.concat)) {
        HONE_LOG_DEBUG("lower_embedding_bag: {} stays: {}", n.describe(), why);
        continue;
      }
      lower_dynamo(rw, in, n, d);
      rw.remove(static_cast<NodeId>(i));
      rw.remove(d.concat);
      ++count;
      continue;
    }
    Bag bag;
    if (const std::string why = match(in, n, &bag); !why.empty()) {
      HONE_LOG_DEBUG("lower_embedding_bag: {} stays: {}", n.describe(), why);
      continue;
    }
    lower_torchscript(rw, in, n, bag);
    rw.remove(static_cast<NodeId>(i));
    ++count;
  }
  return passes::finish_pass(in, rw, count, stats);
}

}  // namespace hone
