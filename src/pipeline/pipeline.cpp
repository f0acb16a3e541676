#include "hone/pipeline.h"

#include <fmt/core.h>

#include "core/log.h"
#include "hone/registry.h"

namespace hone {

struct Pipeline::Stage {
  std::string name;
  Graph graph;
  std::unique_ptr<Backend> reference;
  std::unique_ptr<TunedModel> tuned;
  const Backend& runner() const { return tuned ? tuned->backend() : *reference; }
};

Pipeline::Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

Result<void> Pipeline::add_stage(std::string name, Graph graph) {
  for (const auto& s : stages_)
    if (s->name == name)
      return fail(ErrorCode::kInvalidArgument, "the pipeline already has a stage '" + name + "'");
  const std::string ctx = "while adding stage '" + name + "' to the pipeline";
  HONE_CHECK_OK_CTX(graph.validate(), ctx);
  HONE_TRY(auto ref, default_registry().create("reference"));
  HONE_CHECK_OK_CTX(ref->build(graph), ctx);
  auto st = std::make_unique<Stage>();
  st->name = std::move(name);
  st->graph = std::move(graph);
  st->reference = std::move(ref);
  stages_.push_back(std::move(st));
  return {};
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

Result<TensorMap> Pipeline::run(const TensorMap& inputs) const {
  TensorMap env = inputs;
  TensorMap outputs;
  for (const auto& s : stages_) {
    HONE_TRY(auto ins, stage_inputs(*s, env));
    auto outs = s->runner().infer(ins);
    if (!outs)
      return fail(
          std::move(outs).error().add_context("while running pipeline stage '" + s->name + "'"));
    for (size_t i = 0; i < outs->size() && i < s->graph.outputs().size(); ++i) {
      const std::string& n = s->graph.value(s->graph.outputs()[i]).name;
      env[n] = (*outs)[i];
      outputs[n] = (*outs)[i];
    }
  }
  return outputs;
}

Result<void> Pipeline::tune_stage(const std::string& stage, const std::vector<TensorMap>& samples,
                                  const Strategy& strategy, const TuneOptions& options) {
  Stage* target = nullptr;
  for (auto& s : stages_)
    if (s->name == stage) target = s.get();
  if (target == nullptr)
    return fail(ErrorCode::kNotFound, "the pipeline has no stage '" + stage + "'");
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
      auto outs = s->runner().infer(ins);
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

std::vector<std::pair<std::string, std::string>> Pipeline::placement() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : stages_) out.emplace_back(s->name, std::string(s->runner().name()));
  return out;
}

const TunedModel* Pipeline::tuned(const std::string& stage) const {
  for (const auto& s : stages_)
    if (s->name == stage) return s->tuned.get();
  return nullptr;
}

const Backend* Pipeline::backend(const std::string& stage) const {
  for (const auto& s : stages_)
    if (s->name == stage) return &s->runner();
  return nullptr;
}

}  // namespace hone
