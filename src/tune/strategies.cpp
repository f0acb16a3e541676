// The strategies and the baseline gate they share.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "hone/registry.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone {
namespace {

constexpr const char* kReference = kReferenceBackend;

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string list_or_all(const std::vector<std::string>& xs) {
  return xs.empty() ? "all" : join(xs);
}

/// Geometric mean over the batch sizes both measured of baseline p50 / candidate p50.
double speedup(const CandidateResult& c, const CandidateResult& base) {
  double log_sum = 0;
  int n = 0;
  for (const LatencyFigures& f : c.figures)
    if (const LatencyFigures* b = base.at_batch(f.batch); b != nullptr && f.p50_ms > 0) {
      log_sum += std::log(b->p50_ms / f.p50_ms);
      ++n;
    }
  return n == 0 ? 0 : std::exp(log_sum / n);
}

/// Why a candidate cannot be chosen, or "" when it can.
std::string unusable_reason(const CandidateResult& c) {
  if (!c.skipped.empty()) return "skipped: " + c.skipped;
  if (c.error) return "failed: " + c.error->message();
  if (!c.built) return "not built";
  if (!c.checked) return "not checked";
  if (!c.correctness.passed) return "wrong results: " + c.correctness.message;
  if (c.figures.empty()) return "not measured";
  return "";
}

double gate_factor(const TuneSession& s) {
  return 1.0 + s.options().baseline_gate_percent / 100.0;
}

/// The reference kept by the gate: the selection says what the best one reached.
Selection keep_reference(Selection sel, const std::string& best, const std::string& what) {
  if (!best.empty() && best != kReference) sel.losers[best] = what;
  sel.backend = kReference;
  sel.baseline_kept = true;
  sel.reason = "no candidate beat the reference by the baseline gate" +
               (best.empty() ? std::string() : " (best: " + best + ", " + what + ")");
  return sel;
}

/// Picks the candidate with the best `metric` (higher is better) among those
/// evaluated, applies the gate against the baseline's metric, and names why
/// each other one lost.
Result<Selection> pick_best(TuneSession& session, const std::vector<std::string>& names,
                            const std::function<double(const CandidateResult&)>& metric,
                            const std::string& metric_name,
                            const std::function<std::string(double)>& show) {
  const CandidateResult& base = session.baseline();
  Selection sel;
  std::string best;
  double best_value = -std::numeric_limits<double>::infinity();
  for (const std::string& n : names) {
    const CandidateResult& c = session.evaluate(n);
    if (std::string why = unusable_reason(c); !why.empty()) {
      sel.losers[n] = why;
      continue;
    }
    const double v = metric(c);
    if (v > best_value) {
      best_value = v;
      best = n;
    }
  }
  for (const std::string& n : names) {
    if (n == best || sel.losers.count(n)) continue;
    sel.losers[n] = fmt::format("{} {}, worse than {} of {}", metric_name,
                                show(metric(session.evaluate(n))), show(best_value), best);
  }
  if (best.empty()) return keep_reference(std::move(sel), "", "");
  const double base_value = metric(base);
  if (best != kReference && !(best_value >= base_value * gate_factor(session))) {
    return keep_reference(
        std::move(sel), best,
        fmt::format("{} {} vs reference {}, needs +{}%", metric_name, show(best_value),
                    show(base_value), session.options().baseline_gate_percent));
  }
  sel.backend = best;
  sel.reason =
      fmt::format("highest {}: {} (reference {})", metric_name, show(best_value), show(base_value));
  return sel;
}

std::string per_s(double v) {
  return fmt::format("{:.1f}/s", v);
}

}  // namespace

std::vector<std::string> Strategy::candidates(const std::vector<std::string>& registered) const {
  if (!backends_.empty()) return backends_;
  std::vector<std::string> out;
  for (const auto& n : registered)
    if (n != kReference) out.push_back(n);
  return out;
}

std::vector<std::string> Strategy::candidates(const TuneSession& session) const {
  std::vector<std::string> out;
  for (const auto& n : candidates(session.tried_by_default()))
    for (auto& v : session.variants(n)) out.push_back(std::move(v));
  return out;
}

std::vector<std::string> Strategy::dry_run(const std::vector<std::string>& registered,
                                           const std::vector<int64_t>& batch_sizes) const {
  std::string batches;
  for (int64_t b : batch_sizes) batches += (batches.empty() ? "" : ", ") + std::to_string(b);
  std::vector<std::string> lines;
  lines.push_back("strategy " + describe());
  lines.push_back(
      "baseline: build reference, run it once per check input in f32 and f64 (the f64 outputs "
      "are the truth; the f32 run's latency at batch " +
      batches + " is the baseline)");
  for (const auto& n : candidates(registered)) {
    const bool known = std::find(registered.begin(), registered.end(), n) != registered.end();
    lines.push_back(known ? "candidate " + n +
                                ": build, check against the f64 truth at the samples and the "
                                "bounds, measure at batch " +
                                batches + " (stopping early once surely slower than the best)"
                          : "candidate " + n + ": not registered in this build (would fail)");
  }
  return lines;
}

std::string FirstWins::describe() const {
  return "first-wins(" + list_or_all(backends()) + ")";
}

Result<Selection> FirstWins::select(TuneSession& session) const {
  const CandidateResult& base = session.baseline();
  const double need = gate_factor(session);
  Selection sel;
  for (const std::string& n : candidates(session)) {
    if (!sel.backend.empty()) {
      sel.losers[n] = "not tried: " + sel.backend + " won first";
      continue;
    }
    const CandidateResult& c = session.evaluate(n);
    if (std::string why = unusable_reason(c); !why.empty()) {
      sel.losers[n] = why;
      continue;
    }
    const double s = n == kReference ? need : speedup(c, base);
    if (s < need) {
      sel.losers[n] = fmt::format("{:.2f}x the reference's speed, needs {:.2f}x", s, need);
      continue;
    }
    sel.backend = n;
    sel.reason = n == kReference
                     ? "the reference was listed and reached first"
                     : fmt::format("first candidate to pass and beat the reference: {:.2f}x", s);
  }
  if (sel.backend.empty()) return keep_reference(std::move(sel), "", "");
  return sel;
}

std::string OneBackend::describe() const {
  return "one-backend(" + backends().front() + (fallback_when_slower_ ? "" : ", pinned") + ")";
}

Result<Selection> OneBackend::select(TuneSession& session) const {
  const std::string n = backends().front();
  const auto reg = session.registered();
  if (std::find(reg.begin(), reg.end(), n) == reg.end())
    return fail(ErrorCode::kNotFound,
                "one-backend: no backend named '" + n + "' (known: " + join(reg) + ")");
  // Under --precision auto, the one backend at its fastest precision that passes.
  Selection sel;
  std::string chosen = n;
  double best = -1;
  for (const std::string& v : session.variants(n)) {
    const CandidateResult& c = session.evaluate(v);
    if (std::string why = unusable_reason(c); !why.empty()) {
      if (v != n) sel.losers[v] = why;
      continue;
    }
    if (const double s = speedup(c, session.baseline()); s > best) best = s, chosen = v;
  }
  for (const std::string& v : session.variants(n))
    if (v != chosen && !sel.losers.contains(v))
      sel.losers[v] = fmt::format("{:.2f}x the reference's speed, {} reached {:.2f}x",
                                  speedup(session.evaluate(v), session.baseline()), chosen, best);
  sel.losers.erase(chosen);
  const CandidateResult& c = session.evaluate(chosen);
  if (!c.skipped.empty())
    return fail(ErrorCode::kFailedPrecondition,
                "one-backend: backend '" + n + "' was skipped: " + c.skipped);
  if (c.error) return fail(Error(*c.error).add_context("one-backend: backend '" + n + "' failed"));
  if (!c.correctness.passed)
    return fail(ErrorCode::kFailedPrecondition,
                "one-backend: backend '" + n + "' gives wrong results: " + c.correctness.message);
  if (std::string why = unusable_reason(c); !why.empty())
    return fail(ErrorCode::kInternal, "one-backend: backend '" + n + "' " + why);
  if (n == kReference) {
    sel.backend = n;
    sel.reason = "the one backend asked for";
    return sel;
  }
  const double s = speedup(c, session.baseline());
  if (s < 1.0 && fallback_when_slower_) {
    sel.losers[chosen] = fmt::format("slower than the reference ({:.2f}x its speed)", s);
    sel.backend = kReference;
    sel.baseline_kept = true;
    sel.reason = fmt::format("{} was slower than the reference ({:.2f}x), so the reference is kept",
                             chosen, s);
    return sel;
  }
  sel.backend = chosen;
  sel.reason = fmt::format("the one backend asked for; {:.2f}x the reference's speed", s);
  return sel;
}

std::string MaxThroughput::describe() const {
  return "max-throughput(" + list_or_all(backends()) + (search_batch_ ? ", batch search" : "") +
         ")";
}

Result<Selection> MaxThroughput::select(TuneSession& session) const {
  const auto names = candidates(session);
  if (search_batch_)
    for (const auto& n : names)
      if (session.evaluate(n).usable()) HONE_CHECK_OK(session.search_batch(n));
  return pick_best(
      session, names, [](const CandidateResult& c) { return c.best_throughput(); }, "throughput",
      per_s);
}

std::vector<std::string> MaxThroughput::dry_run(const std::vector<std::string>& registered,
                                                const std::vector<int64_t>& batch_sizes) const {
  auto lines = Strategy::dry_run(registered, batch_sizes);
  if (search_batch_)
    lines.push_back("then: batch-size search (doubling) on every candidate that passes");
  return lines;
}

std::string MinLatency::describe() const {
  return "min-latency(" + list_or_all(backends()) + ")";
}

Result<Selection> MinLatency::select(TuneSession& session) const {
  // Higher is better in pick_best (and its gate), so the metric is calls per
  // millisecond at the smallest batch; it is shown as the p50 it stands for.
  return pick_best(
      session, candidates(session),
      [](const CandidateResult& c) {
        const double p50 = c.min_batch_p50_ms();
        return std::isfinite(p50) && p50 > 0 ? 1.0 / p50 : 0.0;
      },
      "p50 at the smallest batch",
      [](double v) { return v > 0 ? fmt::format("{:.3f} ms", 1.0 / v) : "-"; });
}

std::string LatencyBudget::describe() const {
  return fmt::format("latency-budget({} ms; {})", budget_ms_, list_or_all(backends()));
}

Result<Selection> LatencyBudget::select(TuneSession& session) const {
  const double budget = budget_ms_;
  auto within = [budget](const CandidateResult& c) {
    double best = 0;
    for (const LatencyFigures& f : c.figures)
      if (f.p50_ms <= budget) best = std::max(best, f.throughput);
    return best;
  };
  auto names = candidates(session);
  HONE_TRY(Selection sel, pick_best(session, names, within, "throughput within the budget", per_s));
  const CandidateResult& chosen =
      sel.backend == kReference ? session.baseline() : session.evaluate(sel.backend);
  if (within(chosen) > 0) return sel;
  // Nothing fits, the reference included: say what came closest.
  std::string fastest;
  double fastest_ms = std::numeric_limits<double>::infinity();
  names.push_back(kReference);
  for (const auto& n : names) {
    const CandidateResult& c = n == kReference ? session.baseline() : session.evaluate(n);
    if (!c.usable()) continue;
    for (const LatencyFigures& f : c.figures)
      if (f.p50_ms < fastest_ms) {
        fastest_ms = f.p50_ms;
        fastest = fmt::format("{} at batch {}: p50 {:.3f} ms", n, f.batch, f.p50_ms);
      }
  }
  return fail(ErrorCode::kFailedPrecondition,
              fmt::format("latency-budget: no backend and batch size fits in {} ms (fastest: {})",
                          budget, fastest.empty() ? "none measured" : fastest));
}

Result<std::unique_ptr<Strategy>> parse_strategy(const std::string& text,
                                                 const std::vector<std::string>& backends) {
  if (text == "first-wins") return std::make_unique<FirstWins>(backends);
  if (text == "max-throughput") return std::make_unique<MaxThroughput>(backends);
  if (text == "max-throughput+search") return std::make_unique<MaxThroughput>(backends, true);
  if (text == "min-latency") return std::make_unique<MinLatency>(backends);
  if (text == "one-backend") {
    if (backends.size() != 1)
      return fail(ErrorCode::kInvalidArgument,
                  "strategy one-backend needs exactly one backend (--backends NAME), got " +
                      std::to_string(backends.size()));
    return std::make_unique<OneBackend>(backends.front());
  }
  constexpr std::string_view kBudget = "latency-budget:";
  if (text.rfind(kBudget, 0) == 0) {
    const std::string ms = text.substr(kBudget.size());
    char* end = nullptr;
    const double v = std::strtod(ms.c_str(), &end);
    if (ms.empty() || end != ms.c_str() + ms.size() || !(v > 0) || !std::isfinite(v))
      return fail(
          ErrorCode::kInvalidArgument,
          "latency-budget needs a positive number of milliseconds (latency-budget:MS), got '" + ms +
              "'");
    return std::make_unique<LatencyBudget>(v, backends);
  }
  return fail(
      ErrorCode::kInvalidArgument,
      "unknown strategy '" + text +
          "' (known: first-wins, one-backend, max-throughput, max-throughput+search, min-latency, "
          "latency-budget:MS)");
}

}  // namespace hone
