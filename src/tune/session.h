// The TuneSession hone::tune hands to a strategy: builds, checks and
// measures candidates on demand, each at most once, with the tuning cache.
// Internal to src/tune/.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hone/optimize.h"
#include "hone/registry.h"
#include "hone/tune.h"
#include "tune/cache.h"

namespace hone::tune_internal {

/// Candidate name -> (registry name, the precision it asks for, if any):
/// "onednn@bf16" -> ("onednn", bf16); "onednn" -> ("onednn", none).
struct CandidateName {
  std::string backend;
  std::optional<Precision> precision;
};
Result<CandidateName> split_candidate(const std::string& name);

/// {backend}, and with `all` "backend@P" for every precision the registry
/// entry declares but fp32, fp64 and (unless `fp8`) fp8.
std::vector<std::string> precision_variants(const BackendRegistry& registry,
                                            const std::string& backend, bool all, bool fp8 = false);

class Session final : public TuneSession {
 public:
  /// Prepares inputs (profiling batches, checks at the bounds), builds the
  /// reference in f32 and f64 and runs each once per check input: the f64
  /// outputs are the truth, the f32 ones calibrate the gate and their
  /// latency is the baseline's.
  static Result<std::unique_ptr<Session>> create(const Graph& graph, const GraphSpec& spec,
                                                 const std::vector<Sample>& samples,
                                                 std::vector<int64_t> batch_sizes,
                                                 const TuneOptions& options,
                                                 const std::vector<std::string>& candidates);

  const CandidateResult& baseline() override { return results_.at(kReference); }
  const CandidateResult& evaluate(const std::string& backend) override;
  /// With a group that splits candidates: evaluates this rank's share of
  /// `names` here and takes the other ranks' results as they measured them.
  Result<void> evaluate_share(const std::vector<std::string>& names);
  /// Set once an agreement with the other ranks failed: tune() fails with it.
  const std::optional<Error>& group_error() const { return group_error_; }
  Result<BatchSearchResult> search_batch(const std::string& backend) override;
  const TuneOptions& options() const override { return options_; }
  std::vector<std::string> registered() const override { return registry_->names(); }
  std::vector<std::string> tried_by_default() const override {
    return registry_->tried_by_default();
  }
  std::vector<std::string> variants(const std::string& backend) const override {
    return precision_variants(*registry_, backend, options_.precision_auto, options_.precision_fp8);
  }

  /// The built backend for `name`, building it now when its figures came
  /// from the cache (and checking it again). Moves it out of the session.
  Result<std::unique_ptr<Backend>> take_built(const std::string& name);
  /// Candidates in the order evaluated (the reference first).
  std::vector<CandidateResult> results_in_order() const;
  std::vector<BatchSearchResult> batch_searches() const { return searches_; }
  const std::vector<int64_t>& batch_sizes() const { return batch_sizes_; }
  /// The reference's outputs for each sample, in order.
  std::vector<std::vector<Tensor>> sample_outputs() const {
    return {check_expected_.begin(),
            check_expected_.begin() + static_cast<std::ptrdiff_t>(sample_count_)};
  }
  int threads() const { return threads_; }
  const std::string& graph_hash() const { return graph_hash_; }
  /// What the graph passes, run once for every candidate, made of the graph.
  const std::string& optimized_note() const { return optimized_note_; }
  /// The inputs every candidate is profiled on, one line per batch size:
  /// "batch 8: ids i64[8,128], mask bool[8,128]".
  std::vector<std::string> measured_inputs() const;
  int cache_hits() const { return cache_hits_; }
  int cache_misses() const { return cache_misses_; }
  bool cache_used() const { return cache_.has_value(); }

  static constexpr const char* kReference = kReferenceBackend;

 private:
  Session(const Graph& graph, const GraphSpec& spec, const TuneOptions& options)
      : graph_(graph), spec_(spec), options_(options) {}
  /// The backend of candidate `name` (BACKEND or BACKEND@PRECISION),
  /// configured, with `fp32_nodes` kept in fp32.
  Result<std::unique_ptr<Backend>> create_backend(
      const std::string& name, const std::vector<std::string>& fp32_nodes = {}) const;
  /// Runs the reference (f32, timed, and f64) on every check input and fills
  /// the baseline's one-shot figures.
  Result<void> run_reference(const Backend& ref);
  /// The gate's tolerance for a built candidate.
  GateTolerance tolerance_for(const Backend& be) const;
  /// The best p50 so far at `batch` among usable candidates and the baseline (0: none).
  double best_p50(int64_t batch) const;
  double elapsed_s() const;
  /// Seconds the tune has left by the average candidate so far (and the budget); < 0 unknown.
  double eta_s(int index, double fraction) const;
  /// Builds and checks; fills `r`. Returns the built backend on success.
  std::unique_ptr<Backend> build_and_check(const std::string& name, CandidateResult& r, int index,
                                           const std::vector<std::string>& fp32_nodes = {});
  /// `r` failed the gate at a reduced precision: searches the nodes to keep
  /// in fp32 (session_mixed.cpp). On success `r` becomes the mixed plan's
  /// result (its fp32_nodes named) and its backend is returned; the pure
  /// plan's failure stays in the report as its own row.
  std::unique_ptr<Backend> search_fp32_nodes(const std::string& name, CandidateResult& r,
                                             int index);
  void measure(const Backend& be, CandidateResult& r, int index);
  /// evaluate() on this rank alone, without agreeing with the group.
  CandidateResult& evaluate_here(const std::string& name);
  /// Fills `r` from the cache when it holds this candidate; counts hits and misses.
  bool lookup_cache(CandidateResult& r);
  void store_cache(const CandidateResult& r);
  std::optional<CacheKey> cache_key(const std::string& name, const std::string& config_key) const;
  void emit(const std::string& name, const std::string& step, int index, double fraction) const;

  const Graph& graph_;
  const GraphSpec& spec_;
  const TuneOptions& options_;
  const BackendRegistry* registry_ = nullptr;
  std::vector<std::string> candidates_;
  std::vector<int64_t> batch_sizes_;
  int threads_ = 1;
  Sample base_sample_;
  std::map<int64_t, std::vector<Tensor>> profile_inputs_;
  std::vector<std::vector<Tensor>> check_inputs_;
  std::vector<std::vector<Tensor>> check_expected_;  // the f32 reference's outputs
  std::vector<std::vector<Tensor>> check_truth_;     // the f64 reference's (or the f32's)
  /// Per check input, the f64 values its index outputs were chosen from.
  std::vector<std::vector<TieWitness>> check_ties_;
  std::string truth_;  // what check_truth_ is
  std::chrono::steady_clock::time_point start_;
  double reference_s_ = 0;                 // the reference's share of the time
  std::vector<double> candidate_seconds_;  // each evaluated (not cached) candidate's time
  std::vector<std::string> output_names_;
  size_t sample_count_ = 0;
  std::string graph_hash_;
  std::string fingerprint_key_;
  /// The graph passes' result, made once and shared with every candidate.
  std::shared_ptr<const OptimizedGraph> optimized_;
  std::string optimized_note_;
  std::optional<TuningCache> cache_;
  std::map<std::string, CandidateResult> results_;
  std::map<std::string, std::unique_ptr<Backend>> built_;
  std::vector<std::string> order_;
  std::vector<BatchSearchResult> searches_;
  int cache_hits_ = 0, cache_misses_ = 0;
  std::optional<Error> group_error_;
};

/// `lines` with repeats merged ("conv+eltwise (x3 shape plans)"), first-seen order.
std::vector<std::string> distinct_plan(const std::vector<std::string>& lines);

/// CandidateResult <-> JSON text (the cache's value; report.cpp has the writer).
std::string candidate_to_json(const CandidateResult& c);
Result<CandidateResult> candidate_from_json(std::string_view text);

}  // namespace hone::tune_internal
