#include "backends/onednn/onednn_backend.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <set>

#include "backends/common/block_runtime.h"
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
double time_plan(const Plan& plan, const std::vector<dims_t>& dims,
                 const std::vector<DType>& dtypes) {
  std::vector<Tensor> inputs;  // a known input's zeros go unread: the plan holds its values
  for (size_t i = 0; i < dims.size(); ++i)
    inputs.push_back(Tensor::zeros(i < dtypes.size() ? dtypes[i] : DType::kF32, dims[i]));
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

/// The timed_choices label of a block's plan choice: "block 'NAME' from
/// FIRST block-plan", FIRST its first node (the blocks of one model share
/// their NAME; their first nodes differ).
std::string block_label(const Graph& block) {
  const std::string first = block.nodes().empty() ? "no node" : block.nodes().front().describe();
  return "block '" + block.name() + "' from " + first + " block-plan";
}

/// A block of oneDNN primitives; its Program is onednn's Plan (plan.h).
class OnednnBlock final : public BlockRuntime<Plan> {
 public:
  OnednnBlock(Graph g, std::shared_ptr<Stats> stats, std::shared_ptr<TimedChoices> choices,
              int threads, bool bf16, std::set<std::string> fp32_nodes)
      : BlockRuntime("onednn", std::make_shared<const Graph>(std::move(g)), &stats->fallback_runs),
        stats_(std::move(stats)),
        choices_(std::move(choices)),
        threads_(threads),
        bf16_(bf16),
        fp32_nodes_(std::move(fp32_nodes)) {
    // An input only Shape or Size reads (input_ids whose length makes the
    // positions and the mask) may have any dtype: no primitive reads it. An
    // integer or bool input that only own steps and views read (token ids, an
    // attention mask: read_at_run_time) is bound like an f32 one, its dtype
    // in the key. Any other integer or bool input is shape arithmetic another
    // block made: its values become plan constants.
    for (ValueId in : graph().inputs()) {
      bool dims_only = true;
      for (const Node& n : graph().nodes())
        for (ValueId v : n.inputs)
          if (v == in && n.op_type != "Shape" && n.op_type != "Size") dims_only = false;
      for (ValueId out : graph().outputs()) dims_only = dims_only && out != in;
      read_as_data_.push_back(!dims_only);
      const DType t = graph().value(in).dtype;
      const bool integer =
          !dims_only && (is_integer(t) || t == DType::kBool || t == DType::kUndefined);
      const bool at_run = integer && read_at_run_time(graph(), in);
      at_run_.push_back(at_run);
      known_input_.push_back(integer && !at_run);
      plans_on_values_ = plans_on_values_ || (integer && !at_run);
    }
  }

  /// The key of a static block's dims, with the declared dtype of each input
  /// read at run time that is not f32 (as key_of adds them); nullopt when
  /// one is not declared.
  std::optional<Signature> static_key(Signature dims) const {
    const size_t n = graph().inputs().size();
    for (size_t i = 0; i < n && i < at_run_.size(); ++i) {
      if (!at_run_[i]) continue;
      const DType t = graph().value(graph().inputs()[i]).dtype;
      if (t == DType::kUndefined) return std::nullopt;
      dims.push_back({static_cast<int64_t>(n + i), static_cast<int64_t>(t)});
    }
    return dims;
  }

  /// Some input's values (not only its dims) go into the plan: the block is
  /// planned at its first run, when they are known.
  bool plans_on_values() const { return plans_on_values_; }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const override {
    ThreadScope scope(threads_);
    stats_->openmp_threads.store(omp_get_max_threads(), std::memory_order_relaxed);
    return BlockRuntime::run(inputs);
  }

 private:
  /// The inputs' dims, then for each known input (shape arithmetic another
  /// block computed: integer or bool, at most kMaxKnownInput elements) an
  /// entry {index, dtype, values...}, and for each input read at run time
  /// that is not f32 an entry {number of inputs + index, dtype}. Any other
  /// non-f32 input a node reads sends the run to the reference.
  std::optional<Signature> key_of(const std::vector<Tensor>& inputs) const override {
    Signature key = signature_of(inputs);
    if (inputs.size() != read_as_data_.size()) return key;  // build() reports the count
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      if (t.dtype() == DType::kF32 || !read_as_data_[i]) continue;
      if (at_run_[i]) {
        key.push_back({static_cast<int64_t>(inputs.size() + i), static_cast<int64_t>(t.dtype())});
        continue;
      }
      if (!known_input_[i] || t.numel() > kMaxKnownInput ||
          !(is_integer(t.dtype()) || t.dtype() == DType::kBool))
        return std::nullopt;
      dims_t entry{static_cast<int64_t>(i), static_cast<int64_t>(t.dtype())};
      for (int64_t k = 0; k < t.numel(); ++k) entry.push_back(tensor_element_as_int64(t, k));
      key.push_back(std::move(entry));
    }
    return key;
  }

  Result<std::vector<Tensor>> execute(const Plan& plan,
                                      const std::vector<Tensor>& inputs) const override {
    return plan.run(inputs, &stats_->primitive_executions);
  }

  /// The known inputs a key_of() key carries, rebuilt as tensors of their
  /// dtypes (`known[i]` points into `values`, null for the others), and the
  /// dtypes of the inputs read at run time (f32 but where the key says).
  Result<void> known_inputs(const Signature& key, std::vector<Tensor>& values,
                            std::vector<const Tensor*>& known, std::vector<DType>& dtypes) const {
    const size_t n = graph().inputs().size();
    if (key.size() > n) values.reserve(key.size() - n);  // known[] points into it
    known.assign(n, nullptr);
    dtypes.assign(n, DType::kF32);
    for (size_t e = n; e < key.size(); ++e) {
      const dims_t& entry = key[e];
      const auto i = entry.size() < 2 ? 2 * n : static_cast<size_t>(entry[0]);
      if (i >= n && i < 2 * n && entry.size() == 2) {
        dtypes[i - n] = static_cast<DType>(entry[1]);
        continue;
      }
      if (i >= n) return fail(ErrorCode::kInternal, "onednn: a known-input key names no input");
      HONE_TRY(Tensor t, value_of_key_entry(entry, key[i]));
      values.push_back(std::move(t));
      known[i] = &values.back();
    }
    return {};
  }

  Result<std::shared_ptr<const Plan>> build(const Signature& key) const override {
    ThreadScope scope(threads_);  // prepare() builds outside run()
    const Graph& g = graph();
    const size_t n = std::min(g.inputs().size(), key.size());
    const std::vector<dims_t> dims(key.begin(), key.begin() + static_cast<ptrdiff_t>(n));
    std::vector<Tensor> values;
    std::vector<const Tensor*> known;
    std::vector<DType> dtypes;
    HONE_CHECK_OK(known_inputs(key, values, known, dtypes));
    auto build_plan = [&](bool blocked16) {
      PlanBuilder builder(g);
      builder.set_prefer_blocked16(blocked16);
      builder.set_bf16(bf16_, fp32_nodes_);
      builder.set_choices(choices_.get());
      auto plan = builder.build(dims, known, dtypes);
      // Neither conv layout wins on every depthwise net (lower_conv says
      // why), so both plans are built and the faster one is kept; so too
      // where values are joined along channels, which on nChw16c are
      // written in place (lower_shape.cpp's concat_in_place), and where 3x3
      // convs may run by Winograd, which oneDNN has on nChw16c only.
      const bool both =
          builder.has_depthwise() || builder.has_channel_concat() || builder.has_winograd_conv();
      return std::pair{std::move(plan), both};
    };
    // A block-plan choice recorded in timed_choices: that plan only, untimed
    // (oneDNN's pick when the nChw16c one fails to build here, with a warning).
    const std::string label = block_label(g);
    const std::string mode = bf16_ ? "bf16" : "fp32";
    if (auto rec = choices_->recorded(label, dims, mode)) {
      auto plan = build_plan(*rec == "nChw16c").first;
      if (plan || *rec != "nChw16c") {
        (void)choices_->choose(label, dims, mode, {*rec}, {});  // counted as replayed
        return keep(std::move(plan), key);
      }
      (void)choices_->choose(label, dims, mode, {"any"}, {});  // warns
      return keep(build_plan(false).first, key);
    }
    auto [plan, both] = build_plan(false);
    if (plan && both) {
      if (auto alt = build_plan(true).first) {
        const std::string pick = choices_->choose(label, dims, mode, {"any", "nChw16c"}, [&] {
          const double t_any = time_plan(**plan, dims, dtypes),
                       t_blocked = time_plan(**alt, dims, dtypes);
          HONE_LOG_DEBUG(
              "onednn: block '{}' for {}: convs on oneDNN's pick {:.1f} us, on nChw16c {:.1f} us",
              g.name(), signature_text(key), t_any, t_blocked);
          return std::vector<double>{t_any / 1000, t_blocked / 1000};
        });
        if (pick == "nChw16c") plan = std::move(alt);
      }
    }
    return keep(std::move(plan), key);
  }

  /// The plan built for `key`, noted in the stats.
  Result<std::shared_ptr<const Plan>> keep(Result<std::shared_ptr<const Plan>> plan,
                                           const Signature& key) const {
    const Graph& g = graph();
    if (!plan) return fail(std::move(plan).error());
    HONE_LOG_DEBUG("onednn: block '{}' for {}: {}; {}", g.name(), signature_text(key),
                   (*plan)->describe(), (*plan)->arena);
    {
      std::lock_guard lock(stats_->mu);
      stats_->plans.push_back((*plan)->describe());
    }
    return std::shared_ptr<const Plan>(*plan);
  }

  std::shared_ptr<Stats> stats_;
  std::shared_ptr<TimedChoices> choices_;  // the backend's (not null)
  int threads_;
  bool bf16_;
  std::set<std::string> fp32_nodes_;
  std::vector<bool> read_as_data_;  // per block input: a node reads its elements
  std::vector<bool> known_input_;   // per block input: integer or bool values planned as constants
  std::vector<bool> at_run_;        // per block input: integer or bool values read at run time
  bool plans_on_values_ = false;    // some known_input_
  static constexpr int64_t kMaxKnownInput = 64;
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
  mutable_config()
      .declare("min_block_size", int64_t{1}, "supported islands with fewer nodes fall back")
      .declare_record(
          "timed_choices",
          "the forms chosen by timing both at plan time, one entry per decision, node (or "
          "block), input dims and precision: LABEL|SHAPES|MODE=CHOICE, ';'-separated ('%XX' "
          "escapes % ; = |), '-' for none. A LABEL ends in its kind: winograd "
          "(=direct|winograd, a 3x3 conv), fusion (=unfused|fused, a conv and the residual "
          "Add after it), layout (=nChw16c|nhwc, a conv), deconv-layout (=nhwc|nChw16c, a "
          "ConvTranspose), rnn-layout (=any|ldigo, RNN weights), block-plan (=any|nChw16c, "
          "a block's convs). Filled as shapes are planned; a build given entries replays "
          "them untimed (a choice this CPU cannot run is warned about and timed)");
}

Result<void> OnednnBackend::do_build(const Graph& graph) {
  HONE_TRY(ChoiceEntries given,
           TimedChoices::parse(config().get<std::string>("timed_choices", "")));
  // The record starts from the given choices; what is timed later (blocks
  // planned at build, or at their first run of a new shape) is written back
  // into the config, so a package saved after the tune replays it.
  choices_ = std::make_shared<TimedChoices>(std::move(given));
  choices_->on_change(
      [this](const std::string& text) { (void)mutable_config().set("timed_choices", text); });
  return CompilingBackend::do_build(graph);
}

ChoiceCounts OnednnBackend::choice_counts() const {
  return choices_->counts();
}

const BackendCapabilities& OnednnBackend::caps() {
  static const BackendCapabilities c = [] {
    BackendCapabilities k;
    k.devices = {Device::kCpu};
    k.dtypes = {DType::kF32};
    k.precisions = {Precision::kFp32};
    // Emulated bf16 (below avx512_core_bf16) is slower than f32: not offered.
    k.precision_needs[Precision::kBf16] = "a CPU with AVX-512 BF16 (oneDNN ISA avx512_core_bf16)";
    if (cpu_has_bf16()) k.precisions.push_back(Precision::kBf16);
    k.mixed_precision = true;  // fp32_nodes: those Conv/Gemm/MatMul stay f32 under bf16
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

bool OnednnBackend::ends_block_after(const Graph& g, const Node& node) const {
  return block_ends_after(g, node);
}

Result<std::unique_ptr<CompiledBlock>> OnednnBackend::compile(const Graph& block) {
  const int64_t configured = config().get<int64_t>("threads", 0);  // >= 0: Backend::build checked
  // 0 means what every backend means by it: the global pool's size (the CLI's
  // --threads). OpenMP's own default would be all cores whatever --threads said,
  // which is how `hone --threads 1 bench` used to run oneDNN on two threads.
  const int threads =
      configured > 0 ? static_cast<int>(configured) : ThreadPool::global().num_threads();
  HONE_LOG_DEBUG("onednn: block '{}' runs on {} OpenMP threads", block.name(), threads);
  // configure() admits bf16 only where the CPU has it natively (caps()).
  const bool bf16 = precision() == Precision::kBf16;
  std::set<std::string> keep;
  for (std::string& n : fp32_nodes()) keep.insert(std::move(n));
  auto compiled =
      std::make_unique<OnednnBlock>(block, stats_, choices_, threads, bf16, std::move(keep));
  // Static blocks get their primitives now; a failure here is not fatal: that
  // signature runs on the reference (and the reason is logged).
  if (auto sig = static_input_dims(block); sig && !compiled->plans_on_values())
    if (auto key = compiled->static_key(*sig)) compiled->prepare(*key);
  return compiled;
}

}  // namespace hone::onednn

namespace hone {

void register_onednn(BackendRegistry& registry) {
  auto r = registry.add(
      {"onednn",
       "oneDNN primitives for f32 conv/matmul/RNN/eltwise/pooling/norm blocks, with post-op "
       "fusion (precision=bf16: bf16 conv/matmul where the CPU has AVX-512 BF16)",
       onednn::OnednnBackend::caps(), [] { return std::make_unique<onednn::OnednnBackend>(); },
       /*unavailable_reason=*/{}});
  (void)r;  // only fails on a duplicate name, which the one list rules out
}

}  // namespace hone
