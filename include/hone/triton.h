// Exporting a tuned model as a Triton Inference Server model repository
// entry, so it serves where inference is served.
//
//   HONE_TRY(TritonRecord r, hone::export_triton(tuned, "models/", {.name = "mlp"}));
//   // models/mlp/config.pbtxt, models/mlp/1/model.onnx (+ model.weights)
//
// The artifact is the tuned graph as ONNX (the same file `--format onnx`
// writes), run by Triton's ONNX Runtime backend. config.pbtxt names every
// input and output with its Triton data type and dims (-1 for a dynamic
// axis). When every input and output has the batch axis first, Triton
// batches: `max_batch_size` is the batch dim's tuned max bound, dims leave
// the batch axis out and `dynamic_batching` is on; otherwise
// `max_batch_size: 0` and the dims are whole. The repository folder may
// hold other models; the model's own folder must not exist (nothing is
// overwritten). Written into a temporary sibling and renamed into place, so a
// failure leaves nothing behind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "hone/error.h"
#include "hone/tune.h"

namespace hone {

struct TritonOptions {
  /// The model's name in the repository (its folder name); empty: the
  /// graph's name made safe for a folder, else "model".
  std::string name;
  /// Instances Triton runs of the model (instance_group count).
  int instance_count = 1;
};

struct TritonRecord {
  std::string name;                 // the model's name in the repository
  std::filesystem::path model_dir;  // REPO/NAME
  int64_t max_batch_size = 0;       // 0: Triton does not batch this model
  std::string config;               // config.pbtxt as written
};

/// Writes REPO/NAME/config.pbtxt and REPO/NAME/1/model.onnx (with
/// model.weights when the weights are external). Errors: kFailedPrecondition
/// when REPO/NAME exists, kInvalidArgument for a name that is not a plain
/// folder name, kUnsupported for an output of unknown rank or a dtype Triton
/// lacks, kNotFound when REPO's parent folder does not exist.
[[nodiscard]] Result<TritonRecord> export_triton(const TunedModel& model,
                                                 const std::filesystem::path& repo,
                                                 const TritonOptions& options = {});

}  // namespace hone
