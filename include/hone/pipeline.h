// hone::Pipeline: several models run one after another, each stage on the
// reference, on a tuned model, or just in time (a JitModel of its own).
//
//   Pipeline p({.min_time_share = 0.05});
//   HONE_CHECK_OK(p.add_stage("encoder", encoder));                // tuned explicitly, or never
//   HONE_CHECK_OK(p.add_jit_stage("head", head, strategy, {.min_samples = 8}));  // tunes itself
//   HONE_TRY(auto outs, p.run({{"x", x}}));          // every stage's outputs, by name
//
// A stage's inputs are looked up by name among the pipeline's inputs and the
// outputs of earlier stages; a missing name is an error naming the stage.
// tune_stage() runs samples through the pipeline, records what one stage
// receives and tunes it on those, so a later model is tuned on its true
// input distribution. A JIT stage records what it really receives in run()
// and tunes alone, in its own mode (see jit.h); when it is ready to tune and
// its share of the time spent in stages so far is below `min_time_share`, it
// is left alone (state "skipped", with the share as the reason).
// save()/load() keep each tuned stage as DIR/<stage>.hone, by stage name.
// Thread-safety: run(), inspect(), save() and the JIT calls may be called
// from several threads once the pipeline is set up; add_stage, add_jit_stage,
// tune_stage and load are not.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hone/backend.h"
#include "hone/graph.h"
#include "hone/inspection.h"
#include "hone/jit.h"
#include "hone/package.h"
#include "hone/tune.h"

namespace hone {

using TensorMap = std::map<std::string, Tensor>;

struct PipelineOptions {
  /// JIT stages below this share (0..1) of the time spent in stages are not tuned.
  double min_time_share = 0;
};

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options = {});
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  /// Appends a stage that runs on the reference until tuned. Errors: a
  /// duplicate stage name, a graph that does not validate or that the
  /// reference cannot run.
  [[nodiscard]] Result<void> add_stage(std::string name, Graph graph);
  /// Appends a stage that tunes itself just in time, in `options.mode`.
  /// Errors as add_stage; `options.before_tune` is the pipeline's (the time share).
  [[nodiscard]] Result<void> add_jit_stage(std::string name, Graph graph,
                                           std::shared_ptr<const Strategy> strategy,
                                           JitOptions options);
  /// Runs the stages in order. Returns every stage output by name. With
  /// `calls`, what each JIT stage ran on, by stage name.
  [[nodiscard]] Result<TensorMap> run(const TensorMap& inputs,
                                      std::map<std::string, JitCall>* calls = nullptr) const;
  /// Runs `samples` through the pipeline, records what `stage` receives, and
  /// tunes that stage on the recorded inputs. Other stages are untouched.
  /// kFailedPrecondition for a JIT stage (it tunes itself).
  [[nodiscard]] Result<void> tune_stage(const std::string& stage,
                                        const std::vector<TensorMap>& samples,
                                        const Strategy& strategy, const TuneOptions& options);
  /// JitModel::tune_deferred() of a JIT stage; kNotFound for an unknown or plain stage.
  [[nodiscard]] Result<void> tune_deferred(const std::string& stage);
  /// Waits for every JIT stage's background tune.
  void wait() const;
  /// The JIT stage's model, or nullptr for a plain or unknown stage.
  const JitModel* jit(const std::string& stage) const;

  /// (stage, backend that runs it) in order.
  std::vector<std::pair<std::string, std::string>> placement() const;
  /// The stage's tuned model, or nullptr while it runs on the reference.
  const TunedModel* tuned(const std::string& stage) const;
  /// The backend running `stage` now (the reference or the tuned choice), or
  /// nullptr (an unknown stage, or a JIT stage still on its own reference).
  const Backend* backend(const std::string& stage) const;

  /// Writes DIR/<stage>.hone for each tuned stage and DIR/pipeline.json
  /// naming them, each atomically. kInvalidArgument for a stage name that
  /// cannot be a file name; the package writer's errors naming the stage.
  [[nodiscard]] Result<void> save(const std::filesystem::path& dir) const;
  /// Installs the stages DIR/pipeline.json names, by stage name. Returns how
  /// many. kNotFound without pipeline.json; kInvalidArgument for a stage this
  /// pipeline lacks or a package of another graph; load()'s own errors.
  [[nodiscard]] Result<size_t> load(const std::filesystem::path& dir,
                                    const LoadOptions& options = {});

  /// The pipeline as an inspection tree: one child per stage.
  InspectionNode inspect(const std::string& name = "pipeline") const;
  /// save_inspection_report(inspect(), path).
  [[nodiscard]] Result<void> save_report(const std::filesystem::path& path) const;

 private:
  struct Stage;
  struct Timing;
  Result<std::vector<Tensor>> stage_inputs(const Stage& s, const TensorMap& env) const;
  Result<void> add(std::string name, Graph graph, std::shared_ptr<const Strategy> strategy,
                   std::optional<JitOptions> jit);
  Stage* find(const std::string& name) const;
  PipelineOptions options_;
  std::vector<std::unique_ptr<Stage>> stages_;
  std::shared_ptr<Timing> timing_;
};

}  // namespace hone
