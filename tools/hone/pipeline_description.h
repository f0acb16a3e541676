// The JSON pipeline description `hone inspect-run --pipeline` reads:
//
//   {"name": "two-stage", "min_time_share": 0.05,
//    "calls": 4, "seed": 1, "dims": {"batch": [1, 4, 2]},
//    "stages": [{"name": "encoder", "model": "encoder.onnx", "mode": "inspect"},
//               {"name": "head", "model": "head.onnx", "mode": "eager",
//                "min_samples": 2, "batch_axis_required": true, "backend": "onednn"}]}
//
// Model paths are relative to the description's folder. A stage's mode is
// eager, deferred, inspect (the default) or plain (a stage that is never
// tuned); "backend" pins the tune to one backend (default: MaxThroughput over
// every backend). "calls" random calls are made, the symbolic dims of call k
// taking dims[name][k % size] (dims not listed are 1), from "seed".
// Unknown keys are errors, so a misspelt key is not silently ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone::cli {

struct StageDescription {
  std::string name;
  std::filesystem::path model;   // resolved against the description's folder
  std::string mode = "inspect";  // eager, deferred, inspect, plain
  std::optional<size_t> min_samples;
  bool batch_axis_required = false;
  std::string backend;  // empty: MaxThroughput
};

struct PipelineDescription {
  std::string name = "pipeline";
  double min_time_share = 0;
  std::optional<size_t> calls;
  std::optional<uint64_t> seed;
  std::map<std::string, std::vector<int64_t>> dims;
  std::vector<StageDescription> stages;
};

/// Reads and checks a description; errors (kInvalidArgument, kNotFound, kCorrupt)
/// name the file and the key.
[[nodiscard]] Result<PipelineDescription> load_pipeline_description(
    const std::filesystem::path& file);

}  // namespace hone::cli
