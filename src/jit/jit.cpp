#include "hone/jit.h"

#include "core/log.h"
#include "hone/graph_spec.h"
#include "hone/registry.h"

namespace hone {

JitModel::JitModel(Graph graph, std::shared_ptr<const Strategy> strategy, JitOptions options)
    : graph_(std::move(graph)), strategy_(std::move(strategy)), options_(std::move(options)) {
  if (options_.record_calls == 0) options_.record_calls = 1;
}

JitModel::~JitModel() = default;

Result<SampleValue> JitModel::run_reference(const Sample& inputs) {
  if (!reference_) {
    HONE_TRY(reference_, default_registry().create("reference"));
    HONE_CHECK_OK_CTX(reference_->build(graph_),
                      "while preparing the reference for just-in-time tuning");
  }
  // A spec of this one call maps its tree onto the graph and back.
  HONE_TRY(GraphSpec spec, GraphSpec::learn(graph_, {inputs}));
  HONE_TRY(auto flat, spec.flatten(inputs));
  HONE_TRY(auto outs, reference_->infer(flat));
  return spec.unflatten_outputs(std::move(outs));
}

Result<SampleValue> JitModel::infer(const Sample& inputs) {
  std::unique_lock lock(mu_);
  if (tuned_) {
    const TunedModel* t = tuned_.get();
    auto flat = t->spec().flatten(inputs);  // checks the tuned bounds
    if (flat) {
      lock.unlock();
      HONE_TRY(auto outs, t->infer_flat(*flat));
      return t->spec().unflatten_outputs(std::move(outs));
    }
    ++out_of_bounds_;
    HONE_LOG_DEBUG("jit: call outside the tuned bounds runs on the reference: {}",
                   flat.error().message());
    return run_reference(inputs);
  }
  HONE_TRY(SampleValue out, run_reference(inputs));
  if (tuning_done_) return out;  // tuning failed earlier: stay on the reference
  recorded_.push_back(inputs);
  if (recorded_.size() < options_.record_calls) return out;
  tuning_done_ = true;
  HONE_LOG_INFO("jit: tuning '{}' on {} recorded calls", graph_.name(), recorded_.size());
  auto t = tune(graph_, recorded_, *strategy_, options_.tune);
  if (t) {
    tuned_ = std::make_unique<TunedModel>(std::move(*t));
  } else {
    HONE_LOG_WARN("jit: tuning '{}' failed, staying on the reference: {}", graph_.name(),
                  t.error().to_string());
    tuning_error_ = std::move(t).error();
  }
  return out;
}

const TunedModel* JitModel::tuned() const {
  std::lock_guard lock(mu_);
  return tuned_.get();
}

size_t JitModel::recorded() const {
  std::lock_guard lock(mu_);
  return recorded_.size();
}

size_t JitModel::out_of_bounds_calls() const {
  std::lock_guard lock(mu_);
  return out_of_bounds_;
}

std::optional<Error> JitModel::tuning_error() const {
  std::lock_guard lock(mu_);
  return tuning_error_;
}

}  // namespace hone
