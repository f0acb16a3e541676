#include "backends/common/compiling_backend.h"

#include "core/log.h"
#include "hone/optimize.h"

namespace hone {

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

std::vector<NodeSupport> CompilingBackend::propose(const Graph& g) const {
  std::vector<NodeSupport> out;
  out.reserve(g.nodes().size());
  for (const Node& n : g.nodes()) out.push_back(supports(g, n));
  return out;
}

Result<Partition> CompilingBackend::plan(const Graph& g) const {
  PartitionOptions opts;
  opts.min_block_size = static_cast<int>(config().get<int64_t>("min_block_size", 5));
  opts.require_full_compilation = config().get<bool>("require_full_compilation", false);
  if (!config().get<bool>("optimize", true)) return partition_graph(g, propose(g), opts);
  auto optimized = std::make_shared<Graph>(g);
  HONE_TRY(OptimizeReport report, optimize(*optimized));
  HONE_TRY(Partition p, partition_graph(*optimized, propose(*optimized), opts));
  p.notes = "optimize: " + report.describe();
  p.graph = std::move(optimized);
  return p;
}

Result<void> CompilingBackend::do_build(const Graph& graph) {
  HONE_TRY(partition_, plan(graph));
  graph_ = partition_.graph ? partition_.graph : std::make_shared<const Graph>(graph);
  if (!partition_.notes.empty()) HONE_LOG_DEBUG("{}: {}", name(), partition_.notes);
  HONE_LOG_DEBUG("{}: partition of '{}': {}", name(), graph.name(), partition_.describe(*graph_));
  stages_.clear();
  for (const Block& b : partition_.blocks) {
    HONE_TRY(Graph sub, extract_block(*graph_, b));
    Stage st{b, std::move(sub), nullptr};
    if (b.on_backend) {
      HONE_TRY(st.compiled, compile(st.graph));
    } else {
      HONE_CHECK_OK_CTX(
          fallback_.check_supported(st.graph),
          "while preparing the fallback for nodes " + std::string(name()) + " cannot run");
    }
    stages_.push_back(std::move(st));
  }
  return {};
}

Result<std::vector<Tensor>> CompilingBackend::do_infer(const std::vector<Tensor>& inputs) const {
  std::vector<eval::RuntimeValue> wrapped;
  wrapped.reserve(inputs.size());
  for (const Tensor& t : inputs) wrapped.push_back(eval::RuntimeValue::of(t));
  HONE_CHECK_OK(eval::check_inputs(*graph_, wrapped));
  std::vector<Tensor> env(graph_->values().size());
  for (size_t i = 0; i < inputs.size(); ++i) env[graph_->inputs()[i]] = inputs[i];
  for (const Stage& st : stages_) {
    std::vector<Tensor> ins;
    ins.reserve(st.block.inputs.size());
    for (ValueId v : st.block.inputs) ins.push_back(env[v]);
    Result<std::vector<Tensor>> outs =
        st.compiled ? st.compiled->run(ins) : fallback_.run_tensors(st.graph, ins);
    if (!outs) return fail(std::move(outs).error());
    for (size_t o = 0; o < st.block.outputs.size(); ++o)
      env[st.block.outputs[o]] = std::move((*outs)[o]);
  }
  std::vector<Tensor> result;
  for (ValueId v : graph_->outputs()) {
    const Value& val = graph_->value(v);
    result.push_back(val.initializer ? *val.initializer : env[v]);
  }
  return result;
}

}  // namespace hone
