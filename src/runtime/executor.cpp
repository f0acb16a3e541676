#include "runtime/executor.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/log.h"
#include "ops/run_length.h"

namespace hone::runtime {

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

/// The compiler that compiles block `b`: the one it is placed on, else the first.
BlockCompiler* compiler_of(const std::vector<BlockCompiler*>& compilers, const Block& b) {
  for (BlockCompiler* c : compilers)
    if (!b.placed_on.empty() && c->name() == b.placed_on) return c;
  return compilers.front();
}

/// The first compiler proposed on the whole graph. Cut by placed nodes, one
/// of its blocks can lack what a node of it needs from the same block (the
/// shape computation of a dynamic Reshape lands in the block before the cut),
/// and its compiler would refuse that node there. So each compiled block is
/// asked again, as the graph it is compiled as; a node refused there runs on
/// the fallback with the reason, and the blocks are asked again until none
/// refuses (each round moves a node, so it ends). Whichever nodes were
/// placed, the build then succeeds.
Result<void> settle_blocks(const Graph& g, Partition& p,
                           const std::vector<BlockCompiler*>& compilers) {
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<Block> blocks;
    const auto append = [&blocks](Block b) {
      if (!b.on_backend && !blocks.empty() && !blocks.back().on_backend) {
        auto& dst = blocks.back().nodes;
        dst.insert(dst.end(), b.nodes.begin(), b.nodes.end());
      } else {
        blocks.push_back(std::move(b));
      }
    };
    for (Block& b : p.blocks) {
      if (!b.on_backend) {
        append(std::move(b));
        continue;
      }
      BlockCompiler* c = compiler_of(compilers, b);
      HONE_TRY(Graph sub, extract_block(g, b));  // its nodes in b's order
      Block run;
      for (size_t k = 0; k < b.nodes.size(); ++k) {
        const NodeSupport s = c->supports(sub, sub.nodes()[k]);
        if (!s.supported) {
          moved = true;
          std::string why = "in its block on " + std::string(c->name()) +
                            " (cut by nodes placed on other compilers): " + s.reason;
          HONE_LOG_DEBUG("executor: {} runs on the fallback: {}", g.node(b.nodes[k]).describe(),
                         why);
          p.fallbacks.emplace_back(b.nodes[k], std::move(why));
        }
        if (!run.nodes.empty() && run.on_backend != s.supported) {
          append(std::move(run));
          run = Block{};
        }
        run.on_backend = s.supported;
        run.placed_on = s.supported ? b.placed_on : std::string();
        run.nodes.push_back(b.nodes[k]);
      }
      if (!run.nodes.empty()) append(std::move(run));
    }
    p.blocks = std::move(blocks);
    fill_block_io(g, p.blocks);
  }
  return {};
}

/// A node whose output dims are known only once it has run (NonZero, a TopK of a run-time K,
/// ops/run_length.h) ends its block on a compiler, which runs it as its last
/// step: the blocks reading that output are built for the dims it made.
void end_blocks_at_run_time_lengths(const Graph& g, Partition& p) {
  const auto ends = [&g](const Block& b) {
    for (size_t k = 0; k + 1 < b.nodes.size(); ++k)
      if (ops::length_known_after_run(g, g.node(b.nodes[k]))) return true;
    return false;
  };
  if (std::none_of(p.blocks.begin(), p.blocks.end(),
                   [&](const Block& b) { return b.on_backend && ends(b); }))
    return;
  std::vector<Block> blocks;
  for (Block& b : p.blocks) {
    if (!b.on_backend) {
      blocks.push_back(std::move(b));
      continue;
    }
    Block part;
    for (size_t k = 0; k < b.nodes.size(); ++k) {
      part.nodes.push_back(b.nodes[k]);
      if (k + 1 < b.nodes.size() && ops::length_known_after_run(g, g.node(b.nodes[k]))) {
        part.on_backend = true;
        part.placed_on = b.placed_on;
        blocks.push_back(std::move(part));
        part = Block{};
      }
    }
    part.on_backend = true;
    part.placed_on = b.placed_on;
    blocks.push_back(std::move(part));
  }
  p.blocks = std::move(blocks);
  fill_block_io(g, p.blocks);
}

}  // namespace

/// Hands the fallback interpreter the bodies this executor compiled.
class Executor::BodyRunner final : public eval::SubgraphRunner {
 public:
  explicit BodyRunner(const Executor& owner) : owner_(owner) {}

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
  const Executor& owner_;
};

Executor::Executor(std::vector<BlockCompiler*> compilers) : compilers_(std::move(compilers)) {}

Executor::~Executor() = default;

const Partition& Executor::partition() const {
  static const Partition kEmpty;
  return main_ ? main_->partition : kEmpty;
}

const Graph* Executor::planned_graph() const {
  return main_ ? main_->graph.get() : nullptr;
}

Result<std::shared_ptr<const OptimizedGraph>> Executor::optimized(const Graph& g) const {
  if (!options_.optimize) return std::shared_ptr<const OptimizedGraph>();
  if (options_.optimized && options_.optimized->made_from(g)) return options_.optimized;
  return optimize_shared(g);
}

Result<void> Executor::place(const Graph& g, Partition& p) const {
  // Cut the placed nodes out of the fallback blocks (the first compiler was
  // told they are placed elsewhere), each run of one compiler a block of its own.
  std::vector<size_t> where(g.nodes().size(), 0);
  std::vector<std::string> refused(g.nodes().size());
  for (const auto& [name, index] : options_.placement) {
    if (index == 0 || index >= compilers_.size())
      return fail(ErrorCode::kInvalidArgument, "placement of node '" + name + "' names compiler " +
                                                   std::to_string(index) + ", but there are " +
                                                   std::to_string(compilers_.size()));
    bool found = false;
    for (size_t i = 0; i < g.nodes().size(); ++i)
      if (const Node& n = g.nodes()[i]; n.name == name) {
        found = true;
        const NodeSupport s = compilers_[index]->supports(g, n);
        if (s.supported)
          where[i] = index;
        else
          refused[i] = "placed on " + std::string(compilers_[index]->name()) +
                       ", which cannot run it: " + s.reason;
      }
    if (!found)
      return fail(ErrorCode::kInvalidArgument, "placement names node '" + name +
                                                   "', which graph '" + g.name() +
                                                   "' (as planned) does not have");
  }
  std::vector<Block> blocks;
  for (Block& b : p.blocks) {
    if (b.on_backend) {
      blocks.push_back(std::move(b));
      continue;
    }
    for (NodeId id : b.nodes) {
      const size_t c = where[id];
      const std::string on = c == 0 ? std::string() : std::string(compilers_[c]->name());
      if (blocks.empty() || blocks.back().on_backend != (c != 0) || blocks.back().placed_on != on) {
        Block nb;
        nb.on_backend = c != 0;
        nb.placed_on = on;
        blocks.push_back(std::move(nb));
      }
      blocks.back().nodes.push_back(id);
    }
  }
  p.blocks = std::move(blocks);
  fill_block_io(g, p.blocks);
  // A placed node is no fallback; one its compiler refused says why.
  std::vector<std::pair<NodeId, std::string>> fallbacks;
  for (auto& [id, why] : p.fallbacks) {
    if (where[id] != 0) continue;
    fallbacks.emplace_back(id, refused[id].empty() ? std::move(why) : refused[id]);
  }
  p.fallbacks = std::move(fallbacks);
  return settle_blocks(g, p, compilers_);
}

Result<Partition> Executor::plan_graph(const Graph& g, int depth, bool describe_bodies) const {
  const bool top = depth == 0;
  Partition p;
  std::shared_ptr<const OptimizedGraph> opt;
  if (top) {
    HONE_TRY(opt, optimized(g));
  } else if (options_.optimize) {
    HONE_TRY(opt, optimize_shared(g));
  }
  const Graph& planned = opt ? *opt->graph : g;
  std::vector<NodeSupport> support;
  support.reserve(planned.nodes().size());
  const bool placing = top && !options_.placement.empty();
  for (const Node& n : planned.nodes()) {
    auto it = placing ? options_.placement.find(n.name) : options_.placement.end();
    if (it != options_.placement.end() && it->second > 0 && it->second < compilers_.size())
      support.push_back(
          NodeSupport::no("placed on " + std::string(compilers_[it->second]->name())));
    else
      support.push_back(primary().supports(planned, n));
  }
  PartitionOptions popts = options_.partition;
  if (placing) popts.require_full_compilation = false;  // placed nodes are refused above
  HONE_TRY(p, partition_graph(planned, support, popts));
  if (placing) {
    HONE_CHECK_OK(place(planned, p));
    if (options_.partition.require_full_compilation && !p.fallbacks.empty())
      return fail(ErrorCode::kUnsupported,
                  "require_full_compilation is set, but node " +
                      planned.node(p.fallbacks.front().first).describe() +
                      " cannot run on this backend: " + p.fallbacks.front().second);
  }
  end_blocks_at_run_time_lengths(planned, p);
  if (opt) {
    p.notes = "optimize: " + opt->report.describe();
    p.graph = opt->graph;
  }
  if (!describe_bodies) return p;  // build_program describes them as it builds them
  for (const Block& b : p.blocks) {
    if (b.on_backend) continue;
    for (NodeId id : b.nodes) {
      const Node& n = planned.node(id);
      for (const auto& [attr, body] : bodies_of(n)) {
        Result<StandaloneBody> sb = body_at(*body, planned, depth);
        Result<Partition> bp = sb ? plan_graph(sb->graph, depth + 1, true) : fail(sb.error());
        const std::string line =
            bp ? body_note(primary().name(), n, attr, depth, &*bp, sb->graph, {})
               : body_note(primary().name(), n, attr, depth, nullptr, *body, bp.error().message());
        p.notes += (p.notes.empty() ? "" : "\n") + line;
      }
    }
  }
  return p;
}

Result<Partition> Executor::plan(const Graph& g) const {
  return plan_graph(g, 0, true);
}

Result<std::shared_ptr<Executor::GraphRun>> Executor::build_program(const Graph& g, int depth) {
  auto p = std::make_shared<GraphRun>();
  HONE_TRY(p->partition, plan_graph(g, depth, false));
  p->graph = p->partition.graph ? p->partition.graph : std::make_shared<const Graph>(g);
  const Graph& graph = *p->graph;
  for (const Block& b : p->partition.blocks) {
    HONE_TRY(Graph sub, extract_block(graph, b));
    Stage st{b, std::move(sub), nullptr, {}};
    if (b.on_backend) {
      HONE_TRY(st.compiled, compiler_of(compilers_, b)->compile(st.graph));
    } else {
      HONE_CHECK_OK_CTX(fallback_.check_supported(st.graph),
                        "while preparing the fallback for nodes " + std::string(primary().name()) +
                            " cannot run");
      HONE_TRY(st.schedule, eval::schedule(st.graph));
      // Control flow stays on the fallback; its bodies are built like graphs.
      for (NodeId id : b.nodes) {
        const Node& n = graph.node(id);
        for (const auto& [attr, body] : bodies_of(n)) {
          Result<StandaloneBody> sb = body_at(*body, graph, depth);
          if (sb) primary().prepare_body(sb->graph);
          Result<std::shared_ptr<GraphRun>> bp =
              sb ? build_program(sb->graph, depth + 1) : fail(sb.error());
          std::string line;
          if (!bp) {
            line =
                body_note(primary().name(), n, attr, depth, nullptr, *body, bp.error().message());
            HONE_LOG_DEBUG("{}: {}", primary().name(), line);
          } else {
            line = body_note(primary().name(), n, attr, depth, &(*bp)->partition, sb->graph, {});
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

Result<void> Executor::build(const Graph& graph) {
  if (main_) return fail(ErrorCode::kFailedPrecondition, "the executor was built already");
  bodies_.clear();
  if (!body_runner_) body_runner_ = std::make_unique<BodyRunner>(*this);
  fallback_.set_subgraph_runner(body_runner_.get());
  HONE_TRY(main_, build_program(graph, 0));
  if (!main_->partition.notes.empty())
    HONE_LOG_DEBUG("{}: {}", primary().name(), main_->partition.notes);
  HONE_LOG_DEBUG("{}: partition of '{}': {}", primary().name(), graph.name(),
                 main_->partition.describe(*main_->graph));
  return {};
}

Result<std::vector<Tensor>> Executor::run_program(const GraphRun& p,
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

Result<void> Executor::check_inputs(const std::vector<Tensor>& inputs) const {
  if (!main_) return fail(ErrorCode::kFailedPrecondition, "the executor was not built");
  std::vector<eval::RuntimeValue> wrapped;
  wrapped.reserve(inputs.size());
  for (const Tensor& t : inputs) wrapped.push_back(eval::RuntimeValue::of(t));
  return eval::check_inputs(*main_->graph, wrapped);
}

Executor::SoleBlock Executor::sole_block() const {
  if (!main_ || main_->stages.size() != 1 || !main_->stages[0].compiled) return {};
  const Graph& g = *main_->graph;
  const Stage& st = main_->stages[0];
  SoleBlock sole{st.compiled.get(), {}, {}};
  for (ValueId v : st.block.inputs) {
    auto it = std::find(g.inputs().begin(), g.inputs().end(), v);
    if (it == g.inputs().end()) return {};
    sole.inputs.push_back(static_cast<size_t>(it - g.inputs().begin()));
  }
  for (ValueId v : g.outputs()) {
    auto it = std::find(st.block.outputs.begin(), st.block.outputs.end(), v);
    if (it == st.block.outputs.end()) return {};
    sole.outputs.push_back(static_cast<size_t>(it - st.block.outputs.begin()));
  }
  return sole;
}

Result<std::vector<Tensor>> Executor::run(const std::vector<Tensor>& inputs) const {
  if (!main_) return fail(ErrorCode::kFailedPrecondition, "the executor was not built");
  return run_program(*main_, inputs, true);
}

}  // namespace hone::runtime
