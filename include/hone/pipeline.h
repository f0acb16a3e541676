// hone::Pipeline: several models run one after another, each stage on the
// reference or on a tuned model. Tuning one stage first runs the pipeline
// on the samples and records the inputs that stage really sees, then tunes
// it on those, so a later model is tuned on its true input distribution.
//
//   Pipeline p;
//   HONE_CHECK_OK(p.add_stage("encoder", encoder));  HONE_CHECK_OK(p.add_stage("head", head));
//   HONE_CHECK_OK(p.tune_stage("head", samples, MaxThroughput(), options));  // encoder stays put
//   HONE_TRY(auto outs, p.run({{"x", x}}));          // every stage's outputs, by name
//
// A stage's inputs are looked up by name among the pipeline's inputs and the
// outputs of earlier stages; a missing name is an error naming the stage.
// Thread-safety: run() is const and may be called from several threads once
// the pipeline is set up; add_stage and tune_stage are not.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hone/backend.h"
#include "hone/graph.h"
#include "hone/tune.h"

namespace hone {

using TensorMap = std::map<std::string, Tensor>;

class Pipeline {
 public:
  Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  /// Appends a stage that runs on the reference until tuned. Errors: a
  /// duplicate stage name, a graph that does not validate or that the
  /// reference cannot run.
  [[nodiscard]] Result<void> add_stage(std::string name, Graph graph);
  /// Runs the stages in order. Returns every stage output by name.
  [[nodiscard]] Result<TensorMap> run(const TensorMap& inputs) const;
  /// Runs `samples` through the pipeline, records what `stage` receives, and
  /// tunes that stage on the recorded inputs. Other stages are untouched.
  [[nodiscard]] Result<void> tune_stage(const std::string& stage,
                                        const std::vector<TensorMap>& samples,
                                        const Strategy& strategy, const TuneOptions& options);
  /// (stage, backend that runs it) in order.
  std::vector<std::pair<std::string, std::string>> placement() const;
  /// The stage's tuned model, or nullptr while it runs on the reference.
  const TunedModel* tuned(const std::string& stage) const;
  /// The backend running `stage` now (the reference or the tuned choice), or nullptr.
  const Backend* backend(const std::string& stage) const;

 private:
  struct Stage;
  Result<std::vector<Tensor>> stage_inputs(const Stage& s, const TensorMap& env) const;
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace hone
