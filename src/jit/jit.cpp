#include "hone/jit.h"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/log.h"
#include "hone/graph_spec.h"
#include "hone/registry.h"
#include "jit/call_stats.h"
#include "jit/sample_spill.h"

namespace hone {

std::string_view to_string(JitMode mode) {
  switch (mode) {
    case JitMode::kTuneEager:
      return "eager";
    case JitMode::kTuneDeferred:
      return "deferred";
    case JitMode::kInspect:
      return "inspect";
  }
  return "?";
}

std::string_view to_string(JitState state) {
  switch (state) {
    case JitState::kRecording:
      return "recording";
    case JitState::kTuning:
      return "tuning";
    case JitState::kTuned:
      return "tuned";
    case JitState::kFailed:
      return "failed";
    case JitState::kSkipped:
      return "skipped";
    case JitState::kInspecting:
      return "inspecting";
  }
  return "?";
}

Result<JitMode> parse_jit_mode(std::string_view text) {
  for (JitMode m : {JitMode::kTuneEager, JitMode::kTuneDeferred, JitMode::kInspect})
    if (text == to_string(m)) return m;
  return fail(ErrorCode::kInvalidArgument,
              fmt::format("unknown JIT mode '{}' (eager, deferred or inspect)", text));
}

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::string shape_key(const std::vector<Tensor>& flat) {
  std::string k;
  for (const auto& t : flat) {
    k += '[';
    for (int64_t d : t.shape()) k += std::to_string(d) + ',';
    k += ']';
  }
  return k;
}

bool is_batch_name(const std::string& n) {
  return n == "batch" || n == "N" || n == "batch_size";
}

}  // namespace

// What calls run on. Immutable once published: a call loads the current one
// and keeps it for the whole call, so a swap never changes a call midway.
// Outside the anonymous namespace: JitModel::Impl holds one.
struct JitRunner {
  std::shared_ptr<const TunedModel> tuned;  // null: the reference
  int generation = 0;
};

struct JitModel::Impl {
  Impl(Graph g, std::shared_ptr<const Strategy> s, const JitOptions& o)
      : graph(std::move(g)), strategy(std::move(s)), options(o) {
    for (ValueId id : graph.inputs()) input_names.push_back(graph.value(id).name);
    for (ValueId id : graph.outputs()) output_names.push_back(graph.value(id).name);
    // Where a call's batch size is read: the axis the graph names batch, else
    // axis 0 of the first input.
    for (size_t i = 0; i < graph.inputs().size() && batch_input < 0; ++i) {
      const auto& shape = graph.value(graph.inputs()[i]).shape;
      if (!shape) continue;
      for (size_t a = 0; a < shape->rank(); ++a)
        if ((*shape)[a].is_symbolic() && is_batch_name((*shape)[a].symbol_name())) {
          batch_input = static_cast<int>(i);
          batch_axis = a;
          break;
        }
    }
    if (batch_input < 0) batch_input = 0;
    current.store(std::make_shared<const JitRunner>());
    state = options.mode == JitMode::kInspect ? JitState::kInspecting : JitState::kRecording;
    if (!options.spill_dir.empty() && options.mode != JitMode::kInspect)
      spill = std::make_unique<jit_internal::SampleSpill>(
          options.spill_dir,
          fmt::format("{}_{}", graph.name().empty() ? "model" : graph.name(),
                      reinterpret_cast<uintptr_t>(this)),
          options.keep_spilled);
  }

  Result<std::shared_ptr<const Backend>> reference_backend();
  Result<std::vector<Tensor>> run_reference(const std::vector<Tensor>& flat);
  int64_t batch_size(const std::vector<Tensor>& flat) const;
  /// Records one call's sample; true when this call must start the tune.
  bool record(const Sample& sample, const std::vector<Tensor>& flat);
  void start_tune();
  Result<void> run_tune();
  void publish(std::shared_ptr<const TunedModel> t);

  Graph graph;
  std::shared_ptr<const Strategy> strategy;
  const JitOptions& options;
  std::vector<std::string> input_names, output_names;
  int batch_input = -1;
  size_t batch_axis = 0;

  std::mutex ref_mu;
  std::shared_ptr<const Backend> reference;

  std::atomic<std::shared_ptr<const JitRunner>> current;
  jit_internal::CallStats stats;
  std::atomic<size_t> out_of_bounds{0};
  std::atomic<bool> cancel{false};

  mutable std::mutex mu;  // everything below
  JitState state = JitState::kRecording;
  std::vector<Sample> samples;
  std::vector<std::string> sample_keys;  // shape key of each sample in memory
  std::unique_ptr<jit_internal::SampleSpill> spill;
  size_t recorded = 0;
  std::set<int64_t> batch_sizes;
  bool deferred_armed = false;
  size_t tunes_started = 0;
  std::optional<Error> error;
  std::vector<std::shared_ptr<const TunedModel>> tuned_models;  // kept for tuned()'s pointers

  std::mutex worker_mu;
  std::thread worker;
};

Result<std::shared_ptr<const Backend>> JitModel::Impl::reference_backend() {
  std::lock_guard lock(ref_mu);
  if (!reference) {
    HONE_TRY(std::shared_ptr<Backend> be, default_registry().create(kReferenceBackend));
    HONE_CHECK_OK_CTX(be->build(graph), "while preparing the reference for just-in-time tuning");
    reference = std::move(be);
  }
  return reference;
}

Result<std::vector<Tensor>> JitModel::Impl::run_reference(const std::vector<Tensor>& flat) {
  HONE_TRY(auto ref, reference_backend());
  return ref->infer(flat);
}

int64_t JitModel::Impl::batch_size(const std::vector<Tensor>& flat) const {
  const auto i = static_cast<size_t>(batch_input);
  if (i >= flat.size() || flat[i].rank() <= batch_axis) return 1;
  return flat[i].dim(batch_axis);
}

namespace {

/// `sample` with every borrowed tensor (Tensor::borrow: the caller's memory,
/// such as a NumPy array that Python frees after the call) copied, so that a
/// recorded call outlives the memory it was made with; `sample` itself when
/// every leaf owns its data.
Sample owned_sample(const Sample& sample) {
  if (sample.is_tensor()) return sample.tensor().owns() ? sample : Sample(sample.tensor().clone());
  bool borrowed = false;
  std::vector<std::pair<std::string, SampleValue>> leaves;
  for (const auto& [path, v] : sample.leaves()) {
    if (v->is_tensor() && !v->tensor().owns()) {
      borrowed = true;
      leaves.emplace_back(path, SampleValue(v->tensor().clone()));
    } else {
      leaves.emplace_back(path, *v);
    }
  }
  if (!borrowed) return sample;
  auto copy = sample_from_leaves(leaves);
  return copy ? std::move(*copy) : sample;
}

}  // namespace

bool JitModel::Impl::record(const Sample& given, const std::vector<Tensor>& flat) {
  std::lock_guard lock(mu);
  if (state != JitState::kRecording) return false;
  ++recorded;
  batch_sizes.insert(batch_size(flat));
  std::string key = shape_key(flat);
  const Sample sample = owned_sample(given);
  if (samples.size() < options.max_samples_stored) {
    samples.push_back(sample);
    sample_keys.push_back(std::move(key));
  } else if (spill) {
    if (auto ok = spill->write(sample); !ok)
      HONE_LOG_WARN("jit: a recorded call of '{}' was dropped: {}", graph.name(),
                    ok.error().to_string());
  } else {
    // Memory is full: a shape not stored yet replaces one stored twice, so
    // the samples keep covering every shape (the tuned bounds) seen so far.
    std::map<std::string, int> count;
    for (const auto& k : sample_keys) ++count[k];
    if (count.find(key) == count.end()) {
      for (size_t i = sample_keys.size(); i-- > 0;)
        if (count[sample_keys[i]] > 1) {
          samples[i] = sample;
          sample_keys[i] = std::move(key);
          break;
        }
    }
  }
  bool go = false;
  if (options.mode == JitMode::kTuneEager)
    go = recorded >= options.min_samples &&
         (!options.batch_axis_required || batch_sizes.size() >= 2);
  else if (options.mode == JitMode::kTuneDeferred)
    go = deferred_armed;
  if (go) {
    state = JitState::kTuning;
    ++tunes_started;
  }
  return go;
}

void JitModel::Impl::start_tune() {
  if (!options.background) {
    (void)run_tune();  // the outcome is kept in state and error
    return;
  }
  std::lock_guard lock(worker_mu);
  if (worker.joinable()) worker.join();  // a finished earlier worker (adopt/tune_now paths)
  worker = std::thread([this] { (void)run_tune(); });
}

void JitModel::Impl::publish(std::shared_ptr<const TunedModel> t) {
  // Under mu: the generation and the kept models change together.
  tuned_models.push_back(t);
  const int gen = current.load()->generation + 1;
  current.store(std::make_shared<const JitRunner>(JitRunner{std::move(t), gen}));
  state = JitState::kTuned;
}

Result<void> JitModel::Impl::run_tune() {
  if (options.before_tune) {
    if (std::string why = options.before_tune(); !why.empty()) {
      HONE_LOG_INFO("jit: '{}' left alone: {}", graph.name(), why);
      std::lock_guard lock(mu);
      state = JitState::kSkipped;
      error = Error(ErrorCode::kFailedPrecondition, why);
      samples.clear();
      return fail(*error);
    }
  }
  std::vector<Sample> batch;
  {
    std::lock_guard lock(mu);
    batch = samples;
  }
  auto fail_with = [&](Error e) -> Result<void> {
    HONE_LOG_WARN("jit: tuning '{}' failed, staying on the current backend: {}", graph.name(),
                  e.to_string());
    std::lock_guard lock(mu);
    state = JitState::kFailed;
    error = e;
    samples.clear();
    return fail(std::move(e));
  };
  if (spill) {
    auto more = spill->read_all();
    if (!more) return fail_with(std::move(more).error());
    for (auto& s : *more) batch.push_back(std::move(s));
  }
  HONE_LOG_INFO("jit: tuning '{}' on {} recorded calls", graph.name(), batch.size());
  TuneOptions o = options.tune;
  o.cancelled = [this, user = options.tune.cancelled] { return cancel.load() || (user && user()); };
  auto t = tune(graph, batch, *strategy, o);
  if (!t) return fail_with(std::move(t).error().add_context("while tuning just in time"));
  auto tuned = std::make_shared<const TunedModel>(std::move(*t));
  std::lock_guard lock(mu);
  HONE_LOG_INFO("jit: '{}' now runs on {}", graph.name(), tuned->decision().backend);
  publish(std::move(tuned));
  samples.clear();  // no longer needed: the tune is done
  sample_keys.clear();
  return {};
}

JitModel::JitModel(Graph graph, std::shared_ptr<const Strategy> strategy, JitOptions options)
    : options_(std::move(options)) {
  if (options_.min_samples == 0) options_.min_samples = 1;
  if (options_.max_samples_stored == 0) options_.max_samples_stored = 1;
  impl_ = std::make_unique<Impl>(std::move(graph), std::move(strategy), options_);
}

JitModel::~JitModel() {
  // A running tune stops before its next candidate; the thread is joined
  // before any member it uses goes away.
  impl_->cancel.store(true);
  wait();
}

Result<SampleValue> JitModel::infer(const Sample& inputs, JitCall* call) {
  Impl& m = *impl_;
  const auto t0 = clock_type::now();
  const std::shared_ptr<const JitRunner> r = m.current.load();
  std::vector<Tensor> flat;
  Result<SampleValue> out = fail(ErrorCode::kInternal, "unset");
  bool done = false;
  if (r->tuned) {
    if (auto f = r->tuned->spec().flatten(inputs); f) {  // checks the tuned bounds
      flat = std::move(*f);
      auto outs = r->tuned->backend().infer(flat);
      out = outs ? r->tuned->spec().unflatten_outputs(std::move(*outs))
                 : Result<SampleValue>(fail(std::move(outs).error()));
      if (call) call->backend = std::string(r->tuned->backend().name());
      done = true;
    } else {
      ++m.out_of_bounds;
      HONE_LOG_DEBUG("jit: call outside the tuned bounds runs on the reference: {}",
                     f.error().message());
    }
  }
  if (!done) {
    // A spec of this one call maps its tree onto the graph and back.
    auto spec = GraphSpec::learn(m.graph, {inputs});
    auto f = spec ? spec->flatten(inputs) : Result<std::vector<Tensor>>(fail(spec.error()));
    if (!f) {
      m.stats.record_failure(ms_since(t0));
      return fail(std::move(f).error());
    }
    flat = std::move(*f);
    auto outs = m.run_reference(flat);
    out = outs ? spec->unflatten_outputs(std::move(*outs))
               : Result<SampleValue>(fail(std::move(outs).error()));
    if (call) call->backend = kReferenceBackend;
  }
  if (call) call->generation = r->generation;
  if (!out) {
    m.stats.record_failure(ms_since(t0));
    return out;
  }
  m.stats.record(ms_since(t0), inputs.leaves(), out->leaves());
  if (!r->tuned && m.record(inputs, flat)) m.start_tune();
  return out;
}

Result<std::vector<Tensor>> JitModel::infer_flat(const std::vector<Tensor>& inputs, JitCall* call) {
  Impl& m = *impl_;
  const auto t0 = clock_type::now();
  const std::shared_ptr<const JitRunner> r = m.current.load();
  Result<std::vector<Tensor>> outs = fail(ErrorCode::kInternal, "unset");
  if (r->tuned && r->tuned->spec().bind_dims(inputs)) {
    outs = r->tuned->backend().infer(inputs);
    if (call) call->backend = std::string(r->tuned->backend().name());
  } else {
    if (r->tuned) ++m.out_of_bounds;
    outs = m.run_reference(inputs);
    if (call) call->backend = kReferenceBackend;
  }
  if (call) call->generation = r->generation;
  if (!outs) {
    m.stats.record_failure(ms_since(t0));
    return outs;
  }
  jit_internal::CallStats::Named in_named, out_named;
  for (size_t i = 0; i < inputs.size() && i < m.input_names.size(); ++i)
    in_named.emplace_back(m.input_names[i], &inputs[i]);
  for (size_t i = 0; i < outs->size() && i < m.output_names.size(); ++i)
    out_named.emplace_back(m.output_names[i], &(*outs)[i]);
  m.stats.record_named(ms_since(t0), in_named, out_named);
  if (!r->tuned && options_.mode != JitMode::kInspect) {
    std::vector<std::pair<std::string, SampleValue>> leaves;
    for (size_t i = 0; i < inputs.size() && i < m.input_names.size(); ++i)
      leaves.emplace_back(m.input_names[i], inputs[i]);
    if (auto s = sample_from_leaves(leaves); s && m.record(*s, inputs)) m.start_tune();
  }
  return outs;
}

Result<void> JitModel::tune_deferred() {
  std::lock_guard lock(impl_->mu);
  if (options_.mode != JitMode::kTuneDeferred)
    return fail(ErrorCode::kFailedPrecondition,
                fmt::format("tune_deferred() needs the deferred mode; this model is in {} mode",
                            to_string(options_.mode)));
  if (impl_->state != JitState::kRecording)
    return fail(
        ErrorCode::kFailedPrecondition,
        fmt::format("tune_deferred(): the model is {}, not recording", to_string(impl_->state)));
  impl_->deferred_armed = true;
  return {};
}

Result<void> JitModel::tune_now() {
  {
    std::lock_guard lock(impl_->mu);
    if (options_.mode == JitMode::kInspect)
      return fail(ErrorCode::kFailedPrecondition, "tune_now(): an inspect-mode model never tunes");
    if (impl_->state != JitState::kRecording)
      return fail(
          ErrorCode::kFailedPrecondition,
          fmt::format("tune_now(): the model is {}, not recording", to_string(impl_->state)));
    if (impl_->recorded == 0)
      return fail(ErrorCode::kFailedPrecondition,
                  "tune_now(): no call has been recorded yet to tune on");
    impl_->state = JitState::kTuning;
    ++impl_->tunes_started;
  }
  return impl_->run_tune();
}

void JitModel::wait() {
  std::lock_guard lock(impl_->worker_mu);
  if (impl_->worker.joinable()) impl_->worker.join();
}

JitState JitModel::state() const {
  std::lock_guard lock(impl_->mu);
  return impl_->state;
}

const TunedModel* JitModel::tuned() const {
  return impl_->current.load()->tuned.get();
}

size_t JitModel::recorded() const {
  std::lock_guard lock(impl_->mu);
  return impl_->recorded;
}

size_t JitModel::samples_in_memory() const {
  std::lock_guard lock(impl_->mu);
  return impl_->samples.size();
}

size_t JitModel::samples_spilled() const {
  return impl_->spill ? impl_->spill->count() : 0;
}

size_t JitModel::out_of_bounds_calls() const {
  return impl_->out_of_bounds.load();
}

size_t JitModel::tunes_started() const {
  std::lock_guard lock(impl_->mu);
  return impl_->tunes_started;
}

std::optional<Error> JitModel::tuning_error() const {
  std::lock_guard lock(impl_->mu);
  return impl_->error;
}

Result<void> JitModel::adopt(TunedModel tuned) {
  if (options_.mode == JitMode::kInspect)
    return fail(ErrorCode::kFailedPrecondition, "an inspect-mode model never runs a tuned model");
  HONE_TRY(std::string mine, graph_hash(impl_->graph));
  HONE_TRY(std::string theirs, graph_hash(tuned.graph()));
  if (mine != theirs)
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("the tuned model is of another graph ('{}', hash {}) than this "
                            "just-in-time model ('{}', hash {})",
                            tuned.graph().name(), theirs.substr(0, 12), impl_->graph.name(),
                            mine.substr(0, 12)));
  std::lock_guard lock(impl_->mu);
  if (impl_->state == JitState::kTuning)
    return fail(ErrorCode::kFailedPrecondition, "a tune is running; wait() for it first");
  impl_->publish(std::make_shared<const TunedModel>(std::move(tuned)));
  impl_->error.reset();
  impl_->samples.clear();
  impl_->sample_keys.clear();
  return {};
}

InspectionNode JitModel::inspect(const std::string& name) const {
  InspectionNode n;
  n.name = name;
  n.kind = "model";
  n.mode = std::string(to_string(options_.mode));
  impl_->stats.fill(n);
  const auto r = impl_->current.load();
  n.backend = r->tuned ? std::string(r->tuned->backend().name()) : std::string(kReferenceBackend);
  n.out_of_bounds_calls = impl_->out_of_bounds.load();
  std::lock_guard lock(impl_->mu);
  n.state = std::string(to_string(impl_->state));
  n.samples_recorded = impl_->recorded;
  if (impl_->error && (impl_->state == JitState::kFailed || impl_->state == JitState::kSkipped))
    n.reason = impl_->error->to_string();
  else if (impl_->state == JitState::kRecording && impl_->deferred_armed)
    n.reason = "tune requested; starts at the next call";
  finish_inspection(n);
  return n;
}

Result<void> JitModel::save_report(const std::filesystem::path& path) const {
  return save_inspection_report(
      inspect(impl_->graph.name().empty() ? "model" : impl_->graph.name()), path);
}

}  // namespace hone
