// The EmbeddingBag form PyTorch's dynamo exporter writes (torch >= 2.9's
// default; onnxscript's embedding_bag), matched for lower_embedding_bag
// (embedding_bag.cpp): the ids flattened and their rows gathered outside the
// loop (times per-sample weights of ones), bag offsets
// Concat(Range(0, E, L), [N]) with N the ids' count, and a Loop with no trip
// count that carries a sequence and an index i:
//
//   start = offsets[i:i+1]; end = offsets[i+1:i+2]
//   row = If(start == end, zeros[1, D], Reduce(rows[start:end], axes=[0], keepdims=1))
//   seq = SequenceInsert(seq, row); i = i + 1; cond = i < Size(Range(...))
//
// then ConcatFromSequence(seq, axis=0). Where the graph proves every bag has
// the same length L >= 1 (E and N are the same expression of dims, rows has N
// rows), no bag is empty, bag b is rows[b*L, (b+1)*L), and the result is
// Reduce(Reshape(rows, [-1, L, D]), axes=[1], keepdims=0).
#include <cctype>
#include <string>
#include <vector>

#include "passes/embedding_bag.h"
#include "passes/rewrite.h"

namespace hone::passes {
namespace {

/// Graphs from the innermost out: a value a graph reads without making it
/// (not an input, not an initializer) is found by name one level out.
struct Scope {
  std::vector<const Graph*> levels;

  /// The graph level and value where `v` of level `k` is defined.
  std::pair<size_t, ValueId> home(size_t k, ValueId v) const {
    while (v >= 0 && k + 1 < levels.size()) {
      const Graph& g = *levels[k];
      const Value& val = g.value(v);
      if (val.producer >= 0 || val.initializer) break;
      bool input = false;
      for (ValueId i : g.inputs()) input |= i == v;
      if (input) break;
      // The nearest enclosing graph that knows the name (a branch may read a
      // value of the main graph that the loop body never mentions).
      const std::string& name = val.name;
      v = kNoValue;
      while (v < 0 && k + 1 < levels.size()) v = levels[++k]->find_value(name);
    }
    return {k, v};
  }

  /// The node making `v` (of level k), seen through captures.
  const Node* made(size_t k, ValueId v, const char* op, size_t* at = nullptr) const {
    auto [lk, lv] = home(k, v);
    if (lv < 0) return nullptr;
    const Graph& g = *levels[lk];
    const NodeId p = g.value(lv).producer;
    if (p < 0 || g.node(p).op_type != op) return nullptr;
    if (at != nullptr) *at = lk;
    return &g.node(p);
  }

  /// The constant integers of `v` (of level k), through captures and CastLike.
  std::optional<std::vector<int64_t>> ints(size_t k, ValueId v) const {
    size_t at = 0;
    if (const Node* c = made(k, v, "CastLike", &at); c != nullptr && !c->inputs.empty())
      return ints(at, c->inputs[0]);
    auto [lk, lv] = home(k, v);
    if (lv < 0) return std::nullopt;
    const Tensor* t = constant_of(*levels[lk], lv);
    if (t == nullptr || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32))
      return std::nullopt;
    std::vector<int64_t> out;
    for (int64_t i = 0; i < t->numel(); ++i) out.push_back(tensor_element_as_int64(*t, i));
    return out;
  }

  bool is(size_t k, ValueId v, int64_t want) const {
    const auto got = ints(k, v);
    return got && got->size() == 1 && (*got)[0] == want;
  }

  /// The outer value `v` of level k reads, or kNoValue when `v` is made inside.
  ValueId outer(size_t k, ValueId v) const {
    auto [lk, lv] = home(k, v);
    return lk + 1 == levels.size() ? lv : kNoValue;
  }
};

const Graph* subgraph(const Node& n, const char* name) {
  const auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return nullptr;
  const auto* g = std::get_if<std::shared_ptr<const Graph>>(&it->second);
  return g != nullptr ? g->get() : nullptr;
}

/// `v` (of level k) is `base` + `c`, the constant perhaps cast like base.
bool is_plus(const Scope& s, size_t k, ValueId v, ValueId base, int64_t c) {
  const Node* add = s.made(k, v, "Add");
  return add != nullptr && add->inputs.size() == 2 && add->inputs[0] == base &&
         s.is(k, add->inputs[1], c);
}

/// A 1-element Slice along axis 0 (axes and steps absent or [0], [1]).
bool plain_slice(const Scope& s, size_t k, const Node& n) {
  return n.inputs.size() >= 3 &&
         (n.inputs.size() < 4 || n.inputs[3] < 0 || s.is(k, n.inputs[3], 0)) &&
         (n.inputs.size() < 5 || n.inputs[4] < 0 || s.is(k, n.inputs[4], 1));
}

/// `v` seen through the reshapes and casts that keep a scalar index's value.
ValueId index_source(const Graph& g, ValueId v) {
  for (int hops = 0; v >= 0 && hops < 4; ++hops) {
    const NodeId p = g.value(v).producer;
    if (p < 0) return v;
    const Node& n = g.node(p);
    if (n.op_type != "Reshape" && n.op_type != "Unsqueeze" && n.op_type != "Squeeze" &&
        n.op_type != "Identity" && n.op_type != "Cast")
      return v;
    v = n.inputs[0];
  }
  return v;
}

/// Equal for every value of the symbols (canonical forms; a dim a file names
/// "4*batch" was read as hone's "(4*batch)" by ops::dim_from_name).
bool same_int(const ops::SymInt& a, const ops::SymInt& b) {
  return a.is_known() && a == b;
}

/// A dim whose meaning hone knows: a number, a plain name, or hone's own name
/// of an expression ("(4*batch)"). Not an exporter's "unk__3" (a name for
/// "unknown") nor a name in a notation hone does not read ("Max(1, s0)").
bool readable(const Dim& d) {
  if (d.is_static() || ops::is_derived(d)) return true;
  const std::string& s = d.symbol_name();
  if (s.empty() || s.rfind("unk__", 0) == 0) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

/// A Shape node that gives every dim (no start or end past the default).
bool whole_shape(const Node& n) {
  return n.op_type == "Shape" && n.attr_int("start", 0) == 0 && !n.has_attr("end");
}

/// The number of elements of the 1-D `v`: its dim where hone can read it,
/// else that of the tensor it flattens (Reshape to [-1]) or takes the shape
/// of (Expand of one element).
std::optional<ops::SymInt> element_count(const Graph& g, ValueId v) {
  for (int hops = 0; v >= 0 && hops < 4; ++hops) {
    const Value& val = g.value(v);
    if (val.shape && val.shape->rank() == 1 && readable((*val.shape)[0]))
      return ops::SymInt::of((*val.shape)[0]);
    if (val.shape && val.shape->rank() != 1) {  // the tensor flattened: the product of its dims
      ops::SymInt n(1);
      for (const Dim& d : val.shape->dims()) {
        if (!readable(d)) return std::nullopt;
        n = n * ops::SymInt::of(d);
      }
      return n;
    }
    const NodeId p = val.producer;
    if (p >= 0 && g.node(p).op_type == "Expand" && g.node(p).inputs.size() == 2) {
      // Expand(c, Shape(x)) of one element c: x's shape, so x's count.
      const Tensor* c = constant_of(g, g.node(p).inputs[0]);
      const ValueId sv = g.node(p).inputs[1];
      const NodeId sp = sv >= 0 ? g.value(sv).producer : -1;
      if (c == nullptr || c->numel() != 1 || sp < 0 || !whole_shape(g.node(sp)))
        return std::nullopt;
      v = g.node(sp).inputs[0];
      continue;
    }
    if (p < 0 || g.node(p).op_type != "Reshape" || g.node(p).inputs.size() < 2) return std::nullopt;
    const Tensor* target = constant_of(g, g.node(p).inputs[1]);
    if (target == nullptr || target->numel() != 1 || tensor_element_as_int64(*target, 0) != -1)
      return std::nullopt;
    v = g.node(p).inputs[0];
  }
  return std::nullopt;
}

/// The number of rows of the 2-D `v` (or of the 1-D `v` seen as a column):
/// its dim 0 where hone can read it; else through Gather(table, ids) (one row
/// per id), Unsqueeze(x, [1]) (x's count) and Mul / Div by a column of the
/// same rows or of one (the per-sample weights).
std::optional<ops::SymInt> row_count(const Graph& g, ValueId v, int depth = 0) {
  if (v < 0 || depth > 4) return std::nullopt;
  const Value& val = g.value(v);
  if (val.shape && val.shape->rank() == 2 && readable((*val.shape)[0]))
    return ops::SymInt::of((*val.shape)[0]);
  if (val.producer < 0) return std::nullopt;
  const Node& n = g.node(val.producer);
  if (n.op_type == "Gather" && n.inputs.size() == 2 && n.attr_int("axis", 0) == 0)
    return element_count(g, n.inputs[1]);
  if (n.op_type == "Unsqueeze" && n.inputs.size() == 2) {
    const Tensor* axes = constant_of(g, n.inputs[1]);
    if (axes == nullptr || axes->numel() != 1 || tensor_element_as_int64(*axes, 0) != 1)
      return std::nullopt;
    return element_count(g, n.inputs[0]);
  }
  if ((n.op_type == "Mul" || n.op_type == "Div") && n.inputs.size() == 2) {
    const auto a = row_count(g, n.inputs[0], depth + 1);
    const auto b = row_count(g, n.inputs[1], depth + 1);
    if (a && b && (same_int(*a, *b) || (b->is_number() && b->number() == 1))) return a;
  }
  return std::nullopt;
}

}  // namespace

std::string match_dynamo_embedding_bag(const Graph& g, NodeId loop_id, const Uses& uses,
                                       ShapeValues& values, DynamoBag* bag) {
  const Node& loop = g.node(loop_id);
  const Graph* body = subgraph(loop, "body");
  if (body == nullptr) return "no body";
  if (loop.inputs.size() != 4 || loop.inputs[0] >= 0 || loop.outputs.size() != 2 ||
      body->inputs().size() != 4 || body->outputs().size() != 3)
    return "not a loop with no trip count carrying a sequence and an index";
  const Node* empty = uses.producer(loop.inputs[2]);
  if (empty == nullptr || empty->op_type != "SequenceEmpty")
    return "the sequence does not start empty";
  const Scope outer{{&g}};
  if (!outer.is(0, loop.inputs[3], 0)) return "the index does not start at 0";
  const auto& seq_readers = uses.readers(loop.outputs[0]);
  if (seq_readers.size() != 1 || uses.is_output(loop.outputs[0]) ||
      !uses.readers(loop.outputs[1]).empty() || uses.is_output(loop.outputs[1]))
    return "the loop's results are read by more than one ConcatFromSequence";
  const Node& concat = g.node(seq_readers[0]);
  if (concat.op_type != "ConcatFromSequence" || concat.attr_int("axis", 0) != 0 ||
      concat.attr_int("new_axis", 0) != 0)
    return "the sequence is not concatenated along axis 0";

  // The body: index and condition.
  const Scope in_body{{body, &g}};
  const ValueId i = body->inputs()[3];
  if (!is_plus(in_body, 0, body->outputs()[2], i, 1)) return "the index does not step by one";
  const Node* next_cond = in_body.made(0, body->outputs()[0], "Less");
  const Node* first_cond = outer.made(0, loop.inputs[1], "Less");
  if (next_cond == nullptr || next_cond->inputs[0] != body->outputs()[2] || first_cond == nullptr ||
      !outer.is(0, first_cond->inputs[0], 0))
    return "the loop does not run while the index is below a count";
  const ValueId count = first_cond->inputs[1];
  if (in_body.outer(0, next_cond->inputs[1]) != count)
    return "the two conditions read other counts";

  // One row a step: SequenceInsert(seq, If(start == end, zeros, Reduce(rows[start:end]))).
  const Node* insert = in_body.made(0, body->outputs()[1], "SequenceInsert");
  if (insert == nullptr || insert->inputs.size() != 2 || insert->inputs[0] != body->inputs()[2])
    return "the step does not append one row";
  const Node* branch = in_body.made(0, insert->inputs[1], "If");
  const Graph* els = branch != nullptr ? subgraph(*branch, "else_branch") : nullptr;
  if (els == nullptr || els->outputs().size() != 1) return "the row is not an If over the bag";
  const Scope in_else{{els, body, &g}};
  const NodeId rp = els->value(els->outputs()[0]).producer;
  const Node* reduce = rp >= 0 ? &els->node(rp) : nullptr;
  if (reduce == nullptr || (reduce->op_type != "ReduceSum" && reduce->op_type != "ReduceMean" &&
                            reduce->op_type != "ReduceMax"))
    return "the bag's row is not a sum, mean or max";
  if (reduce->attr_int("keepdims", 1) != 1 ||
      (reduce->inputs.size() > 1 ? !in_else.is(0, reduce->inputs[1], 0)
                                 : reduce->attr_ints("axes") != std::vector<int64_t>{0}))
    return "the reduction is not over axis 0 keeping it";
  const Node* rows_slice = in_else.made(0, reduce->inputs[0], "Slice");
  if (rows_slice == nullptr || !plain_slice(in_else, 0, *rows_slice))
    return "the bag is not one slice of the rows";
  const ValueId rows = in_else.outer(0, rows_slice->inputs[0]);
  auto [start_level, start] = in_else.home(0, rows_slice->inputs[1]);
  auto [end_level, end] = in_else.home(0, rows_slice->inputs[2]);
  if (rows < 0 || start_level != 1 || end_level != 1) return "the bag's bounds are not the step's";
  const Node* same = in_body.made(0, branch->inputs[0], "Equal");
  if (same == nullptr || same->inputs[0] != start || same->inputs[1] != end)
    return "the If does not test for an empty bag";

  // start = offsets[j:j+1], end = offsets[j+1:j+2], j the index.
  const Node* s = in_body.made(0, start, "Slice");
  const Node* e = in_body.made(0, end, "Slice");
  if (s == nullptr || e == nullptr || !plain_slice(in_body, 0, *s) || !plain_slice(in_body, 0, *e))
    return "the bounds are not slices of the offsets";
  const ValueId j = s->inputs[1];
  if (index_source(*body, j) != i || !is_plus(in_body, 0, s->inputs[2], j, 1) ||
      !is_plus(in_body, 0, e->inputs[1], j, 1) || !is_plus(in_body, 0, e->inputs[2], j, 2))
    return "the bounds are not offsets[i], offsets[i+1]";
  const ValueId offsets = in_body.outer(0, s->inputs[0]);
  if (offsets < 0 || in_body.outer(0, e->inputs[0]) != offsets)
    return "the bounds read other offsets";

  // Outside: offsets = Concat(Range(0, E, L), N), count = Size(that Range), E == N.
  const Node* cat = outer.made(0, offsets, "Concat");
  const Node* range = cat != nullptr && cat->inputs.size() == 2 && cat->attr_int("axis", 0) == 0
                          ? outer.made(0, cat->inputs[0], "Range")
                          : nullptr;
  if (range == nullptr || !outer.is(0, range->inputs[0], 0))
    return "the offsets are not Range(0, .., L) and a total";
  const auto step = outer.ints(0, range->inputs[2]);
  if (!step || step->size() != 1 || (*step)[0] < 1) return "the bag length is not a constant >= 1";
  const Node* size = outer.made(0, count, "Size");
  if (size == nullptr || size->inputs[0] != cat->inputs[0])
    return "the count is not the number of bags";
  // N = Shape(F)[0] for 1-D ids F: the element count of the tensor F flattens.
  const Node* count_shape = outer.made(0, cat->inputs[1], "Shape");
  if (count_shape == nullptr || !whole_shape(*count_shape))
    return "the offsets' total is not the ids' count";
  const auto stop = values.of(range->inputs[1]);
  const std::optional<ops::SymInt> total = element_count(g, count_shape->inputs[0]);
  if (!stop || stop->size() != 1 || !(*stop)[0].is_known() || !total ||
      !same_int((*stop)[0], *total))
    return "the offsets' end (" + (stop && stop->size() == 1 ? (*stop)[0].to_string() : "?") +
           ") is not the ids' count (" + (total ? total->to_string() : "?") + ")";
  // rows: one per id (Gather keeps the ids' dim; the per-sample weights broadcast).
  const Value& r = g.value(rows);
  const auto row_n = row_count(g, rows);
  if (!r.shape || r.shape->rank() != 2 || !(*r.shape)[1].is_static() || !row_n ||
      !same_int(*row_n, *total))
    return "the rows are not one [count, D] matrix";
  bag->rows = rows;
  bag->length = (*step)[0];
  bag->width = (*r.shape)[1].value();
  bag->reduce = reduce;
  bag->concat = seq_readers[0];
  return {};
}

}  // namespace hone::passes
