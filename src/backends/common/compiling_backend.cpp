#include "backends/common/compiling_backend.h"

namespace hone {

CompilingBackend::CompilingBackend() {
  mutable_config()
      .declare("min_block_size", int64_t{5}, "supported islands with fewer nodes fall back")
      .declare("require_full_compilation", false, "any node this backend cannot run is an error")
      .declare("optimize", true,
               "run the graph passes (folding, BN/bias/LayerNorm/GELU fusion, transposes) before "
               "partitioning");
}

CompilingBackend::~CompilingBackend() = default;

const Partition& CompilingBackend::partition() const {
  static const Partition kEmpty;
  return executor_ ? executor_->partition() : kEmpty;
}

const Graph* CompilingBackend::planned_graph() const {
  return executor_ ? executor_->planned_graph() : nullptr;
}

std::vector<NodeSupport> CompilingBackend::propose(const Graph& g) const {
  std::vector<NodeSupport> out;
  out.reserve(g.nodes().size());
  for (const Node& n : g.nodes()) out.push_back(supports(g, n));
  return out;
}

Result<runtime::ExecutorOptions> CompilingBackend::executor_options(const Graph& g) const {
  (void)g;
  runtime::ExecutorOptions o;
  o.partition.min_block_size = static_cast<int>(config().get<int64_t>("min_block_size", 5));
  o.partition.require_full_compilation = config().get<bool>("require_full_compilation", false);
  o.optimize = config().get<bool>("optimize", true);
  o.optimized = shared_optimized();
  return o;
}

Result<Partition> CompilingBackend::plan(const Graph& g) const {
  // Planning compiles nothing, so the executor may hold this const backend.
  runtime::Executor ex(const_cast<CompilingBackend*>(this)->compilers());
  HONE_TRY(runtime::ExecutorOptions o, executor_options(g));
  ex.set_options(std::move(o));
  return ex.plan(g);
}

Result<void> CompilingBackend::do_build(const Graph& graph) {
  auto ex = std::make_unique<runtime::Executor>(compilers());
  HONE_TRY(runtime::ExecutorOptions o, executor_options(graph));
  ex->set_options(std::move(o));
  executor_ = std::move(ex);
  return executor_->build(graph);
}

Result<std::vector<Tensor>> CompilingBackend::do_infer(const std::vector<Tensor>& inputs) const {
  return executor_->run(inputs);
}

}  // namespace hone
