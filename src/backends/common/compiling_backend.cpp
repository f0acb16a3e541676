#include "backends/common/compiling_backend.h"

#include "runtime/bodies.h"

namespace hone {
namespace {

/// Whether `g` or a body of its nodes (If branches, Loop/Scan bodies, at any
/// depth) holds a node named `name`.
bool holds_node(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes()) {
    if (n.name == name) return true;
    for (const auto& [attr, body] : runtime::bodies_of(n))
      if (holds_node(*body, name)) return true;
  }
  return false;
}

}  // namespace

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
  HONE_CHECK_OK(executor_->build(graph));
  // fp32_nodes name nodes of the graph the backend built (the passes'
  // result): a name that is none keeps nothing in fp32, which the user
  // should hear about rather than get a plan that silently ignores it.
  const Graph* built = executor_->planned_graph();
  for (const std::string& n : fp32_nodes())
    if (built != nullptr && !holds_node(*built, n))
      return fail(ErrorCode::kInvalidArgument,
                  "fp32_nodes names '" + n + "', which is no node of the graph '" +
                      std::string(name()) +
                      "' builds (the optimized graph: `hone inspect --json` lists its nodes)");
  return {};
}

Result<std::vector<Tensor>> CompilingBackend::do_infer(const std::vector<Tensor>& inputs) const {
  return executor_->run(inputs);
}

}  // namespace hone
