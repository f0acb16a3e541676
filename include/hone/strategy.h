// Strategies: how tuning chooses among candidate backends.
//
//   MaxThroughput s({"onednn", "blas"});            // or FirstWins, OneBackend, MinLatency,
//   LatencyBudget HONE_TRY(TunedModel m, hone::tune(graph, samples, s, options));
//   std::puts(s.describe().c_str());
//
// A strategy drives a TuneSession: it asks the session to evaluate
// candidates (build, check against the reference, measure at each batch
// size; each at most once) and returns a Selection. Every strategy shares
// the baseline gate: a choice must beat the reference by
// TuneOptions::baseline_gate_percent on the strategy's own metric, or the
// reference is kept and the selection says so. dry_run() says what would be
// built and measured and builds nothing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hone/tune_report.h"

namespace hone {

struct TuneOptions;

/// What a strategy can ask of the tuner. Implemented by hone::tune.
class TuneSession {
 public:
  virtual ~TuneSession() = default;
  /// The reference backend, built, checked (against itself) and measured once.
  virtual const CandidateResult& baseline() = 0;
  /// Builds, checks and measures `backend` once; later calls return the same result.
  virtual const CandidateResult& evaluate(const std::string& backend) = 0;
  /// Doubling batch-size search on `backend` (see BatchSearchOptions).
  [[nodiscard]] virtual Result<BatchSearchResult> search_batch(const std::string& backend) = 0;
  virtual const TuneOptions& options() const = 0;
  /// Names in the registry tuning uses, in registry order.
  virtual std::vector<std::string> registered() const = 0;
  /// What a strategy naming no backends tries: registered() less the
  /// opt-in backends (BackendRegistry::Entry::opt_in).
  virtual std::vector<std::string> tried_by_default() const { return registered(); }
  /// The candidates one backend stands for: {backend}, or with
  /// TuneOptions::precision_auto also "backend@bf16", ... for each reduced
  /// precision it declares.
  virtual std::vector<std::string> variants(const std::string& backend) const { return {backend}; }
};

struct Selection {
  std::string backend;
  std::string reason;
  std::map<std::string, std::string> losers;  // backend -> why it lost
  bool baseline_kept = false;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// "max-throughput(onednn, blas)".
  virtual std::string describe() const = 0;
  /// The candidates in order; empty means every registered backend but the reference.
  virtual std::vector<std::string> backends() const { return backends_; }
  /// Runs the search. Errors: OneBackend's build or correctness failure,
  /// LatencyBudget when nothing fits, an unknown backend name.
  [[nodiscard]] virtual Result<Selection> select(TuneSession& session) const = 0;
  /// What select() would build and measure, one line per step, building nothing.
  virtual std::vector<std::string> dry_run(const std::vector<std::string>& registered,
                                           const std::vector<int64_t>& batch_sizes) const;

 protected:
  explicit Strategy(std::vector<std::string> backends) : backends_(std::move(backends)) {}
  /// backends(), or every registered name but "reference" when empty.
  std::vector<std::string> candidates(const std::vector<std::string>& registered) const;
  /// candidates(session.tried_by_default()), each with its precision variants.
  std::vector<std::string> candidates(const TuneSession& session) const;

 private:
  std::vector<std::string> backends_;
};

/// The first candidate (in order) that builds, passes the check and beats the
/// baseline; later ones are not built.
class FirstWins final : public Strategy {
 public:
  explicit FirstWins(std::vector<std::string> backends = {}) : Strategy(std::move(backends)) {}
  std::string describe() const override;
  Result<Selection> select(TuneSession& session) const override;
};

/// Exactly one backend. Its build and correctness errors are returned to the
/// caller; it falls back to the reference only when slower than it (unless
/// `fallback_when_slower` is false: a pinned backend, as tests use).
class OneBackend final : public Strategy {
 public:
  explicit OneBackend(std::string backend, bool fallback_when_slower = true)
      : Strategy({std::move(backend)}), fallback_when_slower_(fallback_when_slower) {}
  std::string describe() const override;
  Result<Selection> select(TuneSession& session) const override;

 private:
  bool fallback_when_slower_;
};

/// Highest throughput over the batch sizes (with a batch-size search per
/// candidate when `search_batch`).
class MaxThroughput final : public Strategy {
 public:
  explicit MaxThroughput(std::vector<std::string> backends = {}, bool search_batch = false)
      : Strategy(std::move(backends)), search_batch_(search_batch) {}
  std::string describe() const override;
  Result<Selection> select(TuneSession& session) const override;
  std::vector<std::string> dry_run(const std::vector<std::string>& registered,
                                   const std::vector<int64_t>& batch_sizes) const override;

 private:
  bool search_batch_;
};

/// Lowest p50 latency at the smallest batch size (batch 1 by default).
class MinLatency final : public Strategy {
 public:
  explicit MinLatency(std::vector<std::string> backends = {}) : Strategy(std::move(backends)) {}
  std::string describe() const override;
  Result<Selection> select(TuneSession& session) const override;
};

/// Highest throughput among (backend, batch) points whose p50 is within the
/// budget; an error naming the fastest point when none fits.
class LatencyBudget final : public Strategy {
 public:
  LatencyBudget(double budget_ms, std::vector<std::string> backends = {})
      : Strategy(std::move(backends)), budget_ms_(budget_ms) {}
  std::string describe() const override;
  Result<Selection> select(TuneSession& session) const override;
  double budget_ms() const { return budget_ms_; }

 private:
  double budget_ms_;
};

/// "first-wins", "one-backend" (needs exactly one backend), "max-throughput",
/// "min-latency", "latency-budget:MS"; `backends` as given by --backends.
[[nodiscard]] Result<std::unique_ptr<Strategy>> parse_strategy(
    const std::string& text, const std::vector<std::string>& backends);

}  // namespace hone
