// Pipeline's stage and timing records, shared by pipeline.cpp and
// pipeline_io.cpp. Internal to src/pipeline.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hone/pipeline.h"
#include "hone/registry.h"
#include "jit/call_stats.h"

namespace hone {

struct Pipeline::Stage {
  std::string name;
  Graph graph;
  std::unique_ptr<Backend> reference;              // plain stages
  std::unique_ptr<TunedModel> tuned;               // plain stages, once tuned
  std::unique_ptr<JitModel> jit;                   // JIT stages
  std::shared_ptr<jit_internal::CallStats> stats;  // as the pipeline timed it
  const Backend* runner() const {
    if (jit) return jit->tuned() ? &jit->tuned()->backend() : nullptr;
    return tuned ? &tuned->backend() : reference.get();
  }
  std::string runner_name() const {
    if (jit)
      return jit->tuned() ? std::string(jit->tuned()->backend().name())
                          : std::string(kReferenceBackend);
    return std::string(runner()->name());
  }
};

// Shared with the JIT stages' before_tune hooks, which outlive moves of the Pipeline.
struct Pipeline::Timing {
  jit_internal::CallStats pipeline;
  mutable std::mutex mu;                                               // guards `stages`
  std::vector<std::shared_ptr<const jit_internal::CallStats>> stages;  // set while adding stages
};

}  // namespace hone
