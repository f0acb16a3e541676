#include "backends/common/compiling_backend.h"

#include <optional>
#include <set>

#include "core/log.h"
#include "hone/optimize.h"

namespace hone {

namespace {

/// Bodies inside bodies are compiled down to this depth; deeper ones are interpreted.
constexpr int kMaxBodyDepth = 4;

/// Every subgraph attribute of `n` with its attribute name ("then_branch", "body").
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

/// A body as a graph of its own, and the names it captures (in input order).
struct StandaloneBody {
  Graph graph;
  std::vector<std::string> captures;
};

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

/// `body` (held by a node of `outer`) as a graph of its own, unless it sits
/// too deep to be built at `depth`.
Result<StandaloneBody> body_at(const Graph& body, const Graph& outer, int depth) {
  if (depth + 1 >= kMaxBodyDepth) return fail(ErrorCode::kUnsupported, "nested too deep");
  return standalone_body(body, outer);
}

/// One line of the partition notes for body `attr` of `n`: how `plan`
/// partitioned it (`given` is the standalone body it planned, `plan` null
/// when it stays interpreted because of `why_not`), then its own notes.
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

}  // namespace

/// Hands the fallback interpreter the bodies this backend compiled.
class CompilingBackend::BodyRunner final : public eval::SubgraphRunner {
 public:
  explicit BodyRunner(const CompilingBackend& owner) : owner_(owner) {}

  std::optional<Result<std::vector<eval::RuntimeValue>>> run(
      const Graph& g, const std::vector<eval::RuntimeValue>& inputs,
      const eval::Scope* scope) const override {
    auto it = owner_.bodies_.find(&g);
    if (it == owner_.bodies_.end() || !it->second.program) return std::nullopt;
    const Body& body = it->second;
    if (inputs.size() != body.formal_inputs) return std::nullopt;
    std::vector<Tensor> ts;
    ts.reserve(inputs.size() + body.captures.size());
    for (const eval::RuntimeValue& v : inputs) {
      if (!v.is_tensor()) return std::nullopt;
      ts.push_back(v.tensor);
    }
    for (const std::string& name : body.captures) {
      const eval::RuntimeValue* v = scope != nullptr ? scope->lookup(name) : nullptr;
      if (v == nullptr || !v->is_tensor()) return std::nullopt;
      ts.push_back(v->tensor);
    }
    Result<std::vector<Tensor>> outs = owner_.run_program(*body.program, ts, true);
    if (!outs) return Result<std::vector<eval::RuntimeValue>>(fail(std::move(outs).error()));
    std::vector<eval::RuntimeValue> wrapped;
    wrapped.reserve(outs->size());
    for (Tensor& t : *outs) wrapped.push_back(eval::RuntimeValue::of(std::move(t)));
    return Result<std::vector<eval::RuntimeValue>>(std::move(wrapped));
  }

 private:
  const CompilingBackend& owner_;
};

CompilingBackend::CompilingBackend() {
  mutable_config()
      .declare("min_block_size", int64_t{5}, "supported islands with fewer nodes fall back")
      .declare("require_full_compilation", false, "any node this backend cannot run is an error")
      .declare("allow_reduced_precision", false,
               "bf16/f16 kernels for f32 models when the CPU has them")
      .declare("optimize", true,
               "run the graph passes (folding, BN/bias/LayerNorm/GELU fusion, transposes) before "
               "partitioning");
}

CompilingBackend::~CompilingBackend() = default;

const Partition& CompilingBackend::partition() const {
  static const Partition kEmpty;
  return main_ ? main_->partition : kEmpty;
}

std::vector<NodeSupport> CompilingBackend::propose(const Graph& g) const {
  std::vector<NodeSupport> out;
  out.reserve(g.nodes().size());
  for (const Node& n : g.nodes()) out.push_back(supports(g, n));
  return out;
}

Result<Partition> CompilingBackend::plan_graph(const Graph& g, int depth) const {
  PartitionOptions opts;
  opts.min_block_size = static_cast<int>(config().get<int64_t>("min_block_size", 5));
  opts.require_full_compilation = config().get<bool>("require_full_compilation", false);
  Partition p;
  if (!config().get<bool>("optimize", true)) {
    HONE_TRY(p, partition_graph(g, propose(g), opts));
  } else {
    auto optimized = std::make_shared<Graph>(g);
    HONE_TRY(OptimizeReport report, optimize(*optimized));
    HONE_TRY(p, partition_graph(*optimized, propose(*optimized), opts));
    p.notes = "optimize: " + report.describe();
    p.graph = std::move(optimized);
  }
  if (depth < 0) return p;  // the caller describes the bodies itself
  const Graph& planned = p.graph ? *p.graph : g;
  for (const Block& b : p.blocks) {
    if (b.on_backend) continue;
    for (NodeId id : b.nodes) {
      const Node& n = planned.node(id);
      for (const auto& [attr, body] : bodies_of(n)) {
        Result<StandaloneBody> sb = body_at(*body, planned, depth);
        Result<Partition> bp = sb ? plan_graph(sb->graph, depth + 1) : fail(sb.error());
        const std::string line =
            bp ? body_note(name(), n, attr, depth, &*bp, sb->graph, {})
               : body_note(name(), n, attr, depth, nullptr, *body, bp.error().message());
        p.notes += (p.notes.empty() ? "" : "\n") + line;
      }
    }
  }
  return p;
}

Result<Partition> CompilingBackend::plan(const Graph& g) const {
  return plan_graph(g, 0);
}

Result<std::shared_ptr<CompilingBackend::GraphRun>> CompilingBackend::build_program(const Graph& g,
                                                                                    int depth) {
  auto p = std::make_shared<GraphRun>();
  HONE_TRY(p->partition, plan_graph(g, -1));
  p->graph = p->partition.graph ? p->partition.graph : std::make_shared<const Graph>(g);
  const Graph& graph = *p->graph;
  for (const Block& b : p->partition.blocks) {
    HONE_TRY(Graph sub, extract_block(graph, b));
    Stage st{b, std::move(sub), nullptr, {}};
    if (b.on_backend) {
      HONE_TRY(st.compiled, compile(st.graph));
    } else {
      HONE_CHECK_OK_CTX(
          fallback_.check_supported(st.graph),
          "while preparing the fallback for nodes " + std::string(name()) + " cannot run");
      HONE_TRY(st.schedule, eval::schedule(st.graph));
      // Control flow stays on the fallback; its bodies are built like graphs.
      for (NodeId id : b.nodes) {
        const Node& n = graph.node(id);
        for (const auto& [attr, body] : bodies_of(n)) {
          Result<StandaloneBody> sb = body_at(*body, graph, depth);
          if (sb) prepare_body(sb->graph);
          Result<std::shared_ptr<GraphRun>> bp =
              sb ? build_program(sb->graph, depth + 1) : fail(sb.error());
          std::string line;
          if (!bp) {
            line = body_note(name(), n, attr, depth, nullptr, *body, bp.error().message());
            HONE_LOG_DEBUG("{}: {}", name(), line);
          } else {
            line = body_note(name(), n, attr, depth, &(*bp)->partition, sb->graph, {});
            bodies_[body.get()] = Body{*bp, body->inputs().size(), sb->captures};
          }
          p->partition.notes += (p->partition.notes.empty() ? "" : "\n") + line;
        }
      }
    }
    p->stages.push_back(std::move(st));
  }
  return p;
}

Result<void> CompilingBackend::do_build(const Graph& graph) {
  bodies_.clear();
  if (!body_runner_) body_runner_ = std::make_unique<BodyRunner>(*this);
  fallback_.set_subgraph_runner(body_runner_.get());
  HONE_TRY(main_, build_program(graph, 0));
  if (!main_->partition.notes.empty()) HONE_LOG_DEBUG("{}: {}", name(), main_->partition.notes);
  HONE_LOG_DEBUG("{}: partition of '{}': {}", name(), graph.name(),
                 main_->partition.describe(*main_->graph));
  return {};
}

Result<std::vector<Tensor>> CompilingBackend::run_program(const GraphRun& p,
                                                          const std::vector<Tensor>& inputs,
                                                          bool check) const {
  const Graph& graph = *p.graph;
  if (check) {
    std::vector<eval::RuntimeValue> wrapped;
    wrapped.reserve(inputs.size());
    for (const Tensor& t : inputs) wrapped.push_back(eval::RuntimeValue::of(t));
    HONE_CHECK_OK(eval::check_inputs(graph, wrapped));
  }
  std::vector<Tensor> env(graph.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) env[graph.inputs()[i]] = inputs[i];
  for (const Stage& st : p.stages) {
    std::vector<Tensor> ins;
    ins.reserve(st.block.inputs.size());
    for (ValueId v : st.block.inputs) ins.push_back(env[v]);
    Result<std::vector<Tensor>> outs =
        st.compiled ? st.compiled->run(ins) : fallback_.run_tensors(st.graph, ins, &st.schedule);
    if (!outs) return fail(std::move(outs).error());
    for (size_t o = 0; o < st.block.outputs.size(); ++o)
      env[st.block.outputs[o]] = std::move((*outs)[o]);
  }
  std::vector<Tensor> result;
  for (ValueId v : graph.outputs()) {
    const Value& val = graph.value(v);
    result.push_back(val.initializer ? *val.initializer : env[v]);
  }
  return result;
}

Result<std::vector<Tensor>> CompilingBackend::do_infer(const std::vector<Tensor>& inputs) const {
  return run_program(*main_, inputs, true);
}

}  // namespace hone
