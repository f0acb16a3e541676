// lower_control_flow: If and Loop whose course is known before the model runs
// become the nodes they would run, which every backend compiles (none
// compiles a subgraph, so each such node and what it carries ran on the
// reference, and a sequence between blocks stopped some backends outright).
//
// - If with a constant condition (PyTorch's TorchScript exporter writes
//   `squeeze(d)` of a dim it cannot see is 1 as If(dim == 1, Squeeze,
//   Identity); once the shape folders make the condition constant) becomes
//   its chosen branch's nodes.
// - Loop with a constant trip count (at most kMaxTrips) and no condition that
//   can turn false, whose one carried value starts as SequenceEmpty and gets
//   one SequenceInsert at its end each iteration, read only by SequenceAt at
//   constant positions (torch.tensor_split's export: a Slice per piece, the
//   last appended after the Loop by SequenceInsert) becomes the body
//   unrolled once per piece read, the iteration number a constant, each
//   SequenceAt the piece it names.
// Bodies with their own subgraphs, or capturing a name the graph lacks, stay
// (the reason logged at debug level).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hone/passes.h"
#include "passes/rewrite.h"

namespace hone {
namespace {

using passes::constant_of;

constexpr int64_t kMaxTrips = 64;

/// The one-element constant integer or bool behind `v`, or nothing.
std::optional<int64_t> scalar_int(const Graph& g, ValueId v) {
  const Tensor* t = v < 0 ? nullptr : constant_of(g, v);
  if (t == nullptr || t->numel() != 1) return std::nullopt;
  if (t->dtype() == DType::kBool) return t->data<bool>()[0] ? 1 : 0;
  if (t->dtype() != DType::kI64 && t->dtype() != DType::kI32) return std::nullopt;
  return tensor_element_as_int64(*t, 0);
}

/// Body value `v`'s constant value, looking through Identity nodes: its own
/// initializer or that of the outer value it captures by name.
std::optional<int64_t> body_scalar(const Graph& outer, const Graph& body, ValueId v) {
  for (int hops = 0; hops < 4 && v >= 0; ++hops) {
    const NodeId p = body.value(v).producer;
    if (p < 0) break;
    const Node& n = body.node(p);
    if (n.op_type != "Identity" || n.inputs.size() != 1) return std::nullopt;
    v = n.inputs[0];
  }
  if (v < 0 || body.value(v).producer >= 0) return std::nullopt;
  if (auto c = scalar_int(body, v)) return c;
  const ValueId o = outer.find_value(body.value(v).name);
  return o < 0 ? std::nullopt : scalar_int(outer, o);
}

/// Copies `body`'s nodes but `skip` into the graph `rw` rewrites, `map`
/// taking body values to outer ones (filled with each copy's outputs; the body
/// inputs must be in it already). Initializers become constants and captured
/// names the outer values of that name. Returns why not, or "".
std::string copy_body(const Graph& outer, const Graph& body, passes::Rewriter& rw,
                      const std::string& prefix, std::map<ValueId, ValueId>* map,
                      NodeId skip = -1) {
  auto outer_of = [&](ValueId v) -> ValueId {
    if (v < 0) return kNoValue;
    if (auto it = map->find(v); it != map->end()) return it->second;
    const Value& val = body.value(v);
    ValueId o = kNoValue;
    if (val.initializer) {
      o = rw.add_constant(prefix + val.name, *val.initializer);
    } else {
      o = outer.find_value(val.name);
      if (o < 0) return kNoValue;
    }
    (*map)[v] = o;
    return o;
  };
  for (size_t i = 0; i < body.nodes().size(); ++i) {
    if (static_cast<NodeId>(i) == skip) continue;
    const Node& bn = body.node(static_cast<NodeId>(i));
    for (const auto& [key, attr] : bn.attrs)
      if (std::holds_alternative<std::shared_ptr<const Graph>>(attr) ||
          std::holds_alternative<std::vector<std::shared_ptr<const Graph>>>(attr))
        return "its body's node '" + bn.name + "' has a subgraph";
    Node m = bn;
    m.name = rw.node_name(prefix + bn.name);
    for (ValueId& in : m.inputs) {
      if (in < 0) continue;
      const ValueId o = outer_of(in);
      if (o < 0) return "its body reads '" + body.value(in).name + "', which the graph lacks";
      in = o;
    }
    for (ValueId& out : m.outputs) {
      if (out < 0) continue;
      const ValueId o = rw.new_value(prefix + body.value(out).name, body.value(out).dtype);
      (*map)[out] = o;
      out = o;
    }
    rw.add_node(std::move(m));
  }
  return {};
}

/// Makes `to` the value `from` (an output of a removed node) stood for:
/// readers redirected, or an Identity into it where it is a graph output.
void stand_in(passes::Rewriter& rw, const passes::Uses& uses, ValueId from, ValueId to,
              const std::string& name) {
  if (!uses.is_output(from)) {
    rw.replace_uses(from, to);
    return;
  }
  Node id;
  id.name = rw.node_name(name);
  id.op_type = "Identity";
  id.inputs = {to};
  id.outputs = {from};
  rw.add_node(std::move(id));
}

std::string lower_if(const Graph& g, passes::Rewriter& rw, const passes::Uses& uses,
                     const Node& n) {
  const auto cond = n.inputs.empty() ? std::nullopt : scalar_int(g, n.inputs[0]);
  if (!cond) return "its condition is not constant";
  const Graph* branch = n.attr_graph(*cond ? "then_branch" : "else_branch");
  if (branch == nullptr) return "it has no branch for that condition";
  if (branch->outputs().size() != n.outputs.size())
    return "its branch returns " + std::to_string(branch->outputs().size()) + " values for " +
           std::to_string(n.outputs.size()) + " outputs";
  if (!branch->inputs().empty()) return "its branch takes inputs";
  std::map<ValueId, ValueId> map;
  if (std::string why = copy_body(g, *branch, rw, n.name + "/", &map); !why.empty()) return why;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const ValueId b = branch->outputs()[i];
    auto it = map.find(b);
    ValueId got = it != map.end() ? it->second : kNoValue;
    if (got < 0) {  // a branch returning an initializer or a captured value directly
      const Value& val = branch->value(b);
      got = val.initializer ? rw.add_constant(n.name + "/" + val.name, *val.initializer)
                            : g.find_value(val.name);
      if (got < 0) return "its branch returns '" + val.name + "', which the graph lacks";
    }
    if (n.outputs[i] >= 0) stand_in(rw, uses, n.outputs[i], got, n.name + "_out");
  }
  return {};
}

std::string lower_loop(const Graph& g, passes::Rewriter& rw, const passes::Uses& uses,
                       const Node& n) {
  const Graph* body = n.attr_graph("body");
  if (body == nullptr) return "it has no body";
  if (n.inputs.size() != 3 || n.outputs.size() != 1)
    return "it carries more than one value or has scan outputs";
  const auto trips = scalar_int(g, n.inputs[0]);
  if (!trips || *trips < 0 || *trips > kMaxTrips)
    return "its trip count is not a constant from 0 to " + std::to_string(kMaxTrips);
  if (n.inputs[1] >= 0 && scalar_int(g, n.inputs[1]) != 1) return "its condition is not true";
  const Node* empty = uses.producer(n.inputs[2]);
  if (empty == nullptr || empty->op_type != "SequenceEmpty")
    return "its carried value does not start as SequenceEmpty";
  if (body->inputs().size() != 3 || body->outputs().size() != 2)
    return "its body does not take 3 inputs and return 2";
  const ValueId seq_in = body->inputs()[2];
  const NodeId ins_id = body->value(body->outputs()[1]).producer;
  const Node* insert = ins_id < 0 ? nullptr : &body->node(ins_id);
  if (insert == nullptr || insert->op_type != "SequenceInsert" || insert->inputs.size() != 2 ||
      insert->inputs[0] != seq_in)
    return "its body does not end in SequenceInsert(sequence, piece)";
  for (const Node& bn : body->nodes())
    for (ValueId v : bn.inputs)
      if (v == seq_in && &bn != insert) return "its body reads the sequence elsewhere";
  const ValueId cond_out = body->outputs()[0];
  if (cond_out != body->inputs()[1] && body_scalar(g, *body, cond_out) != 1)
    return "its body's condition may turn false";
  // Pieces appended after the Loop (tensor_split's last one): a chain of
  // SequenceInsert(sequence, piece), each sequence read by the next alone.
  ValueId seq = n.outputs[0];
  std::vector<ValueId> appended;
  std::vector<NodeId> appends;
  for (;;) {
    if (uses.is_output(seq)) return "its sequence is a graph output";
    const auto& rs = uses.readers(seq);
    if (rs.size() != 1 || g.node(rs[0]).op_type != "SequenceInsert") break;
    const Node& app = g.node(rs[0]);
    if (app.inputs.size() != 2 || app.inputs[0] != seq || app.outputs.size() != 1 ||
        rw.taken(rs[0]))
      return "its sequence is read by " + app.describe() + ", which inserts at a position";
    appended.push_back(app.inputs[1]);
    appends.push_back(rs[0]);
    seq = app.outputs[0];
  }
  const int64_t count = *trips + static_cast<int64_t>(appended.size());
  std::vector<std::pair<NodeId, int64_t>> reads;
  for (NodeId r : uses.readers(seq)) {
    const Node& at = g.node(r);
    const bool at_seq = at.op_type == "SequenceAt" && at.inputs.size() == 2 && at.inputs[0] == seq;
    const int64_t pos = at_seq ? scalar_int(g, at.inputs[1]).value_or(count) : count;
    if (pos < -count || pos >= count)
      return "its sequence is read by " + at.describe() + ", not SequenceAt at a constant position";
    if (rw.taken(r)) return "a reader was rewritten already";
    reads.emplace_back(r, pos < 0 ? pos + count : pos);
  }
  // One copy of the body per piece read, in order of the pieces.
  std::map<int64_t, ValueId> piece;
  for (size_t i = 0; i < appended.size(); ++i)
    piece[*trips + static_cast<int64_t>(i)] = appended[i];
  for (const auto& [r, k] : reads) {
    if (piece.count(k)) continue;
    const Value& iter = body->value(body->inputs()[0]);
    const bool one_d = iter.shape && iter.shape->rank() == 1;  // the exporter's [1], not ONNX's []
    std::map<ValueId, ValueId> map;
    map[body->inputs()[0]] =
        rw.add_constant(n.name + "_iter" + std::to_string(k),
                        one_d ? Tensor::from<int64_t>({1}, {k}) : Tensor::scalar<int64_t>(k));
    map[body->inputs()[1]] = rw.add_constant(n.name + "_cond", Tensor::scalar<bool>(true));
    map[seq_in] = kNoValue;  // read only by the SequenceInsert, which is not copied
    const std::string prefix = n.name + "/" + std::to_string(k) + "/";
    if (std::string why = copy_body(g, *body, rw, prefix, &map, ins_id); !why.empty()) return why;
    // The piece: made by a copied node, or an initializer or outer value the body returns as is.
    const ValueId b_piece = insert->inputs[1];
    auto it = map.find(b_piece);
    ValueId got = it != map.end() ? it->second : kNoValue;
    if (got < 0 && body->value(b_piece).initializer)
      got = rw.add_constant(prefix + "piece", *body->value(b_piece).initializer);
    if (got < 0 && it == map.end()) got = g.find_value(body->value(b_piece).name);
    if (got < 0) return "its piece is not made in the body";
    piece[k] = got;
  }
  for (NodeId a : appends) rw.remove(a);
  for (const auto& [r, k] : reads) {
    rw.remove(r);
    stand_in(rw, uses, g.node(r).outputs[0], piece[k], n.name + "_piece");
  }
  if (uses.readers(n.inputs[2]).size() == 1 && !uses.is_output(n.inputs[2]))
    rw.remove(g.value(n.inputs[2]).producer);
  return {};
}

}  // namespace

Result<Graph> lower_control_flow(const Graph& in, PassStats* stats) {
  auto match = [](const Node& n) {
    return (n.op_type == "If" || n.op_type == "Loop") && n.domain.empty();
  };
  std::optional<passes::Uses> uses;
  const Graph* uses_of = nullptr;
  auto lower = [&](const Graph& g, passes::Rewriter& rw, NodeId id) -> std::string {
    if (uses_of != &g) uses.emplace(g), uses_of = &g;
    const Node& n = g.node(id);
    return n.op_type == "If" ? lower_if(g, rw, *uses, n) : lower_loop(g, rw, *uses, n);
  };
  return passes::rewrite_nodes(in, stats, "lower_control_flow", match, lower);
}

}  // namespace hone
