// hone::JitModel: tuning just in time, from the calls a program really makes.
//
//   JitModel m(graph, std::make_shared<MaxThroughput>(), {.record_calls = 16});
//   for (auto& request : requests) HONE_TRY(auto out, m.infer(request));  // tunes after 16 calls
//   m.tuned();                                    // the TunedModel once tuning ran
//
// Until `record_calls` calls have been seen, each call runs on the reference
// interpreter and its inputs are recorded. The call that reaches the count
// tunes on the recorded calls (they are the samples: their batch sizes and
// other dims give the bounds), then every later call runs on the tuned
// choice. A later call outside the tuned bounds runs on the reference (and is
// counted), so a JIT-tuned program never fails where the untuned one ran.
// A failed tuning is kept (tuning_error()) and the model stays on the
// reference. Thread-safety: infer() may be called from several threads;
// recording and the switch are under a mutex, and tuning runs once.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "hone/backend.h"
#include "hone/graph.h"
#include "hone/sample.h"
#include "hone/strategy.h"
#include "hone/tune.h"

namespace hone {

struct JitOptions {
  /// Calls recorded before tuning (at least 1).
  size_t record_calls = 8;
  TuneOptions tune;
};

class JitModel {
 public:
  /// Errors from the reference (a graph it cannot run) surface at the first infer().
  JitModel(Graph graph, std::shared_ptr<const Strategy> strategy, JitOptions options);
  ~JitModel();

  [[nodiscard]] Result<SampleValue> infer(const Sample& inputs);

  /// The tuned model once tuning succeeded, else nullptr.
  const TunedModel* tuned() const;
  /// Calls recorded so far (stops growing once tuning ran).
  size_t recorded() const;
  /// Calls that ran on the reference after tuning because they were outside the tuned bounds.
  size_t out_of_bounds_calls() const;
  /// Why tuning failed, if it did.
  std::optional<Error> tuning_error() const;

 private:
  Result<SampleValue> run_reference(const Sample& inputs);

  Graph graph_;
  std::shared_ptr<const Strategy> strategy_;
  JitOptions options_;
  mutable std::mutex mu_;
  std::unique_ptr<Backend> reference_;
  std::vector<Sample> recorded_;
  std::unique_ptr<TunedModel> tuned_;
  std::optional<Error> tuning_error_;
  bool tuning_done_ = false;
  size_t out_of_bounds_ = 0;
};

}  // namespace hone
