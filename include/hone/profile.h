// Profiling: latency percentiles and throughput of one backend on one input.
//
//   ProfileOptions opts;                               // warm-up, CV window 20, 20..200 runs
//   HONE_TRY(LatencyFigures f, profile(backend, inputs, /*batch=*/8, opts));
//   f.p50_ms; f.throughput;                            // samples per second
//
// After warm-up it runs until the coefficient of variation of the last
// `window` latencies falls under `cv_target` (at least `min_runs`, at most
// `max_runs`). `max_seconds` bounds the whole measurement, warm-up included:
// once spent it stops after at least 3 timed runs (1 warm-up), whatever
// `min_runs` says. With `stop_if_slower_ms` set it also stops, from the 5th
// run on, once the lower end of the p50's 95% confidence interval (an order
// statistic of the runs so far) is above that latency: the candidate is
// already slower than the best one seen, and `dominated` says so; sooner for
// a hopeless one: after a warm-up 10x that latency (its one figure), or two
// runs whose faster one is 3x it. Inputs are the caller's real (seeded)
// inputs, never zeros.
#pragma once

#include <cstdint>

#include "hone/backend.h"

namespace hone {

struct ProfileOptions {
  int warmup = 3;
  int window = 20;
  double cv_target = 0.10;
  int min_runs = 20;
  int max_runs = 200;
  double max_seconds = 20.0;
  /// 0: none; else stop once this is surely faster than what is being measured.
  double stop_if_slower_ms = 0;
};

struct LatencyFigures {
  int64_t batch = 1;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  double mean_ms = 0, min_ms = 0, max_ms = 0;
  double throughput = 0;  // samples per second at p50 (batch / p50)
  int runs = 0;
  double cv = 0;           // coefficient of variation of the last window
  bool converged = false;  // cv fell under the target
  /// Stopped early: slower than stop_if_slower_ms with 95% confidence.
  bool dominated = false;
  /// Stopped by max_seconds before converging.
  bool out_of_time = false;
};

/// Measures `backend` on `inputs` (one batch of `batch` samples). Errors: the
/// backend's infer error, with context.
[[nodiscard]] Result<LatencyFigures> profile(const Backend& backend,
                                             const std::vector<Tensor>& inputs, int64_t batch,
                                             const ProfileOptions& options);

/// Nearest-rank percentile of sorted values (q in [0, 1]).
double percentile_sorted(const std::vector<double>& sorted, double q);

}  // namespace hone
