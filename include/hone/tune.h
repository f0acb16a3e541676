// hone::tune: hone's main job. Try the backends a strategy offers, check
// each against the reference, measure it, choose, and hand back a
// TunedModel that runs the choice (and saves as a .hone package).
//
//   std::vector<Sample> samples = {...};              // one call's inputs each, >= 2 batch sizes
//   HONE_TRY(TunedModel m, hone::tune(graph, samples, MaxThroughput(), TuneOptions{}));
//   HONE_TRY(Sample out, m.infer(samples[0]));
//
// First the reference runs once per check input (the samples, and random
// inputs with every dynamic dim at its smallest and at its largest bound),
// in f32 and in f64: the f64 outputs are the ground truth, the f32 ones
// calibrate the gate (hone/correctness.h), and the f32 run's latency is the
// baseline the strategies compare against; the reference is never profiled.
// Per candidate: create from the registry, apply its config, build (errors
// become a failed candidate, never a crash), check on the check inputs,
// profile at each batch size within `candidate_budget_s`, stopping a batch
// early once the candidate is surely slower than the best so far there.
// `time_budget_s` bounds the whole tune: candidates not reached are skipped,
// and the report says so. Measured figures are kept in the tuning cache
// (SQLite), keyed by graph hash, config key, shapes and machine fingerprint,
// so tuning the same model again skips measuring.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hone/backend.h"
#include "hone/correctness.h"
#include "hone/graph.h"
#include "hone/graph_spec.h"
#include "hone/profile.h"
#include "hone/registry.h"
#include "hone/sample.h"
#include "hone/strategy.h"
#include "hone/tune_group.h"
#include "hone/tune_report.h"

namespace hone {

struct BatchSearchOptions {
  int64_t start = 1;
  int64_t max_batch = 1024;
  double min_gain = 0.05;  // a doubling that gains less counts as a stall
  int stalls_to_stop = 2;
  double latency_budget_ms = 0;  // 0: none
};

/// One step of tuning, for progress displays.
struct TuneEvent {
  std::string candidate;  // backend name (BACKEND@PRECISION under precision_auto)
  std::string step;       // "build", "check", "profile batch 8", "cached", "done", "failed"
  int candidate_index = 0;
  int candidate_count = 0;
  double fraction = 0;  // of this candidate's steps
  double eta_s = -1;    // estimate of the seconds the whole tune has left; < 0: unknown
};

struct TuneOptions {
  /// Batch sizes to measure; empty: the batch dim's min and max bounds ({1} without one).
  std::vector<int64_t> batch_sizes;
  /// Dim declarations (--dim NAME=MIN:OPT:MAX), checked against the samples.
  std::vector<DimDeclaration> dims;
  /// Intra-op threads for every candidate (0: all cores).
  int threads = 0;
  /// A choice must beat the reference by this much on the strategy's metric.
  double baseline_gate_percent = 1.0;
  /// The calibrated gate's tolerance for every candidate (--tolerance); unset:
  /// GateTolerance::for_precision of the precision the candidate computes in.
  std::optional<GateTolerance> tolerance;
  /// Which precisions each candidate backend is tried at. false (the default):
  /// strict fp32 only (or what --config BACKEND.precision names). true
  /// (--precision auto): every precision it declares (caps().precisions but
  /// fp64, and fp8 unless precision_fp8), each as its own candidate "BACKEND@PRECISION" judged by
  /// that precision's bound; the strategy picks among all that pass.
  bool precision_auto = false;
  /// With precision_auto: also fp8 where a backend declares it (`--precision
  /// auto,fp8`). Its bound is an order of magnitude looser than bf16's
  /// (GateTolerance::for_precision), so precision_auto alone leaves it out.
  bool precision_fp8 = false;
  /// A reduced-precision candidate that fails the gate on a backend with
  /// mixed precision gets a search for the nodes to keep in fp32 (bisection
  /// over the topological order, then pruning of that window); the mixed
  /// plan that passes takes its place, naming those nodes.
  bool mixed_precision = true;
  ProfileOptions profile;
  /// Seconds of profiling per candidate, shared by its batch sizes (each also
  /// bounded by profile.max_seconds).
  double candidate_budget_s = 3.0;
  /// Seconds for the whole tune (--time-budget); 0: no limit. Candidates not
  /// started when it is spent are skipped; the reference always runs.
  double time_budget_s = 0;
  BatchSearchOptions batch_search;
  bool use_cache = true;
  std::filesystem::path cache_path;  // empty: TuningCache::default_path()
  /// Per-backend config fields ("onednn" -> {"min_block_size": "3"}).
  std::map<std::string, std::map<std::string, std::string>> configs;
  /// Where backends come from; null: default_registry().
  const BackendRegistry* registry = nullptr;
  /// Seed of the random inputs used for the check at the bounds.
  uint64_t seed = 1;
  std::function<void(const TuneEvent&)> progress;
  /// Asked before each candidate is built, before its check and before each
  /// batch size it profiles; once it returns true the rest is skipped and
  /// tune() fails with kFailedPrecondition ("tuning was cancelled"). Lets a
  /// just-in-time tune stop when its owner is destroyed, and Ctrl-C in Python
  /// stop a tune within a step.
  std::function<bool()> cancelled;
  /// Processes tuning this model together (hone/tune_group.h; not owned);
  /// null: this process alone.
  TuneGroup* group = nullptr;
};

/// A tuned model: the chosen backend, built, with the spec to flatten sample
/// trees and rebuild output trees. infer() is thread-safe.
class TunedModel {
 public:
  TunedModel(Graph graph, GraphSpec spec, std::unique_ptr<Backend> backend, TuneReport report);
  TunedModel(TunedModel&&) noexcept;
  TunedModel& operator=(TunedModel&&) noexcept;
  ~TunedModel();

  /// One call: the input tree (checked against the spec: structure, dtypes,
  /// bounds) to the output tree.
  [[nodiscard]] Result<SampleValue> infer(const Sample& inputs) const;
  /// Graph inputs in graph order to graph outputs; dims outside the spec's
  /// bounds are an error naming the dim.
  [[nodiscard]] Result<std::vector<Tensor>> infer_flat(const std::vector<Tensor>& inputs) const;
  /// Device-resident inference (Backend::infer_on_device): graph inputs in
  /// graph order, in device memory, to outputs left there; dims outside the
  /// spec's bounds are an error naming the dim, as for infer_flat().
  [[nodiscard]] Result<std::vector<DeviceTensor>> infer_on_device(
      const std::vector<DeviceTensor>& inputs, const DeviceCall& call = {}) const;

  const Graph& graph() const { return *graph_; }
  const GraphSpec& spec() const { return spec_; }
  const Backend& backend() const { return *backend_; }
  const Decision& decision() const { return report_.decision; }
  const TuneReport& report() const { return report_; }

 private:
  std::unique_ptr<Graph> graph_;
  GraphSpec spec_;
  std::unique_ptr<Backend> backend_;
  TuneReport report_;
};

[[nodiscard]] Result<TunedModel> tune(const Graph& graph, const std::vector<Sample>& samples,
                                      const Strategy& strategy, const TuneOptions& options);

/// What tune() would do with these arguments, building and measuring nothing:
/// the spec it learned, the candidates and steps, one line each.
[[nodiscard]] Result<std::vector<std::string>> dry_run(const Graph& graph,
                                                       const std::vector<Sample>& samples,
                                                       const Strategy& strategy,
                                                       const TuneOptions& options);

/// Hex SHA-256 of the graph's ONNX serialization: the model hash of caches and packages.
[[nodiscard]] Result<std::string> graph_hash(const Graph& graph);

}  // namespace hone
