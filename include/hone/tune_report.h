// What tuning found: one CandidateResult per backend tried, the Decision,
// and the TuneReport that holds them, as data and as JSON, a terminal table
// and a self-contained HTML page with plots.
//
//   const TuneReport& r = tuned.report();
//   std::puts(r.table().c_str());                      // one row per candidate and batch size
//   HONE_CHECK_OK(write_file_atomic("r.html", r.html()));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hone/correctness.h"
#include "hone/error.h"
#include "hone/profile.h"

namespace hone {

/// One candidate: a backend at one precision ("onednn", or "onednn@bf16"
/// under --precision auto), how its build, check and measurements went.
struct CandidateResult {
  std::string backend;    // the candidate's name: BACKEND or BACKEND@PRECISION
  std::string precision;  // the precision it was built at ("fp32", "bf16", ...)
  /// A mixed plan: the nodes kept in fp32 under a reduced precision that
  /// failed the gate without them (found by bisection); empty otherwise.
  std::vector<std::string> fp32_nodes;
  std::string config_key;
  std::string config;  // BackendConfig::describe(): the fields changed from defaults
  bool built = false;
  double build_ms = 0;
  std::string partition;  // Partition::describe(), or "whole graph"
  std::vector<std::string> kernel_plan;
  std::optional<Error> error;  // build or infer failure
  bool checked = false;        // the correctness check ran
  CorrectnessResult correctness;
  std::vector<LatencyFigures> figures;  // one per batch size measured, ascending
  bool from_cache = false;              // figures came from the tuning cache
  std::string skipped;                  // why it was not tried ("time budget ... spent")
  std::string lost_because;             // filled in for every candidate that was not chosen

  /// Built, checked, correct and measured.
  bool usable() const {
    return skipped.empty() && built && !error && checked && correctness.passed && !figures.empty();
  }
  /// Figures at `batch`, or nullptr.
  const LatencyFigures* at_batch(int64_t batch) const;
  /// The highest throughput over the measured batch sizes (0 when none).
  double best_throughput() const;
  /// p50 at the smallest batch measured (+inf when none).
  double min_batch_p50_ms() const;
  /// Deterministic JSON, as in the report's "candidates" (sent between ranks).
  std::string json() const;
  static Result<CandidateResult> from_json(std::string_view text);
};

/// The outcome of a batch-size search on one backend.
struct BatchSearchResult {
  std::string backend;
  std::vector<LatencyFigures> points;  // in the order measured (doubling)
  int64_t best_batch = 0;              // highest throughput seen
  std::string stopped_because;  // "throughput grew < 5% twice", "latency budget", "out of memory",
                                // "max batch"
};

struct Decision {
  std::string backend;    // the registry name the package creates
  std::string candidate;  // the winning candidate's name ("onednn@bf16"); empty: `backend`
  std::string config_key;
  std::vector<std::pair<std::string, std::string>> config_fields;  // every field, name -> value
  std::string config;                                              // fields changed from defaults
  std::vector<std::string> kernel_plan;
  std::vector<LatencyFigures> figures;
  std::string reason;                         // why it won
  std::map<std::string, std::string> losers;  // backend -> why it lost
  bool baseline_kept = false;                 // the reference was kept by the baseline gate
  /// The name the winner has among the candidates.
  const std::string& chosen() const { return candidate.empty() ? backend : candidate; }
};

struct TuneReport {
  std::string model;       // graph name
  std::string graph_hash;  // hex
  std::string strategy;    // Strategy::describe()
  std::string spec;        // GraphSpec::describe()
  /// The inputs every candidate was measured at, one line per batch size
  /// ("batch 8: ids i64[8,128]"): the dims the figures belong to.
  std::vector<std::string> measured_inputs;
  int threads = 0;
  std::vector<int64_t> batch_sizes;
  double baseline_gate_percent = 1.0;
  double time_budget_s = 0;  // 0: none
  /// What the graph passes, run once and shared by every candidate that
  /// optimizes, made of the graph ("64 -> 31 nodes in 3 rounds: ...").
  std::string optimized;
  /// The reference: built, run once per check input (its figures are those
  /// one-shot runs, runs == 1), never profiled.
  CandidateResult baseline;
  std::vector<CandidateResult>
      candidates;  // in the order tried (the reference too, if it was a candidate)
  std::vector<BatchSearchResult> batch_searches;
  Decision decision;
  double total_ms = 0;
  int cache_hits = 0, cache_misses = 0;
  bool cache_used = false;

  /// Deterministic JSON (sorted keys).
  std::string json() const;
  static Result<TuneReport> from_json(std::string_view text);
  /// Fixed-width table for a terminal: candidate, status, build ms, per-batch p50 and throughput,
  /// verdict.
  std::string table() const;
  /// A self-contained page (inline CSS and SVG, no scripts from elsewhere):
  /// decision, candidates, latency and throughput against batch size per backend.
  std::string html() const;
};

}  // namespace hone
