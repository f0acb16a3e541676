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

}  // namespace

Result<LatencyFigures> profile(const Backend& backend, const std::vector<Tensor>& inputs,
                               int64_t batch, const ProfileOptions& o) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < o.warmup; ++i) {
    auto y = backend.infer(inputs);
    if (!y) return fail(std::move(y).error().add_context("while warming up for profiling"));
  }
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(std::max(o.max_runs, 1)));
  const auto start = clock::now();
  LatencyFigures f;
  f.batch = batch;
  const int max_runs = std::max(o.max_runs, 1);
  const int min_runs = std::clamp(o.min_runs, 1, max_runs);
  const size_t window = static_cast<size_t>(std::max(o.window, 2));
  while (static_cast<int>(ms.size()) < max_runs) {
    const auto a = clock::now();
    auto y = backend.infer(inputs);
    const auto b = clock::now();
    if (!y) return fail(std::move(y).error().add_context("while profiling"));
    ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    if (static_cast<int>(ms.size()) < min_runs) continue;
    f.cv = coefficient_of_variation(ms, window);
    if (ms.size() >= window && f.cv < o.cv_target) {
      f.converged = true;
      break;
    }
    if (std::chrono::duration<double>(clock::now() - start).count() > o.max_seconds) break;
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
