#include "runtime/executor.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/log.h"
#include "eval/control_flow.h"
#include "runtime/bodies.h"

namespace hone::runtime {

namespace {

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
/// ops/run_length.h) ends its block where the block's compiler says it must
/// (BlockCompiler::ends_block_after, asked of the block as the graph it is
/// compiled as), and is run as its last step: the blocks reading that output
/// are built for the dims it made.
Result<void> end_blocks_at_run_time_lengths(const Graph& g, Partition& p,
                                            const std::vector<BlockCompiler*>& compilers) {
  bool split = false;
  std::vector<Block> blocks;
  for (const Block& b : p.blocks) {
    if (!b.on_backend) {
      blocks.push_back(b);
      continue;
    }
    const BlockCompiler* c = compiler_of(compilers, b);
    std::vector<bool> ends(b.nodes.size(), false);
    if (b.nodes.size() > 1) {
      HONE_TRY(Graph sub, extract_block(g, b));  // its nodes in b's order
      for (size_t k = 0; k + 1 < b.nodes.size(); ++k)
        ends[k] = c->ends_block_after(sub, sub.nodes()[k]);
    }
    Block part;
    for (size_t k = 0; k < b.nodes.size(); ++k) {
      part.nodes.push_back(b.nodes[k]);
      if (ends[k]) {
        split = true;
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
  if (!split) return {};
  p.blocks = std::move(blocks);
  fill_block_io(g, p.blocks);
  return {};
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
  // require_full_compilation is judged once control flow is known, bodies
  // included: every supported node stays on the backend meanwhile.
  const bool full = options_.partition.require_full_compilation;
  PartitionOptions popts = options_.partition;
  if (full) {
    popts.min_block_size = 1;
    popts.require_full_compilation = false;
  }
  HONE_TRY(p, partition_graph(planned, support, popts));
  if (placing) HONE_CHECK_OK(place(planned, p));
  if (full && top)  // a refused node that is not control flow fails at once
    for (const auto& [id, why] : p.fallbacks)
      if (!eval::is_control_flow(planned.node(id)))
        return fail(not_full(planned.node(id).describe(), why));
  HONE_CHECK_OK(end_blocks_at_run_time_lengths(planned, p, compilers_));
  if (opt) {
    p.notes = "optimize: " + opt->report.describe();
    p.graph = opt->graph;
  }
  if (!describe_bodies) return p;  // build_program accounts for them as it builds them
  HONE_CHECK_OK(settle_bodies(
      planned, depth, primary().name(), full && top,
      [&](const std::shared_ptr<const Graph>&,
          StandaloneBody& sb) -> Result<std::shared_ptr<const Partition>> {
        HONE_TRY(Partition bp, plan_graph(sb.graph, depth + 1, true));
        return std::make_shared<const Partition>(std::move(bp));
      },
      p));
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
  // Bodies are built like graphs of their own, first: whether they all
  // compile with no fallback decides whether their node is a control stage.
  HONE_CHECK_OK(settle_bodies(
      graph, depth, primary().name(), depth == 0 && options_.partition.require_full_compilation,
      [&](const std::shared_ptr<const Graph>& body,
          StandaloneBody& sb) -> Result<std::shared_ptr<const Partition>> {
        primary().prepare_body(sb.graph);
        HONE_TRY(std::shared_ptr<GraphRun> run, build_program(sb.graph, depth + 1));
        bodies_[body.get()] = Body{run, body->inputs().size(), sb.captures};
        return std::shared_ptr<const Partition>(run, &run->partition);
      },
      p->partition));
  for (const Block& b : p->partition.blocks) {
    HONE_TRY(Graph sub, extract_block(graph, b));
    Stage st{b, std::move(sub), nullptr, {}};
    if (b.on_backend) {
      HONE_TRY(st.compiled, compiler_of(compilers_, b)->compile(st.graph));
    } else if (!b.control) {  // a control stage runs its node itself (run_control)
      HONE_CHECK_OK_CTX(fallback_.check_supported(st.graph),
                        "while preparing the fallback for nodes " + std::string(primary().name()) +
                            " cannot run");
      HONE_TRY(st.schedule, eval::schedule(st.graph));
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
    Result<std::vector<Tensor>> outs = st.compiled ? st.compiled->run(ins)
                                       : st.block.control
                                           ? run_control(st, ins)
                                           : fallback_.run_tensors(st.graph, ins, &st.schedule);
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

Result<std::vector<Tensor>> Executor::run_control(const Stage& st,
                                                  const std::vector<Tensor>& inputs) const {
  // The stage's one node reads its inputs (and its bodies capture names)
  // from this environment; its bodies run compiled, through body_runner_.
  const Graph& g = st.graph;
  std::vector<eval::RuntimeValue> env(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = eval::RuntimeValue::of(inputs[i]);
  for (size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].initializer) env[v] = eval::RuntimeValue::of(*g.values()[v].initializer);
  const Node& n = g.nodes().front();
  std::vector<const eval::RuntimeValue*> args;
  args.reserve(n.inputs.size());
  for (ValueId v : n.inputs)
    args.push_back(v == kNoValue || g.value(v).name.empty() ? nullptr : &env[v]);
  const eval::Scope scope{&g, &env, nullptr};
  HONE_TRY(std::vector<eval::RuntimeValue> outs,
           eval::run_control_flow(n, g, std::move(args), *body_runner_, &scope));
  std::vector<Tensor> result;
  result.reserve(g.outputs().size());
  for (ValueId v : g.outputs()) {
    const auto at =
        static_cast<size_t>(std::find(n.outputs.begin(), n.outputs.end(), v) - n.outputs.begin());
    if (at >= outs.size() || !outs[at].is_tensor())
      return fail(ErrorCode::kUnsupported,
                  "output '" + g.value(v).name + "' of " + n.describe() + " is not a tensor");
    result.push_back(std::move(outs[at].tensor));
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
