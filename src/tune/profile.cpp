#include "hone/profile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace hone {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

namespace {

double coefficient_of_variation(const std::vector<double>& v, size_t window) {
  const size_t n = std::min(window, v.size());
  if (n < 2) return INFINITY;
  const auto first = v.end() - static_cast<std::ptrdiff_t>(n);
  const double mean = std::accumulate(first, v.end(), 0.0) / static_cast<double>(n);
  double var = 0;
  for (auto it = first; it != v.end(); ++it) var += (*it - mean) * (*it - mean);
  var /= static_cast<double>(n - 1);
  return mean > 0 ? std::sqrt(var) / mean : INFINITY;
}

/// The lower end of a 95% confidence interval of the median of `v`: the
/// order statistic at rank n/2 - 1.96 sqrt(n)/2 (binomial, normal approximation).
double median_lower_bound(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  const double rank = std::floor(n / 2.0 - 0.98 * std::sqrt(n));
  return v[static_cast<size_t>(std::clamp(rank, 0.0, n - 1))];
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Result<LatencyFigures> profile(const Backend& backend, const std::vector<Tensor>& inputs,
                               int64_t batch, const ProfileOptions& o) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // A slow model spends at most a quarter of the budget warming up (one run at least).
  // Far slower than the best: losers that cannot come back by noise stop
  // early (two runs in a row over 10x the best p50, warm-up or timed; two
  // timed runs whose faster one is 3x), so a candidate that takes seconds
  // where the best takes tenths does not spend the budget proving it. The
  // first run alone never decides: it pays first-run costs (a backend that
  // creates its kernels for a shape when it first sees it, page faults).
  constexpr double kHopelessWarmup = 10, kHopelessRuns = 3;
  int hopeless_in_a_row = 0;
  auto hopeless = [&](double t) {
    if (o.stop_if_slower_ms > 0 && t > kHopelessWarmup * o.stop_if_slower_ms)
      return ++hopeless_in_a_row >= 2;
    hopeless_in_a_row = 0;
    return false;
  };
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(std::max(o.max_runs, 1)));
  constexpr int kRunsInBudget = 3, kRunsBeforeDominance = 5;
  LatencyFigures f;
  f.batch = batch;
  for (int i = 0; i < o.warmup; ++i) {
    const auto a = clock::now();
    auto y = backend.infer(inputs);
    const double t = std::chrono::duration<double, std::milli>(clock::now() - a).count();
    if (!y) return fail(std::move(y).error().add_context("while warming up for profiling"));
    if (hopeless(t)) {
      ms.push_back(t);  // the only figure there will be: a run after the first
      f.dominated = true;
      break;
    }
    if (seconds_since(start) > o.max_seconds / 4) break;
  }
  const int max_runs = std::max(o.max_runs, 1);
  const int min_runs = std::clamp(o.min_runs, 1, max_runs);
  const size_t window = static_cast<size_t>(std::max(o.window, 2));
  while (!f.dominated && static_cast<int>(ms.size()) < max_runs) {
    const auto a = clock::now();
    auto y = backend.infer(inputs);
    const auto b = clock::now();
    if (!y) return fail(std::move(y).error().add_context("while profiling"));
    ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    const int n = static_cast<int>(ms.size());
    const bool slower =
        o.stop_if_slower_ms > 0 &&
        ((n >= kRunsBeforeDominance && median_lower_bound(ms) > o.stop_if_slower_ms) ||
         (n >= 2 && *std::min_element(ms.begin(), ms.end()) > kHopelessRuns * o.stop_if_slower_ms));
    if (hopeless(ms.back()) || slower) {
      f.dominated = true;
      break;
    }
    if (n >= kRunsInBudget && seconds_since(start) > o.max_seconds) {
      f.out_of_time = n < min_runs || coefficient_of_variation(ms, window) >= o.cv_target;
      break;
    }
    if (n < min_runs) continue;
    f.cv = coefficient_of_variation(ms, window);
    if (ms.size() >= window && f.cv < o.cv_target) {
      f.converged = true;
      break;
    }
  }
  f.runs = static_cast<int>(ms.size());
  if (!f.converged) f.cv = coefficient_of_variation(ms, window);
  f.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  f.p50_ms = percentile_sorted(ms, 0.50);
  f.p90_ms = percentile_sorted(ms, 0.90);
  f.p99_ms = percentile_sorted(ms, 0.99);
  f.min_ms = ms.front();
  f.max_ms = ms.back();
  f.throughput = f.p50_ms > 0 ? static_cast<double>(batch) * 1000.0 / f.p50_ms : 0;
  return f;
}

}  // namespace hone
