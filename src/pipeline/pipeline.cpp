#include "hone/pipeline.h"

#include <fmt/core.h>

#include <chrono>

#include "core/log.h"
#include "hone/registry.h"
#include "pipeline/pipeline_internal.h"

namespace hone {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Pipeline::Pipeline(PipelineOptions options)
    : options_(options), timing_(std::make_shared<Timing>()) {}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

Pipeline::Stage* Pipeline::find(const std::string& name) const {
  for (const auto& s : stages_)
    if (s->name == name) return s.get();
  return nullptr;
}

Result<void> Pipeline::add(std::string name, Graph graph, std::shared_ptr<const Strategy> strategy,
                           std::optional<JitOptions> jit) {
  if (find(name) != nullptr)
    return fail(ErrorCode::kInvalidArgument, "the pipeline already has a stage '" + name + "'");
  const std::string ctx = "while adding stage '" + name + "' to the pipeline";
  HONE_CHECK_OK_CTX(graph.validate(), ctx);
  auto st = std::make_unique<Stage>();
  st->stats = std::make_shared<jit_internal::CallStats>();
  if (jit) {
    if (!strategy)
      return fail(
          Error(ErrorCode::kInvalidArgument, "a JIT stage needs a strategy").add_context(ctx));
    // The JIT stage builds its reference lazily; check now that it can.
    HONE_TRY(auto ref, default_registry().create(kReferenceBackend));
    HONE_CHECK_OK_CTX(ref->build(graph), ctx);
    if (options_.min_time_share > 0) {
      // Share of the time spent in stages so far, as the pipeline timed them.
      jit->before_tune = [timing = timing_, mine = st->stats, threshold = options_.min_time_share,
                          user = jit->before_tune]() -> std::string {
        if (user)
          if (std::string why = user(); !why.empty()) return why;
        double all = 0;
        {
          std::lock_guard lock(timing->mu);
          for (const auto& s : timing->stages) all += s->total_ms();
        }
        const double share = all > 0 ? mine->total_ms() / all : 0;
        if (share >= threshold) return {};
        return fmt::format("{:.1f}% of the time spent in stages, below the {:.1f}% threshold",
                           100 * share, 100 * threshold);
      };
    }
    st->jit = std::make_unique<JitModel>(graph, std::move(strategy), std::move(*jit));
  } else {
    HONE_TRY(auto ref, default_registry().create(kReferenceBackend));
    HONE_CHECK_OK_CTX(ref->build(graph), ctx);
    st->reference = std::move(ref);
  }
  st->name = std::move(name);
  st->graph = std::move(graph);
  {
    std::lock_guard lock(timing_->mu);
    timing_->stages.push_back(st->stats);
  }
  stages_.push_back(std::move(st));
  return {};
}

Result<void> Pipeline::add_stage(std::string name, Graph graph) {
  return add(std::move(name), std::move(graph), nullptr, std::nullopt);
}

Result<void> Pipeline::add_jit_stage(std::string name, Graph graph,
                                     std::shared_ptr<const Strategy> strategy, JitOptions options) {
  return add(std::move(name), std::move(graph), std::move(strategy), std::move(options));
}

Result<std::vector<Tensor>> Pipeline::stage_inputs(const Stage& s, const TensorMap& env) const {
  std::vector<Tensor> ins;
  for (ValueId id : s.graph.inputs()) {
    const std::string& n = s.graph.value(id).name;
    auto it = env.find(n);
    if (it == env.end()) {
      std::string known;
      for (const auto& [k, v] : env) known += (known.empty() ? "" : ", ") + k;
      return fail(
          ErrorCode::kInvalidArgument,
          fmt::format(
              "stage '{}' needs input '{}', which neither the pipeline's inputs nor an earlier "
              "stage provides (available: {})",
              s.name, n, known.empty() ? "none" : known));
    }
    ins.push_back(it->second);
  }
  return ins;
}

Result<TensorMap> Pipeline::run(const TensorMap& inputs,
                                std::map<std::string, JitCall>* calls) const {
  const auto t0 = std::chrono::steady_clock::now();
  TensorMap env = inputs;
  TensorMap outputs;
  for (const auto& s : stages_) {
    HONE_TRY(auto ins, stage_inputs(*s, env));
    const auto ts = std::chrono::steady_clock::now();
    auto outs = s->jit ? s->jit->infer_flat(ins, calls ? &(*calls)[s->name] : nullptr)
                       : s->runner()->infer(ins);
    if (!outs) {
      s->stats->record_failure(ms_since(ts));
      return fail(
          std::move(outs).error().add_context("while running pipeline stage '" + s->name + "'"));
    }
    jit_internal::CallStats::Named in_named, out_named;
    for (size_t i = 0; i < ins.size(); ++i)
      in_named.emplace_back(s->graph.value(s->graph.inputs()[i]).name, &ins[i]);
    for (size_t i = 0; i < outs->size() && i < s->graph.outputs().size(); ++i)
      out_named.emplace_back(s->graph.value(s->graph.outputs()[i]).name, &(*outs)[i]);
    s->stats->record_named(ms_since(ts), in_named, out_named);
    for (size_t i = 0; i < outs->size() && i < s->graph.outputs().size(); ++i) {
      const std::string& n = s->graph.value(s->graph.outputs()[i]).name;
      env[n] = (*outs)[i];
      outputs[n] = (*outs)[i];
    }
  }
  jit_internal::CallStats::Named in_named, out_named;
  for (const auto& [n, t] : inputs) in_named.emplace_back(n, &t);
  for (const auto& [n, t] : outputs) out_named.emplace_back(n, &t);
  timing_->pipeline.record_named(ms_since(t0), in_named, out_named);
  return outputs;
}

Result<void> Pipeline::tune_stage(const std::string& stage, const std::vector<TensorMap>& samples,
                                  const Strategy& strategy, const TuneOptions& options) {
  Stage* target = find(stage);
  if (target == nullptr)
    return fail(ErrorCode::kNotFound, "the pipeline has no stage '" + stage + "'");
  if (target->jit)
    return fail(ErrorCode::kFailedPrecondition,
                "stage '" + stage + "' is a JIT stage: it tunes itself in its mode");
  // Record what the stage receives when the pipeline runs each sample.
  std::vector<Sample> recorded;
  for (size_t k = 0; k < samples.size(); ++k) {
    TensorMap env = samples[k];
    for (const auto& s : stages_) {
      HONE_TRY(auto ins, stage_inputs(*s, env));
      if (s.get() == target) {
        SampleMap m;
        for (size_t i = 0; i < ins.size(); ++i)
          m.emplace(s->graph.value(s->graph.inputs()[i]).name, ins[i]);
        recorded.emplace_back(std::move(m));
        break;
      }
      auto outs = s->jit ? s->jit->infer_flat(ins) : s->runner()->infer(ins);
      if (!outs)
        return fail(std::move(outs).error().add_context(
            fmt::format("while recording the inputs of stage '{}' from sample {}", stage, k)));
      for (size_t i = 0; i < outs->size(); ++i)
        env[s->graph.value(s->graph.outputs()[i]).name] = (*outs)[i];
    }
  }
  HONE_LOG_INFO("pipeline: tuning stage '{}' on {} recorded calls", stage, recorded.size());
  auto tuned = tune(target->graph, recorded, strategy, options);
  if (!tuned)
    return fail(
        std::move(tuned).error().add_context("while tuning pipeline stage '" + stage + "'"));
  target->tuned = std::make_unique<TunedModel>(std::move(*tuned));
  return {};
}

Result<void> Pipeline::tune_deferred(const std::string& stage) {
  Stage* s = find(stage);
  if (s == nullptr || !s->jit)
    return fail(ErrorCode::kNotFound, "the pipeline has no JIT stage '" + stage + "'");
  return s->jit->tune_deferred();
}

void Pipeline::wait() const {
  for (const auto& s : stages_)
    if (s->jit) s->jit->wait();
}

const JitModel* Pipeline::jit(const std::string& stage) const {
  const Stage* s = find(stage);
  return s ? s->jit.get() : nullptr;
}

std::vector<std::pair<std::string, std::string>> Pipeline::placement() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : stages_) out.emplace_back(s->name, s->runner_name());
  return out;
}

const TunedModel* Pipeline::tuned(const std::string& stage) const {
  const Stage* s = find(stage);
  if (s == nullptr) return nullptr;
  return s->jit ? s->jit->tuned() : s->tuned.get();
}

const Backend* Pipeline::backend(const std::string& stage) const {
  const Stage* s = find(stage);
  return s ? s->runner() : nullptr;
}

}  // namespace hone
