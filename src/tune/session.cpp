#include "tune/session.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include <fmt/core.h>

#include "core/log.h"
#include "hone/thread_pool.h"
#include "ops/attrs.h"
#include "ops/axis.h"
#include "tune/machine.h"
#include "tune/session_detail.h"

namespace hone::tune_internal {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// The graph outputs that are indices chosen by comparing floats (ArgMax,
/// ArgMin, TopK's second output), each with the value its choice was made
/// from: the witnesses the gate reads to tell a tie from a wrong index.
struct TieSource {
  size_t output;
  ValueId values;
  int64_t axis;
  bool along_axis;
};

std::vector<TieSource> tie_sources(const Graph& g) {
  std::vector<TieSource> out;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value& v = g.value(g.outputs()[i]);
    if (v.producer < 0 || is_floating(v.dtype)) continue;
    const Node& n = g.node(v.producer);
    const bool arg = n.op_type == "ArgMax" || n.op_type == "ArgMin";
    const bool topk = n.op_type == "TopK" && n.outputs.size() > 1 && n.outputs[1] == g.outputs()[i];
    if ((!arg && !topk) || n.inputs.empty() || n.inputs[0] < 0) continue;
    const Value& data = g.value(n.inputs[0]);
    if (!is_floating(data.dtype) || !data.shape) continue;
    const auto axis =
        ops::try_normalize_axis(ops::axis_attr(n), static_cast<int64_t>(data.shape->rank()));
    if (!axis) continue;
    out.push_back({i, n.inputs[0], *axis, topk});
  }
  return out;
}

}  // namespace

Result<CandidateName> split_candidate(const std::string& name) {
  const size_t at = name.rfind('@');
  if (at == std::string::npos) return CandidateName{name, std::nullopt};
  auto p = parse_precision(std::string_view(name).substr(at + 1));
  if (!p)
    return fail(
        std::move(p).error().add_context("in candidate '" + name + "' (BACKEND@PRECISION)"));
  return CandidateName{name.substr(0, at), *p};
}

std::vector<std::string> precision_variants(const BackendRegistry& registry,
                                            const std::string& backend, bool all, bool fp8) {
  std::vector<std::string> out{backend};
  const auto* e = registry.find(backend);
  // A backend this machine cannot run is one n/a row, not one per precision.
  if (!all || e == nullptr || backend == kReferenceBackend || !e->unavailable().empty()) return out;
  for (Precision p : e->capabilities.precisions)
    if (is_reduced(p) && (fp8 || p != Precision::kFp8))
      out.push_back(backend + "@" + std::string(to_string(p)));
  return out;
}

std::vector<std::string> distinct_plan(const std::vector<std::string>& lines) {
  // A backend with a plan per input-shape signature repeats identical lines.
  std::vector<std::string> out;
  std::vector<int> counts;
  for (const auto& l : lines) {
    auto it = std::find(out.begin(), out.end(), l);
    if (it == out.end()) {
      out.push_back(l);
      counts.push_back(1);
    } else {
      ++counts[static_cast<size_t>(it - out.begin())];
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (counts[i] > 1) out[i] += fmt::format(" (x{} shape plans)", counts[i]);
  return out;
}

std::vector<std::string> Session::measured_inputs() const {
  std::vector<std::string> lines;
  for (const auto& [b, ins] : profile_inputs_) {
    std::string line = fmt::format("batch {}:", b);
    for (size_t i = 0; i < ins.size(); ++i)
      line +=
          fmt::format("{} {} {}", i == 0 ? "" : ",",
                      i < spec_.inputs.size() ? spec_.inputs[i].name : fmt::format("input {}", i),
                      ins[i].describe());
    lines.push_back(std::move(line));
  }
  return lines;
}

Result<std::unique_ptr<Session>> Session::create(const Graph& graph, const GraphSpec& spec,
                                                 const std::vector<Sample>& samples,
                                                 std::vector<int64_t> batch_sizes,
                                                 const TuneOptions& options,
                                                 const std::vector<std::string>& candidates) {
  std::unique_ptr<Session> s(new Session(graph, spec, options));
  s->start_ = clock_type::now();
  s->registry_ = options.registry != nullptr ? options.registry : &default_registry();
  s->candidates_ = candidates;
  s->batch_sizes_ = std::move(batch_sizes);
  s->threads_ = options.threads > 0 ? options.threads : ThreadPool::hardware_threads();
  ThreadPool::set_global_threads(s->threads_);
  for (const TensorSpec& t : spec.outputs) s->output_names_.push_back(t.name);

  // Profiling inputs: the first sample, sliced or repeated to each batch size.
  s->base_sample_ = samples.front();
  for (int64_t b : s->batch_sizes_) {
    HONE_TRY(Sample rb, spec.batch_dim.empty() ? Result<Sample>(s->base_sample_)
                                               : spec.rebatch(s->base_sample_, b));
    HONE_TRY(auto flat, spec.flatten(rb));
    s->profile_inputs_[b] = std::move(flat);
  }
  // Check inputs: every sample given, and random ones with every dynamic dim
  // at its smallest and at its largest bound.
  for (const Sample& smp : samples) {
    HONE_TRY(auto flat, spec.flatten(smp));
    s->check_inputs_.push_back(std::move(flat));
  }
  s->sample_count_ = samples.size();
  std::map<std::string, int64_t> lo, hi;
  for (const auto& [name, b] : spec.bounds) {
    lo[name] = b.min;
    hi[name] = b.max;
  }
  // A bound whose shapes a sample already has adds no shape to the check,
  // only another run of the reference in f32 and f64, which on a large model
  // at its largest batch is most of the tuning time (vit_b_16 at 32).
  if (!spec.bounds.empty())
    for (const auto* dims : {&lo, &hi}) {
      HONE_TRY(Sample r, spec.random_sample(*dims, options.seed));
      HONE_TRY(auto flat, spec.flatten(r));
      const std::string shapes = shapes_text(flat);
      if (std::none_of(s->check_inputs_.begin(), s->check_inputs_.end(),
                       [&](const auto& c) { return shapes_text(c) == shapes; }))
        s->check_inputs_.push_back(std::move(flat));
    }

  HONE_TRY(s->graph_hash_, hone::graph_hash(graph));
  s->fingerprint_key_ = machine_fingerprint(s->threads_).key();
  if (options.use_cache) {
    auto cache = TuningCache::open(options.cache_path.empty() ? TuningCache::default_path()
                                                              : options.cache_path);
    if (cache)
      s->cache_.emplace(std::move(*cache));
    else
      HONE_LOG_WARN("tuning cache unavailable, measuring everything: {}",
                    cache.error().to_string());
  }

  // The graph passes run once here; every candidate that optimizes (the
  // `optimize` field of compiling backends) starts from this graph.
  if (auto opt = optimize_shared(graph); opt) {
    s->optimized_ = std::move(*opt);
    s->optimized_note_ = s->optimized_->report.describe();
    HONE_LOG_DEBUG("tune '{}': graph passes, once for every candidate: {}", graph.name(),
                   s->optimized_note_);
  } else {
    s->optimized_note_ = "the graph passes failed (" + opt.error().message() +
                         "); each candidate that optimizes runs them itself";
    HONE_LOG_WARN("tune '{}': {}", graph.name(), s->optimized_note_);
  }

  // The reference: built, run once per check input in f32 and f64; never profiled.
  CandidateResult& ref = s->results_[kReference];
  ref.backend = kReference;
  s->order_.push_back(kReference);
  s->emit(kReference, "build", 0, 0);
  HONE_TRY(auto ref_be, s->create_backend(kReference));
  const auto t0 = clock_type::now();
  HONE_CHECK_OK_CTX(guarded("reference build", [&] { return ref_be->build(graph); }),
                    "while building the reference backend");
  ref.build_ms = ms_since(t0);
  ref.built = true;
  ref.partition = "whole graph";
  ref.config_key = ref_be->config().key();
  ref.config = ref_be->config().describe();
  s->emit(kReference, "check inputs", 0, 0.1);
  HONE_CHECK_OK(s->run_reference(*ref_be));
  ref.checked = true;  // the reference is its own answer
  ref.correctness.truth = s->truth_;
  s->reference_s_ = s->elapsed_s();
  // In a group every rank's strategy compares against the same baseline.
  if (options.group != nullptr)
    HONE_CHECK_OK_CTX(options.group->agree_candidate(ref),
                      "while agreeing on the reference's figures with the other ranks");
  s->emit(kReference, "done", 0, 1.0);
  s->built_[kReference] = std::move(ref_be);
  return s;
}

Result<void> Session::run_reference(const Backend& ref) {
  // The truth: the same interpreter in f64. A registry whose reference has no
  // f64 mode (a test's), or a model the f64 run cannot take, falls back to
  // the f32 reference as the truth: then only the floors bound the errors.
  std::unique_ptr<Backend> wide;
  std::string no_f64;
  // The truth run also returns the witnesses of index outputs, after the outputs.
  const std::vector<TieSource> ties = tie_sources(graph_);
  Graph truth_graph = graph_;
  for (const TieSource& t : ties) truth_graph.add_output(t.values);
  if (auto w = create_backend(kReference); !w) {
    no_f64 = w.error().message();
  } else if (auto st = (*w)->set_precision(Precision::kFp64); !st) {
    no_f64 = st.error().message();
  } else if (auto b = guarded("f64 reference build", [&] { return (*w)->build(truth_graph); });
             !b) {
    no_f64 = b.error().message();
  } else {
    wide = std::move(*w);
  }
  std::vector<double> ms;
  for (size_t i = 0; i < check_inputs_.size(); ++i) {
    if (wide) {
      auto truth = guarded("f64 reference infer", [&] { return wide->infer(check_inputs_[i]); });
      if (truth) {
        std::vector<TieWitness> witnesses;
        for (size_t t = 0; t < ties.size(); ++t)
          witnesses.push_back({ties[t].output, std::move((*truth)[graph_.outputs().size() + t]),
                               ties[t].axis, ties[t].along_axis});
        truth->resize(graph_.outputs().size());
        check_truth_.push_back(std::move(*truth));
        check_ties_.push_back(std::move(witnesses));
      } else {
        no_f64 = truth.error().message();
        wide.reset();
      }
    }
    const auto t0 = clock_type::now();
    auto out = guarded("reference infer", [&] { return ref.infer(check_inputs_[i]); });
    ms.push_back(ms_since(t0));
    if (!out)
      return fail(
          std::move(out).error().add_context("while running the reference on the check inputs"));
    check_expected_.push_back(std::move(*out));
  }
  if (!wide) {
    HONE_LOG_WARN("tune: no f64 reference ({}); candidates are judged against the f32 reference",
                  no_f64);
    check_truth_ = check_expected_;
    check_ties_.assign(check_inputs_.size(), {});
    truth_ = "f32 reference (no f64 run: " + no_f64 + ")";
  } else {
    truth_ = "f64 reference";
  }
  // The baseline's figures: the one-shot f32 run on a check input of the same
  // shapes as the batch's profiling input, else one run on that input.
  CandidateResult& r = results_.at(kReference);
  for (const auto& [b, ins] : profile_inputs_) {
    const std::string want = shapes_text(ins);
    double t = -1;  // the fastest of the runs of that shape (a sample and a bound often match)
    for (size_t i = 0; i < check_inputs_.size(); ++i)
      if (shapes_text(check_inputs_[i]) == want && (t < 0 || ms[i] < t)) t = ms[i];
    if (t < 0) {
      const auto t0 = clock_type::now();
      auto out = guarded("reference infer", [&] { return ref.infer(ins); });
      if (!out)
        return fail(std::move(out).error().add_context(
            fmt::format("while timing the reference at batch {}", b)));
      t = ms_since(t0);
    }
    LatencyFigures f;
    f.batch = b;
    f.p50_ms = f.p90_ms = f.p99_ms = f.mean_ms = f.min_ms = f.max_ms = t;
    f.throughput = t > 0 ? static_cast<double>(b) * 1000.0 / t : 0;
    f.runs = 1;  // each run was one inference; the fastest is kept
    r.figures.push_back(f);
  }
  return {};
}

double Session::elapsed_s() const {
  return std::chrono::duration<double>(clock_type::now() - start_).count();
}

double Session::eta_s(int index, double fraction) const {
  const int count = static_cast<int>(candidates_.size()) + 1;
  const double left = std::max(0.0, static_cast<double>(count - index) - fraction);
  double per = options_.candidate_budget_s;  // before any candidate finished: the budget
  if (!candidate_seconds_.empty()) {
    per = 0;
    for (double x : candidate_seconds_) per += x;
    per /= static_cast<double>(candidate_seconds_.size());
  }
  if (index == 0) return -1;  // the reference's check inputs: nothing to go by yet
  double eta = left * per;
  if (options_.time_budget_s > 0)
    eta = std::min(eta, std::max(0.0, options_.time_budget_s - elapsed_s()));
  return eta;
}

GateTolerance Session::tolerance_for(const Backend& be) const {
  if (options_.tolerance) return *options_.tolerance;
  // Each precision has its own bound; a mixed plan is judged by its reduced one.
  return GateTolerance::for_precision(be.precision());
}

double Session::best_p50(int64_t batch) const {
  double best = 0;
  for (const auto& [name, r] : results_) {
    if (name != kReference && !r.usable()) continue;
    if (const LatencyFigures* f = r.at_batch(batch); f != nullptr && f->p50_ms > 0)
      best = best == 0 ? f->p50_ms : std::min(best, f->p50_ms);
  }
  return best;
}

Result<std::unique_ptr<Backend>> Session::create_backend(
    const std::string& candidate, const std::vector<std::string>& fp32_nodes) const {
  HONE_TRY(const CandidateName split, split_candidate(candidate));
  const std::string& name = split.backend;
  HONE_TRY(auto be, registry_->create(name));
  HONE_CHECK_OK(be->configure("threads", std::to_string(threads_)));
  be->share_optimized(optimized_);
  // A backend that sizes its buffers by the dims' bounds gets the spec's
  // (the user's --config wins).
  if (be->config().has("dim_bounds") && !spec_.bounds.empty())
    HONE_CHECK_OK(be->configure("dim_bounds", spec_.max_bounds_text()));
  if (auto it = options_.configs.find(name); it != options_.configs.end())
    for (const auto& [field, value] : it->second) HONE_CHECK_OK(be->configure(field, value));
  // The candidate's own precision wins over the user's --config (it is what
  // the candidate's name says it is).
  if (split.precision) HONE_CHECK_OK(be->set_precision(*split.precision));
  if (!fp32_nodes.empty()) HONE_CHECK_OK(be->set_fp32_nodes(fp32_nodes));
  return be;
}

void Session::emit(const std::string& name, const std::string& step, int index,
                   double fraction) const {
  if (!options_.progress) return;
  TuneEvent e;
  e.candidate = name;
  e.step = step;
  e.candidate_index = index;
  e.candidate_count = static_cast<int>(candidates_.size()) + 1;
  e.fraction = fraction;
  e.eta_s = eta_s(index, fraction);
  options_.progress(e);
}

std::unique_ptr<Backend> Session::build_and_check(const std::string& name, CandidateResult& r,
                                                  int index,
                                                  const std::vector<std::string>& fp32_nodes) {
  emit(name, "build", index, 0.05);
  const auto split = split_candidate(name);
  if (const auto* entry = registry_->find(split ? split->backend : name); entry != nullptr) {
    if (std::string why = entry->unavailable(); !why.empty()) {
      r.error = Error(ErrorCode::kUnsupportedHardware,
                      "backend '" + name + "' cannot run on this machine: " + why);
      return nullptr;
    }
  }
  auto be = create_backend(name, fp32_nodes);
  if (!be) {
    r.error = std::move(be).error();
    return nullptr;
  }
  r.precision = std::string(to_string((*be)->precision()));
  r.fp32_nodes = fp32_nodes;
  // A backend that records the choices it times at build or plan time in
  // its config (BackendConfig::declare_record: cuda's and select's
  // kernel_choices, onednn's and select's timed_choices) could choose
  // differently on each rank; a group takes it only with every record given
  // (--config onednn.timed_choices=... from a package tuned alone).
  if (options_.group != nullptr)
    for (const std::string& f : (*be)->config().record_fields())
      if ((*be)->config().get<std::string>(f, "").empty()) {
        r.error = Error(ErrorCode::kUnsupported,
                        "backend '" + name + "' times kernels at build and records them in " + f +
                            ", and the ranks of a group could choose differently; give it " + f +
                            " (a package's, tuned alone) to tune it in a group");
        return nullptr;
      }
  r.config_key = (*be)->config().key();
  r.config = (*be)->config().describe();
  const auto t0 = clock_type::now();
  auto built = guarded(name + " build", [&] { return (*be)->build(graph_); });
  r.build_ms = ms_since(t0);
  if (!built) {
    r.error = std::move(built).error();
    return nullptr;
  }
  r.built = true;
  if (auto part = (*be)->plan(graph_); part) {
    r.partition = part->blocks.size() == 1 && part->blocks[0].on_backend ? "whole graph"
                                                                         : part->describe(graph_);
  }
  r.kernel_plan = distinct_plan((*be)->describe_kernels());
  emit(name, "check", index, 0.2);
  // Cancelling (Ctrl-C in Python) stops between steps, not only between candidates.
  if (options_.cancelled && options_.cancelled()) {
    r.error = Error(ErrorCode::kFailedPrecondition, "tuning was cancelled before its check");
    return nullptr;
  }
  const GateTolerance tol = tolerance_for(**be);
  CorrectnessResult worst;
  for (size_t i = 0; i < check_inputs_.size(); ++i) {
    auto out = guarded(name + " infer", [&] { return (*be)->infer(check_inputs_[i]); });
    if (!out) {
      r.error = std::move(out).error().add_context("while checking against the reference");
      return nullptr;
    }
    worst =
        merge_checks(std::move(worst), calibrated_check(*out, check_expected_[i], check_truth_[i],
                                                        output_names_, tol, check_ties_[i]));
  }
  worst.truth = truth_;
  r.checked = true;
  r.correctness = worst;
  if (!worst.passed) return nullptr;
  return std::move(*be);
}

void Session::measure(const Backend& be, CandidateResult& r, int index) {
  const auto t0 = clock_type::now();
  const double budget = options_.candidate_budget_s;
  size_t done = 0;
  for (const auto& [b, ins] : profile_inputs_) {
    emit(r.backend, fmt::format("profile batch {}", b), index,
         0.3 + 0.7 * static_cast<double>(done) / static_cast<double>(profile_inputs_.size()));
    if (options_.cancelled && options_.cancelled()) {
      r.error = Error(ErrorCode::kFailedPrecondition,
                      fmt::format("tuning was cancelled before profiling batch {}", b));
      return;
    }
    // What is left of the candidate's budget, shared by the batches left;
    // with a budget for the whole tune, also its fair share of what is left
    // of that, shared with the candidates not yet tried.
    ProfileOptions po = options_.profile;
    const double spent = std::chrono::duration<double>(clock_type::now() - t0).count();
    const double batches_left = static_cast<double>(profile_inputs_.size() - done);
    if (budget > 0) po.max_seconds = std::min(po.max_seconds, (budget - spent) / batches_left);
    if (options_.time_budget_s > 0) {
      const double candidates_left = std::max(
          1.0, static_cast<double>(candidates_.size()) + 2.0 - static_cast<double>(order_.size()));
      po.max_seconds = std::min(po.max_seconds, (options_.time_budget_s - elapsed_s()) /
                                                    (candidates_left * batches_left));
    }
    po.max_seconds = std::max(po.max_seconds, 0.0);
    po.stop_if_slower_ms = best_p50(b);
    ++done;
    auto f = guarded(r.backend + " profile", [&] { return profile(be, ins, b, po); });
    if (!f) {
      r.error = std::move(f).error().add_context(fmt::format("while profiling at batch {}", b));
      return;
    }
    if (f->dominated)
      HONE_LOG_DEBUG("tune: {} at batch {}: stopped after {} runs, slower than the best p50 {} ms",
                     r.backend, b, f->runs, po.stop_if_slower_ms);
    r.figures.push_back(*f);
  }
}

const CandidateResult& Session::evaluate(const std::string& name) {
  if (auto it = results_.find(name); it != results_.end()) return it->second;
  CandidateResult& r = evaluate_here(name);
  // In a group every rank evaluates the same candidates in the same order
  // (the strategies are deterministic on agreed figures), so each result is
  // agreed before the strategy looks at it. After one failed agreement no
  // rank talks again: the remaining candidates fail at once.
  if (options_.group != nullptr && !group_error_) {
    if (auto st = options_.group->agree_candidate(r); !st) group_error_ = std::move(st).error();
  }
  if (group_error_ && !r.error && r.skipped.empty())
    r.error =
        Error(*group_error_).add_context("while agreeing on '" + name + "' with the other ranks");
  return r;
}

Result<void> Session::evaluate_share(const std::vector<std::string>& names) {
  TuneGroup& g = *options_.group;
  std::vector<CandidateResult> mine;
  for (size_t i = 0; i < names.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(g.size())) == g.rank() &&
        !results_.contains(names[i]))
      mine.push_back(evaluate_here(names[i]));
  HONE_TRY(auto all, g.share_candidates(mine));
  for (CandidateResult& c : all)
    if (!results_.contains(c.backend)) {
      order_.push_back(c.backend);
      results_[c.backend] = std::move(c);
    }
  return {};
}

CandidateResult& Session::evaluate_here(const std::string& name) {
  const int index = static_cast<int>(order_.size());
  CandidateResult& r = results_[name];
  r.backend = name;
  order_.push_back(name);
  if (group_error_) {
    r.error = Error(*group_error_).add_context("tuning stopped before '" + name + "'");
    return r;
  }
  if (options_.cancelled && options_.cancelled()) {
    r.error = Error(ErrorCode::kFailedPrecondition, "tuning was cancelled before this candidate");
    return r;
  }
  if (options_.time_budget_s > 0 && elapsed_s() >= options_.time_budget_s) {
    r.skipped = fmt::format("the time budget of {:g} s was spent before it was reached",
                            options_.time_budget_s);
    emit(name, "skipped (time budget)", index, 1.0);
    return r;
  }
  const auto started = clock_type::now();
  // Cached figures (with the check result) skip building and measuring; the
  // winner is built and checked again before it is handed out.
  if (lookup_cache(r)) {
    emit(name, "cached", index, 1.0);
    return r;
  }
  std::unique_ptr<Backend> be = build_and_check(name, r, index);
  if (!be && r.checked && !r.correctness.passed) be = search_fp32_nodes(name, r, index);
  if (be) {
    measure(*be, r, index);
    // Plans made since the build (a dynamic block plans each shape at its
    // first run; cuda's activations=auto decides there) join the kernel plan.
    r.kernel_plan = distinct_plan(be->describe_kernels());
  }
  candidate_seconds_.push_back(std::chrono::duration<double>(clock_type::now() - started).count());
  emit(name, r.error || !r.correctness.passed ? "failed" : "done", index, 1.0);
  if (r.error) HONE_LOG_INFO("tune: {} failed: {}", name, r.error->to_string());
  if (r.usable()) store_cache(r);
  if (be) built_[name] = std::move(be);
  return r;
}

Result<std::unique_ptr<Backend>> Session::take_built(const std::string& name) {
  if (auto it = built_.find(name); it != built_.end() && it->second) return std::move(it->second);
  CandidateResult fresh;
  fresh.backend = name;
  std::vector<std::string> fp32_nodes;  // a mixed plan's, as the cache recorded them
  if (auto it = results_.find(name); it != results_.end()) fp32_nodes = it->second.fp32_nodes;
  auto be = build_and_check(name, fresh, static_cast<int>(order_.size()), fp32_nodes);
  if (fresh.error)
    return fail(
        Error(*fresh.error).add_context("while building the chosen backend '" + name + "'"));
  if (!fresh.correctness.passed)
    return fail(ErrorCode::kFailedPrecondition,
                "the chosen backend '" + name +
                    "' (figures from the tuning cache) now gives wrong results: " +
                    fresh.correctness.message);
  CandidateResult& r = results_[name];
  r.kernel_plan = fresh.kernel_plan;
  r.correctness = fresh.correctness;
  return be;
}

std::vector<CandidateResult> Session::results_in_order() const {
  std::vector<CandidateResult> out;
  for (const auto& n : order_) out.push_back(results_.at(n));
  return out;
}

}  // namespace hone::tune_internal
