#include "backends/onednn/onednn_backend.h"

#include <omp.h>

#include <chrono>
#include <limits>
#include <map>
#include <set>

#include "backends/common/static_dims.h"
#include "backends/onednn/plan.h"
#include "core/log.h"
#include "hone/registry.h"
#include "hone/thread_pool.h"

namespace hone::onednn {
namespace {

/// OpenMP's team size on the calling thread, set for one scope. `threads` is
/// already resolved (> 0): oneDNN sizes its work split at primitive creation
/// from the same team size, so build and run must agree.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

using Signature = ShapeSignature;  // dims_t is std::vector<int64_t>: the shared signature type

/// Fastest of a few runs of `plan` on zeros, in microseconds (infinity when
/// it fails). The minimum, as other processes share the machine.
double time_plan(const Plan& plan, const Signature& sig, size_t num_inputs) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < num_inputs; ++i) inputs.push_back(Tensor::zeros(DType::kF32, sig[i]));
  std::atomic<uint64_t> executions{0};
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 7; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!plan.run(inputs, &executions)) return std::numeric_limits<double>::infinity();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (i >= 2) best = std::min(best, us);  // the first runs warm caches and the context pool
  }
  return best;
}

class OnednnBlock final : public CompiledBlock {
 public:
  OnednnBlock(Graph g, std::shared_ptr<Stats> stats, int threads, bool bf16)
      : graph_(std::move(g)), stats_(std::move(stats)), threads_(threads), bf16_(bf16) {
    // An input only Shape or Size reads (input_ids whose length makes the
    // positions and the mask) may have any dtype: no primitive reads it. An
    // integer or bool input that only host nodes and shape operands read is
    // shape arithmetic another block made: its values become plan constants.
    for (ValueId in : graph_.inputs()) {
      bool dims_only = true;
      for (const Node& n : graph_.nodes())
        for (ValueId v : n.inputs)
          if (v == in && n.op_type != "Shape" && n.op_type != "Size") dims_only = false;
      for (ValueId out : graph_.outputs()) dims_only = dims_only && out != in;
      read_as_data_.push_back(!dims_only);
      const DType t = graph_.value(in).dtype;
      known_input_.push_back(!dims_only && t != DType::kF32 && t != DType::kUndefined);
    }
  }

  /// Builds the plan for `sig` now (used at compile time for static blocks).
  Result<void> prepare(const Signature& sig) {
    // A block reading another block's shape arithmetic plans when it has it.
    for (bool known : known_input_)
      if (known) return {};
    ThreadScope scope(threads_);
    std::lock_guard lock(mu_);
    HONE_CHECK_OK(plan_locked(sig, {}));
    return {};
  }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    ThreadScope scope(threads_);
    stats_->openmp_threads.store(omp_get_max_threads(), std::memory_order_relaxed);
    Signature sig;
    sig.reserve(inputs.size());
    bool all_f32 = true;
    std::vector<const Tensor*> known(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i) sig.push_back(inputs[i].shape());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].dtype() == DType::kF32 || !read_as_data_[i]) continue;
      if (!known_input_[i] || inputs[i].numel() > kMaxKnownInput) {
        all_f32 = false;
        continue;
      }
      // Shape arithmetic from another block: its values join the signature.
      known[i] = &inputs[i];
      dims_t key{static_cast<int64_t>(i)};
      for (int64_t k = 0; k < inputs[i].numel(); ++k)
        key.push_back(static_cast<int64_t>(tensor_element_as_double(inputs[i], k)));
      sig.push_back(std::move(key));
    }
    std::shared_ptr<const Plan> plan;
    if (all_f32) {
      std::lock_guard lock(mu_);
      auto p = plan_locked(sig, known);
      if (p) plan = *p;
    }
    if (!plan) {
      stats_->fallback_runs.fetch_add(1, std::memory_order_relaxed);
      return fallback_.run_tensors(graph_, inputs);
    }
    return plan->run(inputs, &stats_->primitive_executions);
  }

 private:
  /// `sig`: the inputs' dims, then for each known input its index and values.
  Result<std::shared_ptr<const Plan>> plan_locked(const Signature& sig,
                                                  const std::vector<const Tensor*>& known) const {
    const size_t n = graph_.inputs().size();
    const std::vector<dims_t> dims(sig.begin(), sig.begin() + static_cast<ptrdiff_t>(n));
    if (auto it = plans_.find(sig); it != plans_.end()) return it->second;
    if (auto it = failed_.find(sig); it != failed_.end()) return fail(it->second);
    PlanBuilder builder(graph_);
    builder.set_bf16(bf16_);
    auto plan = builder.build(dims, known);
    if (plan && builder.has_depthwise()) {
      // Neither conv layout wins on every depthwise net (lower_conv says
      // why), so both plans are built and the faster one is kept.
      PlanBuilder blocked(graph_);
      blocked.set_prefer_blocked16(true);
      blocked.set_bf16(bf16_);
      if (auto alt = blocked.build(dims, known)) {
        const double t_any = time_plan(**plan, sig, n), t_blocked = time_plan(**alt, sig, n);
        HONE_LOG_DEBUG(
            "onednn: block '{}' for {}: convs on oneDNN's pick {:.1f} us, on nChw16c {:.1f} us",
            graph_.name(), signature_text(sig), t_any, t_blocked);
        if (t_blocked < t_any) plan = std::move(alt);
      }
    }
    if (!plan) {
      HONE_LOG_DEBUG("onednn: block '{}' for {} runs on the reference: {}", graph_.name(),
                     signature_text(sig), plan.error().to_string());
      failed_.emplace(sig, plan.error());
      return fail(std::move(plan).error());
    }
    HONE_LOG_DEBUG("onednn: block '{}' for {}: {}; {}", graph_.name(), signature_text(sig),
                   (*plan)->describe(), (*plan)->arena);
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
  bool bf16_;
  std::vector<bool> read_as_data_;  // per block input: a node reads its elements
  std::vector<bool> known_input_;   // per block input: non-f32 values planned as constants
  static constexpr int64_t kMaxKnownInput = 64;
  eval::Interpreter fallback_;
  mutable std::mutex mu_;
  mutable std::map<Signature, std::shared_ptr<const Plan>> plans_;
  mutable std::map<Signature, Error> failed_;
};

/// oneDNN's version, "2.6.3".
std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

}  // namespace

bool cpu_has_bf16() {
  // cpu_isa values are bit sets in oneDNN 2.6: newer ISAs (AMX) contain
  // avx512_core_bf16's bits, so test the bits rather than compare.
  static const bool has = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto want = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & want) == want;
  }();
  return has;
}

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
    if (cpu_has_bf16()) k.precisions.push_back("bf16");
    k.build_mode = BuildMode::kAheadOfTime;
    k.dynamic_shapes = true;
    k.libraries = {{"onednn", onednn_version()}};
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
  const int64_t configured = config().get<int64_t>("threads", 0);  // >= 0: Backend::build checked
  // 0 means what every backend means by it: the global pool's size (the CLI's
  // --threads). OpenMP's own default would be all cores whatever --threads said,
  // which is how `hone --threads 1 bench` used to run oneDNN on two threads.
  const int threads =
      configured > 0 ? static_cast<int>(configured) : ThreadPool::global().num_threads();
  HONE_LOG_DEBUG("onednn: block '{}' runs on {} OpenMP threads", block.name(), threads);
  // Reduced precision is a permission, not an order: without native bf16
  // (oneDNN would emulate it, slower than f32) the blocks stay f32.
  const bool bf16 = config().get<bool>("allow_reduced_precision", false) && cpu_has_bf16();
  auto compiled = std::make_unique<OnednnBlock>(block, stats_, threads, bf16);
  // Static blocks get their primitives now; a failure here is not fatal: that
  // signature runs on the reference (and the reason is logged).
  if (auto sig = static_input_dims(block)) (void)compiled->prepare(*sig);
  return compiled;
}

}  // namespace hone::onednn

namespace hone {

void register_onednn(BackendRegistry& registry) {
  auto r = registry.add(
      {"onednn",
       "oneDNN primitives for f32 conv/matmul/RNN/eltwise/pooling/norm blocks, with post-op "
       "fusion (bf16 conv/matmul with allow_reduced_precision where the CPU has AVX-512 BF16)",
       onednn::OnednnBackend::caps(), [] { return std::make_unique<onednn::OnednnBackend>(); },
       /*unavailable_reason=*/{}});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
