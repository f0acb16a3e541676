#include "backends/onednn/onednn_backend.h"

#include <omp.h>

#include <map>
#include <set>

#include "backends/onednn/plan.h"
#include "core/log.h"
#include "hone/registry.h"

namespace hone::onednn {
namespace {

/// OpenMP's team size on the calling thread, set for one scope.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) {
    static const int kDefault = omp_get_max_threads();
    omp_set_num_threads(threads > 0 ? threads : kDefault);
  }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

using Signature = std::vector<dims_t>;

std::string signature_text(const Signature& s) {
  std::string out;
  for (const dims_t& d : s) out += (out.empty() ? "" : " ") + shape_to_string(d);
  return out;
}

class OnednnBlock final : public CompiledBlock {
 public:
  OnednnBlock(Graph g, std::shared_ptr<Stats> stats, int threads)
      : graph_(std::move(g)), stats_(std::move(stats)), threads_(threads) {}

  /// Builds the plan for `sig` now (used at compile time for static blocks).
  Result<void> prepare(const Signature& sig) {
    ThreadScope scope(threads_);
    std::lock_guard lock(mu_);
    HONE_CHECK_OK(plan_locked(sig));
    return {};
  }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    ThreadScope scope(threads_);
    Signature sig;
    sig.reserve(inputs.size());
    bool all_f32 = true;
    for (const Tensor& t : inputs) {
      sig.push_back(t.shape());
      all_f32 = all_f32 && t.dtype() == DType::kF32;
    }
    std::shared_ptr<const Plan> plan;
    if (all_f32) {
      std::lock_guard lock(mu_);
      auto p = plan_locked(sig);
      if (p) plan = *p;
    }
    if (!plan) {
      stats_->fallback_runs.fetch_add(1, std::memory_order_relaxed);
      return fallback_.run_tensors(graph_, inputs);
    }
    return plan->run(inputs, &stats_->primitive_executions);
  }

 private:
  Result<std::shared_ptr<const Plan>> plan_locked(const Signature& sig) const {
    if (auto it = plans_.find(sig); it != plans_.end()) return it->second;
    if (auto it = failed_.find(sig); it != failed_.end()) return fail(it->second);
    PlanBuilder builder(graph_);
    auto plan = builder.build(sig);
    if (!plan) {
      HONE_LOG_DEBUG("onednn: block '{}' for {} runs on the reference: {}", graph_.name(),
                     signature_text(sig), plan.error().to_string());
      failed_.emplace(sig, plan.error());
      return fail(std::move(plan).error());
    }
    HONE_LOG_DEBUG("onednn: block '{}' for {}: {}", graph_.name(), signature_text(sig),
                   (*plan)->describe());
    {
      std::lock_guard lock(stats_->mu);
      stats_->plans.push_back((*plan)->describe());
    }
    plans_.emplace(sig, *plan);
    return *plan;
  }

  Graph graph_;
  std::shared_ptr<Stats> stats_;
  int threads_;
  reference::Interpreter fallback_;
  mutable std::mutex mu_;
  mutable std::map<Signature, std::shared_ptr<const Plan>> plans_;
  mutable std::map<Signature, Error> failed_;
};

}  // namespace

OnednnBackend::OnednnBackend() {
  // A lone oneDNN Conv or MatMul already beats the reference; the base's
  // default of 5 would send small islands (and one-node models) to the
  // fallback for nothing.
  mutable_config().declare("min_block_size", int64_t{1},
                           "supported islands with fewer nodes fall back");
}

const BackendCapabilities& OnednnBackend::caps() {
  static const BackendCapabilities c = [] {
    BackendCapabilities k;
    k.devices = {Device::kCpu};
    k.dtypes = {DType::kF32};
    k.precisions = {"f32"};
    k.build_mode = BuildMode::kAheadOfTime;
    k.dynamic_shapes = true;
    return k;
  }();
  return c;
}

std::vector<std::string> OnednnBackend::plan_descriptions() const {
  std::lock_guard lock(stats_->mu);
  return stats_->plans;
}

NodeSupport OnednnBackend::supports(const Graph& g, const Node& node) const {
  return supports_node(g, node);
}

Result<std::unique_ptr<CompiledBlock>> OnednnBackend::compile(const Graph& block) {
  const int threads = static_cast<int>(config().get<int64_t>("threads", 0));
  auto compiled = std::make_unique<OnednnBlock>(block, stats_, threads);
  Signature sig;
  bool all_static = true;
  for (ValueId v : block.inputs()) {
    const Value& val = block.value(v);
    auto dims = val.shape ? val.shape->to_static()
                          : Result<std::vector<int64_t>>(fail(ErrorCode::kInvalidArgument, ""));
    if (!dims) {
      all_static = false;
      break;
    }
    sig.push_back(*dims);
  }
  // Static blocks get their primitives now; a failure here is not fatal: that
  // signature runs on the reference (and the reason is logged).
  if (all_static) (void)compiled->prepare(sig);
  return compiled;
}

}  // namespace hone::onednn

namespace hone {

void register_onednn(BackendRegistry& registry) {
  auto r = registry.add(
      {"onednn",
       "oneDNN primitives for f32 conv/matmul/eltwise/pooling/norm blocks, with post-op fusion",
       onednn::OnednnBackend::caps(), [] { return std::make_unique<onednn::OnednnBackend>(); }, {}});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
