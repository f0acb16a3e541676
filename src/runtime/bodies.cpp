#include "runtime/bodies.h"

#include <algorithm>
#include <set>

#include "core/log.h"
#include "eval/control_flow.h"

namespace hone::runtime {

namespace {

/// Bodies inside bodies are compiled down to this depth; deeper ones are interpreted.
constexpr int kMaxBodyDepth = 4;

bool typed_tensor(const Value& v) {
  return v.kind == ValueKind::kTensor && v.dtype != DType::kUndefined;
}

/// `body` with its formal inputs first and then every name it reads from
/// enclosing scopes (its own captures and those of the bodies inside it),
/// typed from `outer`, the graph of the node that holds it. Captured
/// constants become the body's own initializers. kUnsupported when a value
/// the body takes or returns is not a typed tensor (sequences, optionals).
Result<StandaloneBody> standalone_body(const Graph& body, const Graph& outer) {
  StandaloneBody out{body, {}};
  Graph& g = out.graph;
  std::vector<std::string> names;
  for (ValueId v : g.captured_values()) names.push_back(g.value(v).name);
  const std::set<ValueId> formal(g.inputs().begin(), g.inputs().end());
  for (const Node& n : g.nodes())
    for (const std::string& name : captured_names(n)) {
      const ValueId id = g.find_value(name);
      const bool defined = id != kNoValue && (g.value(id).producer >= 0 ||
                                              g.value(id).initializer || formal.count(id) != 0);
      if (!defined && std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    }
  std::vector<ValueId> inputs = g.inputs();
  for (const std::string& name : names) {
    const ValueId ov = outer.find_value(name);
    if (ov == kNoValue)
      return fail(ErrorCode::kUnsupported,
                  "it reads '" + name + "', which the enclosing graph does not define");
    const Value& o = outer.value(ov);
    ValueId id = g.find_value(name);
    if (id == kNoValue) {
      Value v;
      v.name = name;
      id = g.add_value(std::move(v));
    }
    Value& mine = g.value(id);
    if (o.initializer) {
      mine.initializer = o.initializer;
      mine.dtype = o.initializer->dtype();
      mine.shape = Shape::of(o.initializer->shape());
      continue;
    }
    if (!typed_tensor(o))
      return fail(ErrorCode::kUnsupported,
                  "it reads '" + name + "', which is not a tensor of a known type");
    mine.kind = ValueKind::kTensor;
    mine.dtype = o.dtype;
    if (!mine.shape) mine.shape = o.shape;
    inputs.push_back(id);
    out.captures.push_back(name);
  }
  g.set_inputs(std::move(inputs));
  for (ValueId v : g.inputs())
    if (!typed_tensor(g.value(v)))
      return fail(ErrorCode::kUnsupported,
                  "its input '" + g.value(v).name + "' is not a tensor of a known type");
  for (ValueId v : g.outputs())
    if (!typed_tensor(g.value(v)))
      return fail(ErrorCode::kUnsupported,
                  "its output '" + g.value(v).name + "' is not a tensor of a known type");
  if (g.opsets().empty()) g.opsets() = outer.opsets();
  return out;
}

/// A node's name in a body fallback's path; its op where it has none.
std::string path_name(const Node& n) {
  return n.name.empty() ? n.op_type : n.name;
}

}  // namespace

std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> bodies_of(const Node& n) {
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> out;
  for (const auto& [key, attr] : n.attrs) {
    if (const auto* g = std::get_if<std::shared_ptr<const Graph>>(&attr); g && *g)
      out.emplace_back(key, *g);
    if (const auto* gs = std::get_if<std::vector<std::shared_ptr<const Graph>>>(&attr))
      for (size_t i = 0; i < gs->size(); ++i)
        if ((*gs)[i]) out.emplace_back(key + "[" + std::to_string(i) + "]", (*gs)[i]);
  }
  return out;
}

Result<StandaloneBody> body_at(const Graph& body, const Graph& outer, int depth) {
  if (depth + 1 >= kMaxBodyDepth) return fail(ErrorCode::kUnsupported, "nested too deep");
  return standalone_body(body, outer);
}

std::string body_note(std::string_view backend, const Node& n, const std::string& attr, int depth,
                      const Partition* plan, const Graph& given, const std::string& why_not) {
  const std::string indent(static_cast<size_t>(2 * depth), ' ');
  std::string line = indent + attr + " of " + n.describe() + ": ";
  if (plan == nullptr) return line + "interpreted: " + why_not;
  line += std::to_string(plan->nodes_on_backend()) + " of " +
          std::to_string((plan->graph ? *plan->graph : given).nodes().size()) +
          " nodes compiled on " + std::string(backend) + ", " + plan->describe(given);
  if (!plan->notes.empty()) line += "\n" + indent + "  " + plan->notes;
  return line;
}

void interpreted_nodes(const Graph& body, const std::string& prefix, const std::string& why,
                       std::vector<Partition::BodyFallback>& out) {
  for (const Node& n : body.nodes()) {
    out.push_back({prefix + path_name(n), n.op_type, why});
    for (const auto& [attr, sub] : bodies_of(n))
      interpreted_nodes(*sub, prefix + path_name(n) + "/" + attr + "/", why, out);
  }
}

std::vector<Partition::BodyFallback> fallbacks_of(const Partition& bp, const Graph& bg) {
  std::vector<Partition::BodyFallback> out;
  for (const auto& [id, why] : bp.fallbacks)
    out.push_back({path_name(bg.node(id)), bg.node(id).op_type, why});
  out.insert(out.end(), bp.body_fallbacks.begin(), bp.body_fallbacks.end());
  return out;
}

void account_bodies(const Graph& g, NodeId id, const std::vector<BodyOutcome>& bodies,
                    std::string_view backend, Partition& p) {
  const Node& n = g.node(id);
  std::string why;
  for (const BodyOutcome& b : bodies) {
    for (const Partition::BodyFallback& f : b.fallbacks)
      p.body_fallbacks.push_back({path_name(n) + "/" + b.attr + "/" + f.path, f.op, f.reason});
    if (const size_t k = b.fallbacks.size(); k > 0)
      why += (why.empty() ? "" : ", ") + b.attr + " has " + std::to_string(k) +
             (k == 1 ? " node" : " nodes") + " on the fallback";
  }
  auto it = std::find_if(p.fallbacks.begin(), p.fallbacks.end(),
                         [id](const auto& f) { return f.first == id; });
  if (why.empty() && eval::is_control_flow(n)) {
    if (it != p.fallbacks.end()) p.fallbacks.erase(it);
    p.controls.emplace_back(id, std::string(n.op_type == "If" ? "branches" : "body") +
                                    " compiled on " + std::string(backend));
    return;
  }
  if (!why.empty() && it != p.fallbacks.end())
    it->second = "control flow stays on the fallback while a body does: " + why;
}

void split_controls(const Graph& g, Partition& p) {
  if (p.controls.empty()) return;
  std::set<NodeId> control;
  for (const auto& [id, how] : p.controls) control.insert(id);
  std::vector<Block> blocks;
  for (Block& b : p.blocks) {
    if (b.on_backend) {
      blocks.push_back(std::move(b));
      continue;
    }
    Block part;
    for (NodeId id : b.nodes) {
      if (!control.contains(id)) {
        part.nodes.push_back(id);
        continue;
      }
      if (!part.nodes.empty()) blocks.push_back(std::exchange(part, Block{}));
      Block c;
      c.control = true;
      c.nodes = {id};
      blocks.push_back(std::move(c));
    }
    if (!part.nodes.empty()) blocks.push_back(std::move(part));
  }
  p.blocks = std::move(blocks);
  fill_block_io(g, p.blocks);
}

std::vector<NodeId> body_holders(const Graph& g, const Partition& p) {
  std::vector<NodeId> out;
  for (const Block& b : p.blocks)
    if (!b.on_backend)
      for (NodeId id : b.nodes)
        if (!bodies_of(g.node(id)).empty()) out.push_back(id);
  return out;
}

Result<void> settle_bodies(const Graph& g, int depth, std::string_view backend, bool full,
                           const BodyVisitor& visit, Partition& p) {
  for (NodeId id : body_holders(g, p)) {
    const Node& n = g.node(id);
    std::vector<BodyOutcome> outcomes;
    for (const auto& [attr, body] : bodies_of(n)) {
      Result<StandaloneBody> sb = body_at(*body, g, depth);
      Result<std::shared_ptr<const Partition>> bp = sb ? visit(body, *sb) : fail(sb.error());
      std::string line;
      BodyOutcome out{attr, {}};
      if (bp) {
        const Partition& planned = **bp;
        line = body_note(backend, n, attr, depth, &planned, sb->graph, {});
        out.fallbacks = fallbacks_of(planned, planned.graph ? *planned.graph : sb->graph);
      } else {
        line = body_note(backend, n, attr, depth, nullptr, *body, bp.error().message());
        HONE_LOG_DEBUG("{}: {}", backend, line);
        interpreted_nodes(*body, "", "in a body that runs interpreted: " + bp.error().message(),
                          out.fallbacks);
      }
      p.notes += (p.notes.empty() ? "" : "\n") + line;
      outcomes.push_back(std::move(out));
    }
    account_bodies(g, id, outcomes, backend, p);
  }
  split_controls(g, p);
  if (full) HONE_CHECK_OK(check_full(g, p));
  return {};
}

Error not_full(const std::string& node, const std::string& why) {
  return Error(ErrorCode::kUnsupported, "require_full_compilation is set, but node " + node +
                                            " cannot run on this backend: " + why);
}

Result<void> check_full(const Graph& g, const Partition& p) {
  // A body's fallback first: the control-flow node holding it falls back for it.
  if (!p.body_fallbacks.empty()) {
    const Partition::BodyFallback& f = p.body_fallbacks.front();
    return fail(not_full("'" + f.path + "' (" + f.op + ")", f.reason));
  }
  if (!p.fallbacks.empty())
    return fail(not_full(g.node(p.fallbacks.front().first).describe(), p.fallbacks.front().second));
  return {};
}

}  // namespace hone::runtime
