// hone::JitModel: tuning just in time, from the calls a program really makes.
//
//   JitModel m(graph, std::make_shared<MaxThroughput>(), {.min_samples = 16});
//   for (auto& request : requests) HONE_TRY(auto out, m.infer(request));  // tunes in the
//   background m.wait();  m.tuned();                          // the TunedModel once tuning ran
//
// Modes (JitOptions::mode):
// - kTuneEager: calls run on the reference and are recorded; once
//   `min_samples` calls (and, with `batch_axis_required`, two batch sizes)
//   have been seen, the model tunes on the recorded calls.
// - kTuneDeferred: calls are recorded until tune_deferred(); the next call
//   starts the tune, or the caller runs it on a thread of its own with tune_now().
// - kInspect: never tunes and keeps no samples; only the inspection data.
//
// Tuning runs on a background thread (`background`, the default) while calls
// keep running on the current backend. The tuned model replaces it with one
// atomic swap between calls: each call holds its own reference to the runner
// it started on, so no call ever switches midway. A failed tune keeps the
// current backend and records why (tuning_error()). A later call outside the
// tuned bounds runs on the reference (counted), so a JIT-tuned program never
// fails where the untuned one ran. The destructor asks a running tune to stop
// between candidates and waits for it.
//
// Recorded samples are bounded: at most `max_samples_stored` stay in memory.
// Past that, with `spill_dir` set, they are written there (each file
// atomically) and read back for the tune; without it, a call of a shape not
// yet stored replaces one of a shape stored twice, so the recorded bounds
// keep every shape seen. Spilled files are removed on destruction unless
// `keep_spilled`.
//
// Thread-safety: infer(), tune_deferred(), tune_now(), wait() and the getters
// may be called from any number of threads at once.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hone/backend.h"
#include "hone/graph.h"
#include "hone/inspection.h"
#include "hone/sample.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone {

enum class JitMode { kTuneEager, kTuneDeferred, kInspect };
enum class JitState { kRecording, kTuning, kTuned, kFailed, kSkipped, kInspecting };

std::string_view to_string(JitMode mode);    // "eager", "deferred", "inspect"
std::string_view to_string(JitState state);  // "recording", "tuning", ...
/// "eager", "deferred" or "inspect"; kInvalidArgument listing them otherwise.
[[nodiscard]] Result<JitMode> parse_jit_mode(std::string_view text);

struct JitOptions {
  JitMode mode = JitMode::kTuneEager;
  /// Calls seen before an eager tune (at least 1).
  size_t min_samples = 8;
  /// An eager tune also waits until two batch sizes have been seen (the size
  /// of the axis the graph names batch/N/batch_size, else axis 0 of the first input).
  bool batch_axis_required = false;
  /// Tune on a background thread; false: inside the call that starts it.
  bool background = true;
  /// Samples kept in memory (at least 1).
  size_t max_samples_stored = 64;
  /// Where samples past `max_samples_stored` go; empty: not spilled.
  std::filesystem::path spill_dir;
  bool keep_spilled = false;
  /// Asked just before a tune starts: a non-empty answer leaves the model on
  /// its current backend for good (state kSkipped, the answer as the reason).
  std::function<std::string()> before_tune;
  TuneOptions tune;
};

/// What one call ran on (for callers that watch the switch).
struct JitCall {
  /// 0 before the tuned model was swapped in, 1 after (and for calls that
  /// fell outside its bounds, which still run on the reference).
  int generation = 0;
  std::string backend;  // name of the backend that ran the call
};

class JitModel {
 public:
  /// Errors from the reference (a graph it cannot run) surface at the first infer().
  JitModel(Graph graph, std::shared_ptr<const Strategy> strategy, JitOptions options);
  ~JitModel();
  JitModel(const JitModel&) = delete;
  JitModel& operator=(const JitModel&) = delete;

  /// One call: an input tree to the output tree.
  [[nodiscard]] Result<SampleValue> infer(const Sample& inputs, JitCall* call = nullptr);
  /// Graph inputs in graph order to graph outputs in graph order.
  [[nodiscard]] Result<std::vector<Tensor>> infer_flat(const std::vector<Tensor>& inputs,
                                                       JitCall* call = nullptr);

  /// kTuneDeferred: the next call starts the tune. kFailedPrecondition in
  /// other modes or once a tune started.
  [[nodiscard]] Result<void> tune_deferred();
  /// Tunes now on the calling thread (the tune of a deferred or eager model
  /// that has recorded samples) and swaps the result in. kFailedPrecondition
  /// in inspect mode, without samples or once a tune started; the tune's own
  /// error when it fails (also kept in tuning_error()).
  [[nodiscard]] Result<void> tune_now();
  /// Blocks until a tune running on the background thread has finished.
  void wait();

  JitMode mode() const { return options_.mode; }
  JitState state() const;
  /// The tuned model once tuning succeeded, else nullptr; valid as long as this object.
  const TunedModel* tuned() const;
  /// Calls recorded so far (stops growing once a tune starts).
  size_t recorded() const;
  /// Recorded samples held in memory / written to spill_dir.
  size_t samples_in_memory() const;
  size_t samples_spilled() const;
  /// Calls that ran on the reference after tuning because they were outside the tuned bounds.
  size_t out_of_bounds_calls() const;
  /// Tunes started (0 or 1).
  size_t tunes_started() const;
  /// Why tuning failed or was skipped, if it was.
  std::optional<Error> tuning_error() const;

  /// Installs an already tuned model (e.g. loaded from a package) as if a tune
  /// had produced it. kInvalidArgument when its graph differs from this one's;
  /// kFailedPrecondition in inspect mode or while a tune runs.
  [[nodiscard]] Result<void> adopt(TunedModel tuned);

  /// The inspection data of this model, as one node named `name`.
  InspectionNode inspect(const std::string& name = "model") const;
  /// save_inspection_report(inspect(graph name), path): the page and its JSON.
  [[nodiscard]] Result<void> save_report(const std::filesystem::path& path) const;

 private:
  struct Impl;
  JitOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hone
