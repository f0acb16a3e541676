#include "tune/session.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include <fmt/core.h>

#include "core/log.h"
#include "hone/thread_pool.h"
#include "tune/machine.h"

namespace hone::tune_internal {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::string shapes_text(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) s += (s.empty() ? "" : " ") + t.describe();
  return s;
}

/// A backend call that throws (bad_alloc, a library's exception) becomes an
/// error of the candidate instead of ending the process.
template <class F>
auto guarded(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kOutOfMemory, what + ": out of memory");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, what + " threw: " + e.what());
  }
}

}  // namespace

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

Result<std::unique_ptr<Session>> Session::create(const Graph& graph, const GraphSpec& spec,
                                                 const std::vector<Sample>& samples,
                                                 std::vector<int64_t> batch_sizes,
                                                 const TuneOptions& options,
                                                 const std::vector<std::string>& candidates) {
  std::unique_ptr<Session> s(new Session(graph, spec, options));
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
  if (!spec.bounds.empty())
    for (const auto* dims : {&lo, &hi}) {
      HONE_TRY(Sample r, spec.random_sample(*dims, options.seed));
      HONE_TRY(auto flat, spec.flatten(r));
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

  // The reference: built, its outputs are the expected ones, then measured.
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
  for (const auto& in : s->check_inputs_) {
    auto out = guarded("reference infer", [&] { return ref_be->infer(in); });
    if (!out)
      return fail(
          std::move(out).error().add_context("while running the reference on the check inputs"));
    s->check_expected_.push_back(std::move(*out));
  }
  ref.checked = true;  // the reference is its own answer
  if (!s->lookup_cache(ref)) {
    s->measure(*ref_be, ref, 0);
    if (ref.error) return fail(Error(*ref.error).add_context("while measuring the reference"));
    s->store_cache(ref);
  }
  s->emit(kReference, ref.from_cache ? "cached" : "done", 0, 1.0);
  s->built_[kReference] = std::move(ref_be);
  return s;
}

Result<std::unique_ptr<Backend>> Session::create_backend(const std::string& name) const {
  HONE_TRY(auto be, registry_->create(name));
  HONE_CHECK_OK(be->configure("threads", std::to_string(threads_)));
  // A backend that sizes its buffers by the dims' bounds gets the spec's
  // (the user's --config wins).
  if (be->config().has("dim_bounds") && !spec_.bounds.empty())
    HONE_CHECK_OK(be->configure("dim_bounds", spec_.max_bounds_text()));
  if (auto it = options_.configs.find(name); it != options_.configs.end())
    for (const auto& [field, value] : it->second) HONE_CHECK_OK(be->configure(field, value));
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
  options_.progress(e);
}

std::optional<CacheKey> Session::cache_key(const std::string& name,
                                           const std::string& config_key) const {
  if (!cache_) return std::nullopt;
  std::string shapes;
  for (const auto& [b, ins] : profile_inputs_)
    shapes += fmt::format("[{}] {}; ", b, shapes_text(ins));
  shapes += fmt::format("threads {}; checks {}", threads_, check_inputs_.size());
  const ProfileOptions& p = options_.profile;
  shapes += fmt::format("; profile {} {} {} {} {}", p.warmup, p.window, p.cv_target, p.min_runs,
                        p.max_runs);
  shapes += fmt::format("; tol {} {}", options_.tolerance.rtol, options_.tolerance.atol);
  return CacheKey{graph_hash_, name, config_key, shapes, spec_.key() + "/" + fingerprint_key_};
}

std::unique_ptr<Backend> Session::build_and_check(const std::string& name, CandidateResult& r,
                                                  int index) {
  emit(name, "build", index, 0.05);
  if (const auto* entry = registry_->find(name); entry != nullptr) {
    if (std::string why = entry->unavailable(); !why.empty()) {
      r.error = Error(ErrorCode::kUnsupportedHardware,
                      "backend '" + name + "' cannot run on this machine: " + why);
      return nullptr;
    }
  }
  auto be = create_backend(name);
  if (!be) {
    r.error = std::move(be).error();
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
  r.kernel_plan = distinct_plan((*be)->kernel_plan());
  emit(name, "check", index, 0.2);
  // A backend allowed reduced precision is checked with the loosest declared
  // tolerance of the reduced precisions it has.
  Tolerance tol = options_.tolerance;
  if ((*be)->config().get<bool>("allow_reduced_precision", false))
    for (const std::string& p : (*be)->capabilities().precisions)
      if (p != "f32") {
        const Tolerance t = Tolerance::for_precision(p);
        tol.rtol = std::max(tol.rtol, t.rtol);
        tol.atol = std::max(tol.atol, t.atol);
      }
  CorrectnessResult worst;
  for (size_t i = 0; i < check_inputs_.size(); ++i) {
    auto out = guarded(name + " infer", [&] { return (*be)->infer(check_inputs_[i]); });
    if (!out) {
      r.error = std::move(out).error().add_context("while checking against the reference");
      return nullptr;
    }
    worst = worse_of(worst, check_outputs(*out, check_expected_[i], output_names_, tol));
  }
  r.checked = true;
  r.correctness = worst;
  if (!worst.passed) return nullptr;
  return std::move(*be);
}

void Session::measure(const Backend& be, CandidateResult& r, int index) {
  size_t done = 0;
  for (const auto& [b, ins] : profile_inputs_) {
    emit(r.backend, fmt::format("profile batch {}", b), index,
         0.3 + 0.7 * static_cast<double>(done++) / static_cast<double>(profile_inputs_.size()));
    auto f = guarded(r.backend + " profile", [&] { return profile(be, ins, b, options_.profile); });
    if (!f) {
      r.error = std::move(f).error().add_context(fmt::format("while profiling at batch {}", b));
      return;
    }
    r.figures.push_back(*f);
  }
}

const CandidateResult& Session::evaluate(const std::string& name) {
  if (auto it = results_.find(name); it != results_.end()) return it->second;
  const int index = static_cast<int>(order_.size());
  CandidateResult& r = results_[name];
  r.backend = name;
  order_.push_back(name);
  // Cached figures (with the check result) skip building and measuring; the
  // winner is built and checked again before it is handed out.
  if (lookup_cache(r)) {
    emit(name, "cached", index, 1.0);
    return r;
  }
  std::unique_ptr<Backend> be = build_and_check(name, r, index);
  if (be) measure(*be, r, index);
  emit(name, r.error || !r.correctness.passed ? "failed" : "done", index, 1.0);
  if (r.error) HONE_LOG_INFO("tune: {} failed: {}", name, r.error->to_string());
  if (r.usable()) store_cache(r);
  if (be) built_[name] = std::move(be);
  return r;
}

bool Session::lookup_cache(CandidateResult& r) {
  if (!cache_) return false;
  auto probe = create_backend(r.backend);  // cheap: only its config key is needed
  if (!probe) return false;
  const auto key = cache_key(r.backend, (*probe)->config().key());
  auto hit = cache_->lookup(*key);
  if (!hit) {
    HONE_LOG_WARN("tuning cache lookup failed, measuring {}: {}", r.backend,
                  hit.error().to_string());
    ++cache_misses_;
    return false;
  }
  if (!*hit) {
    ++cache_misses_;
    return false;
  }
  auto cached = candidate_from_json(**hit);
  if (!cached) {
    HONE_LOG_WARN("tuning cache entry for {} unreadable, measuring again: {}", r.backend,
                  cached.error().to_string());
    ++cache_misses_;
    return false;
  }
  const std::string name = r.backend;
  const bool keep_check = name == kReference;
  CandidateResult fresh_check = r;
  r = std::move(*cached);
  r.backend = name;
  r.from_cache = true;
  if (keep_check) {  // the reference was built and run just now: keep what is true of this run
    r.built = fresh_check.built;
    r.build_ms = fresh_check.build_ms;
    r.checked = fresh_check.checked;
  }
  ++cache_hits_;
  HONE_LOG_DEBUG("tune: {}: figures from the tuning cache", name);
  return true;
}

void Session::store_cache(const CandidateResult& r) {
  if (!cache_) return;
  const auto key = cache_key(r.backend, r.config_key);
  if (auto st = cache_->store(*key, candidate_to_json(r)); !st)
    HONE_LOG_WARN("could not store {} in the tuning cache: {}", r.backend, st.error().to_string());
}

Result<std::unique_ptr<Backend>> Session::take_built(const std::string& name) {
  if (auto it = built_.find(name); it != built_.end() && it->second) return std::move(it->second);
  CandidateResult fresh;
  fresh.backend = name;
  auto be = build_and_check(name, fresh, static_cast<int>(order_.size()));
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

Result<BatchSearchResult> Session::search_batch(const std::string& name) {
  const BatchSearchOptions& o = options_.batch_search;
  BatchSearchResult res;
  res.backend = name;
  if (spec_.batch_dim.empty()) {
    res.stopped_because = "the model has no batch axis";
    searches_.push_back(res);
    return res;
  }
  const CandidateResult& r = evaluate(name);
  if (!r.usable())
    return fail(ErrorCode::kFailedPrecondition, "batch search on '" + name + "': it is not usable");
  Backend* be = nullptr;
  if (name == kReference) {
    be = built_.at(kReference).get();
  } else {
    HONE_TRY(auto b, take_built(name));
    built_[name] = std::move(b);
    be = built_[name].get();
  }
  GraphSpec wide = spec_;
  wide.bounds[spec_.batch_dim].max = std::max(wide.bounds[spec_.batch_dim].max, o.max_batch);
  ProfileOptions po = options_.profile;
  po.max_seconds = std::min(po.max_seconds, 5.0);
  double prev = 0;
  int stalls = 0;
  res.stopped_because = "reached the largest batch tried";
  for (int64_t b = std::max<int64_t>(o.start, 1); b <= o.max_batch; b *= 2) {
    emit(name, fmt::format("batch search {}", b), static_cast<int>(order_.size()), 0.5);
    auto point = guarded("batch search", [&]() -> Result<LatencyFigures> {
      HONE_TRY(Sample s, wide.rebatch(base_sample_, b));
      HONE_TRY(auto flat, wide.flatten(s));
      return profile(*be, flat, b, po);
    });
    if (!point) {
      res.stopped_because = point.error().code() == ErrorCode::kOutOfMemory
                                ? fmt::format("out of memory at batch {}", b)
                                : fmt::format("failed at batch {}: {}", b, point.error().message());
      break;
    }
    res.points.push_back(*point);
    if (o.latency_budget_ms > 0 && point->p50_ms > o.latency_budget_ms) {
      res.stopped_because =
          fmt::format("latency budget {} ms crossed at batch {}", o.latency_budget_ms, b);
      break;
    }
    if (prev > 0 && point->throughput < prev * (1 + o.min_gain)) {
      if (++stalls >= o.stalls_to_stop) {
        res.stopped_because = fmt::format("throughput grew less than {:.0f}% {} times in a row",
                                          o.min_gain * 100, stalls);
        break;
      }
    } else {
      stalls = 0;
    }
    prev = std::max(prev, point->throughput);
  }
  double best = 0;
  for (const auto& p : res.points)
    if (p.throughput > best && (o.latency_budget_ms <= 0 || p.p50_ms <= o.latency_budget_ms)) {
      best = p.throughput;
      res.best_batch = p.batch;
    }
  // The search's points count as the candidate's figures too.
  CandidateResult& rr = name == kReference ? results_.at(kReference) : results_.at(name);
  for (const auto& p : res.points)
    if (rr.at_batch(p.batch) == nullptr) rr.figures.push_back(p);
  std::sort(rr.figures.begin(), rr.figures.end(),
            [](const LatencyFigures& a, const LatencyFigures& b) { return a.batch < b.batch; });
  searches_.push_back(res);
  return res;
}

std::vector<CandidateResult> Session::results_in_order() const {
  std::vector<CandidateResult> out;
  for (const auto& n : order_) out.push_back(results_.at(n));
  return out;
}

}  // namespace hone::tune_internal
