// What a JIT model or pipeline stage saw: calls, summed time, and the dtype
// and shapes of every input and output leaf. Internal to src/jit and
// src/pipeline; feeds InspectionNode.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hone/inspection.h"
#include "hone/sample.h"
#include "hone/tensor.h"

namespace hone::jit_internal {

/// Thread-safe: record() and the getters take one mutex.
class CallStats {
 public:
  using Leaves = std::vector<std::pair<std::string, const SampleValue*>>;
  using Named = std::vector<std::pair<std::string, const Tensor*>>;

  /// One call: its wall time and the leaves it took and gave.
  void record(double ms, const Leaves& inputs, const Leaves& outputs);
  void record_named(double ms, const Named& inputs, const Named& outputs);
  /// Adds time and a call without specs (a call that failed).
  void record_failure(double ms);

  uint64_t calls() const;
  double total_ms() const;
  /// Copies calls, total_ms, inputs and outputs into `node`.
  void fill(InspectionNode& node) const;

 private:
  struct Leaf {
    LeafSeen seen;
    std::vector<int64_t> first_shape;  // what later calls are compared with
  };
  static void note(std::map<std::string, Leaf>& leaves, std::vector<std::string>& order,
                   const std::string& path, const std::string& dtype,
                   const std::vector<int64_t>& shape);

  mutable std::mutex mu_;
  uint64_t calls_ = 0;
  double total_ms_ = 0;
  std::map<std::string, Leaf> inputs_, outputs_;
  std::vector<std::string> input_order_, output_order_;
};

}  // namespace hone::jit_internal
