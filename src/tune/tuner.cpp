// hone::tune, hone::dry_run and TunedModel.
#include <algorithm>
#include <chrono>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "core/log.h"
#include "hone/onnx.h"
#include "hone/registry.h"
#include "hone/sha256.h"
#include "hone/tune.h"
#include "tune/session.h"

namespace hone {
namespace {

/// Batch sizes to measure: as asked (each within the batch bounds), else the
/// batch dim's min and max bounds; {1} for a model without a batch axis.
Result<std::vector<int64_t>> batch_sizes_for(const GraphSpec& spec,
                                             const std::vector<int64_t>& asked) {
  std::vector<int64_t> out;
  if (spec.batch_dim.empty()) {
    for (int64_t b : asked)
      if (b != 1)
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("batch size {} asked for, but the model has no batch axis", b));
    return std::vector<int64_t>{1};
  }
  const DimBounds& bb = spec.bounds.at(spec.batch_dim);
  if (asked.empty()) {
    out = {bb.min, bb.max};
  } else {
    for (int64_t b : asked) {
      if (b < 1)
        return fail(ErrorCode::kInvalidArgument,
                    fmt::format("batch size {} must be at least 1", b));
      out.push_back(b);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<GraphSpec> spec_for(const Graph& graph, const std::vector<Sample>& samples,
                           const TuneOptions& options) {
  if (samples.empty())
    return fail(ErrorCode::kInvalidArgument,
                "tuning needs at least one sample of the model's inputs");
  HONE_TRY(GraphSpec spec, GraphSpec::learn(graph, samples, options.dims));
  if (!spec.batch_dim.empty()) {
    // Batch sizes asked for widen the batch bounds (they are what will be served).
    DimBounds& bb = spec.bounds[spec.batch_dim];
    for (int64_t b : options.batch_sizes) {
      bb.min = std::min(bb.min, b);
      bb.max = std::max(bb.max, b);
    }
    bb.opt = std::clamp(bb.opt, bb.min, bb.max);
  }
  return spec;
}

std::vector<std::string> known_candidates(const Strategy& strategy, const BackendRegistry& reg,
                                          const TuneOptions& options) {
  std::vector<std::string> names = strategy.backends();
  if (names.empty())
    for (const auto& n : reg.tried_by_default())
      if (n != kReferenceBackend) names.push_back(n);
  std::vector<std::string> out;
  for (const auto& n : names)
    for (auto& v :
         tune_internal::precision_variants(reg, n, options.precision_auto, options.precision_fp8))
      out.push_back(std::move(v));
  return out;
}

}  // namespace

Result<std::string> graph_hash(const Graph& graph) {
  HONE_TRY(auto bytes, onnx::save_model_to_bytes(graph));
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

const LatencyFigures* CandidateResult::at_batch(int64_t batch) const {
  for (const auto& f : figures)
    if (f.batch == batch) return &f;
  return nullptr;
}

double CandidateResult::best_throughput() const {
  double best = 0;
  for (const auto& f : figures) best = std::max(best, f.throughput);
  return best;
}

double CandidateResult::min_batch_p50_ms() const {
  if (figures.empty()) return INFINITY;
  return std::min_element(
             figures.begin(), figures.end(),
             [](const LatencyFigures& a, const LatencyFigures& b) { return a.batch < b.batch; })
      ->p50_ms;
}

TunedModel::TunedModel(Graph graph, GraphSpec spec, std::unique_ptr<Backend> backend,
                       TuneReport report)
    : graph_(std::make_unique<Graph>(std::move(graph))),
      spec_(std::move(spec)),
      backend_(std::move(backend)),
      report_(std::move(report)) {}
TunedModel::TunedModel(TunedModel&&) noexcept = default;
TunedModel& TunedModel::operator=(TunedModel&&) noexcept = default;
TunedModel::~TunedModel() = default;

Result<std::vector<Tensor>> TunedModel::infer_flat(const std::vector<Tensor>& inputs) const {
  // The spec's bounds are what was tuned and checked: outside them is an error.
  HONE_CHECK_OK(spec_.bind_dims(inputs));
  return backend_->infer(inputs);
}

Result<std::vector<DeviceTensor>> TunedModel::infer_on_device(
    const std::vector<DeviceTensor>& inputs, const DeviceCall& call) const {
  // The bounds read dims only: tensors of the inputs' shapes, without data.
  std::vector<Tensor> shapes;
  shapes.reserve(inputs.size());
  for (const DeviceTensor& t : inputs) shapes.push_back(Tensor::borrow(t.dtype, t.shape, nullptr));
  HONE_CHECK_OK(spec_.bind_dims(shapes));
  return backend_->infer_on_device(inputs, call);
}

Result<SampleValue> TunedModel::infer(const Sample& inputs) const {
  HONE_TRY(auto flat, spec_.flatten(inputs));  // checks structure, dtypes and bounds
  HONE_TRY(auto outs, backend_->infer(flat));
  return spec_.unflatten_outputs(std::move(outs));
}

Result<TunedModel> tune(const Graph& graph, const std::vector<Sample>& samples,
                        const Strategy& strategy, const TuneOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  HONE_CHECK_OK_CTX(graph.validate(), "while checking the model before tuning");
  HONE_TRY(GraphSpec spec, spec_for(graph, samples, options));
  HONE_TRY(auto batch_sizes, batch_sizes_for(spec, options.batch_sizes));
  const BackendRegistry& reg = options.registry != nullptr ? *options.registry : default_registry();
  HONE_LOG_INFO("tune '{}': strategy {}, batch sizes {}", graph.name(), strategy.describe(),
                fmt::format("{}", fmt::join(batch_sizes, ",")));
  HONE_TRY(auto session, tune_internal::Session::create(graph, spec, samples, batch_sizes, options,
                                                        known_candidates(strategy, reg, options)));
  // Name the output axes from what the reference returned for the samples
  // (before any candidate is evaluated: the spec is part of the cache key).
  HONE_CHECK_OK_CTX(spec.learn_outputs(samples, session->sample_outputs()),
                    "while learning the output spec from the reference's outputs");
  // A group that splits the candidates evaluates each rank's share first;
  // the strategy then finds every result already there.
  if (options.group != nullptr && options.group->split_candidates())
    HONE_CHECK_OK_CTX(session->evaluate_share(known_candidates(strategy, reg, options)),
                      "while sharing the candidates between the ranks");
  auto selected = strategy.select(*session);
  if (session->group_error()) return fail(*session->group_error());
  // A cancelled tune says so, whatever the strategy made of the skipped candidates.
  if (options.cancelled && options.cancelled())
    return fail(ErrorCode::kFailedPrecondition, "tuning '" + graph.name() + "' was cancelled");
  HONE_TRY(Selection sel, std::move(selected));
  HONE_TRY(auto backend, session->take_built(sel.backend));

  TuneReport report;
  report.model = graph.name();
  report.graph_hash = session->graph_hash();
  report.strategy = strategy.describe();
  report.spec = spec.describe();
  report.measured_inputs = session->measured_inputs();
  report.threads = session->threads();
  report.batch_sizes = batch_sizes;
  report.baseline_gate_percent = options.baseline_gate_percent;
  report.time_budget_s = options.time_budget_s;
  report.optimized = session->optimized_note();
  report.baseline = session->baseline();
  for (auto& c : session->results_in_order()) {
    if (c.backend == sel.backend) {
      c.lost_because.clear();
    } else if (auto it = sel.losers.find(c.backend); it != sel.losers.end()) {
      c.lost_because = it->second;
    } else if (c.backend == tune_internal::Session::kReference) {
      c.lost_because = "baseline";
    }
    report.candidates.push_back(std::move(c));
  }
  report.batch_searches = session->batch_searches();
  Decision& d = report.decision;
  // The registry name the package creates; the candidate's when it differs ("onednn@bf16").
  HONE_TRY(const tune_internal::CandidateName chosen, tune_internal::split_candidate(sel.backend));
  d.backend = chosen.backend;
  if (d.backend != sel.backend) d.candidate = sel.backend;
  d.config_key = backend->config().key();
  d.config = backend->config().describe();
  for (const auto& f : backend->config().fields())
    d.config_fields.emplace_back(f.name, BackendConfig::to_string(f.value));
  // Its records of timed choices as they stand now (select's hold its blocks').
  for (const auto& [field, value] : backend->choice_records())
    for (auto& [name, v] : d.config_fields)
      if (name == field) v = value;
  d.kernel_plan = tune_internal::distinct_plan(backend->describe_kernels());
  for (const auto& c : report.candidates)
    if (c.backend == sel.backend) d.figures = c.figures;
  d.reason = sel.reason;
  if (backend->precision() != Precision::kFp32)
    d.reason +=
        fmt::format(" (precision {}{})", to_string(backend->precision()),
                    backend->fp32_nodes().empty()
                        ? std::string()
                        : fmt::format(", {} nodes kept in fp32: {}", backend->fp32_nodes().size(),
                                      fmt::join(backend->fp32_nodes(), ", ")));
  d.losers = sel.losers;
  d.baseline_kept = sel.baseline_kept;
  report.cache_used = session->cache_used();
  report.cache_hits = session->cache_hits();
  report.cache_misses = session->cache_misses();
  report.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Every rank must hold the same decision; then all take rank 0's report
  // (its times and cache counts too), so the packages match byte for byte.
  if (options.group != nullptr) HONE_CHECK_OK(options.group->agree_report(report));
  HONE_LOG_INFO("tune '{}': chose {} ({})", graph.name(), d.chosen(), d.reason);
  return TunedModel(graph, std::move(spec), std::move(backend), std::move(report));
}

Result<std::vector<std::string>> dry_run(const Graph& graph, const std::vector<Sample>& samples,
                                         const Strategy& strategy, const TuneOptions& options) {
  HONE_CHECK_OK_CTX(graph.validate(), "while checking the model before tuning");
  HONE_TRY(GraphSpec spec, spec_for(graph, samples, options));
  HONE_TRY(auto batch_sizes, batch_sizes_for(spec, options.batch_sizes));
  const BackendRegistry& reg = options.registry != nullptr ? *options.registry : default_registry();
  std::vector<std::string> lines;
  lines.push_back("model '" + graph.name() + "'");
  lines.push_back(spec.describe());
  // The backends tried by default, and any opt-in one the strategy names.
  std::vector<std::string> listed = reg.tried_by_default();
  for (const auto& n : strategy.backends())
    if (reg.find(n) != nullptr && std::find(listed.begin(), listed.end(), n) == listed.end())
      listed.push_back(n);
  for (auto& l : strategy.dry_run(listed, batch_sizes)) lines.push_back(std::move(l));
  for (const auto& name : known_candidates(strategy, reg, options))
    if (const auto* e = reg.find(name); e != nullptr)
      if (const std::string why = e->unavailable(); !why.empty())
        lines.push_back("note: " + name + " cannot run on this machine (" + why +
                        "); it would be skipped");
  std::vector<std::string> reduced;
  for (const auto& name : known_candidates(strategy, reg, options))
    if (name.find('@') != std::string::npos) reduced.push_back(name);
  lines.push_back(options.precision_auto
                      ? fmt::format("precision auto: also {} (each judged by its precision's "
                                    "bound{})",
                                    reduced.empty() ? "nothing: no backend declares a reduced one"
                                                    : fmt::format("{}", fmt::join(reduced, ", ")),
                                    options.mixed_precision
                                        ? "; one that fails gets a bisection for fp32 nodes"
                                        : "")
                      : "precision: strict fp32 (--precision auto tries every precision each "
                        "backend declares)");
  lines.push_back(fmt::format("threads {}, baseline gate {}%, tuning cache {}", options.threads,
                              options.baseline_gate_percent, options.use_cache ? "on" : "off"));
  lines.push_back(fmt::format(
      "correctness: {}; profiling {:g} s per candidate{}",
      options.tolerance ? "tolerance " + options.tolerance->describe()
                        : "tolerance per precision (fp32: " +
                              GateTolerance::for_precision(Precision::kFp32).describe() + ")",
      options.candidate_budget_s,
      options.time_budget_s > 0 ? fmt::format(", {:g} s for the whole tune", options.time_budget_s)
                                : std::string()));
  return lines;
}

}  // namespace hone
