// Exporting a tuned model as a deployable artifact that runs without hone.
//
//   HONE_TRY(ExportRecord r, hone::export_artifact(tuned, "deploy/", {.format = "onnx"}));
//   // deploy/model.onnx (+ model.weights), deploy/deploy.json
//   HONE_TRY(auto r2, hone::export_artifact(tuned, "native/", {.format = "native-so", .backend =
//   "aot"}));
//
// Formats: "onnx" (the tuned graph, plain ONNX, weights inline or in one
// external file above a size threshold; ONNX Runtime runs it) and each
// backend's native format ("native-so": a shared library with a C ABI, see
// the aot backend). Every export writes deploy.json: the format, every file
// with its SHA-256, the runtime configuration, the input and output specs
// with their bounds, and the largest batch size measured while tuning.
// Export is atomic: it writes a temporary sibling folder and renames it into
// place, so a failure leaves no partial folder, and it never overwrites a
// folder that has files in it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "hone/error.h"
#include "hone/registry.h"
#include "hone/tune.h"

namespace hone {

struct ExportOptions {
  /// "onnx", "native-so", ...; empty: the chosen backend's artifact format,
  /// else "onnx".
  std::string format;
  /// Build this backend for the artifact instead of the chosen one (for a
  /// native format the chosen backend lacks); empty: the chosen backend.
  std::string backend;
  /// ONNX initializers at least this big go to the external weights file.
  size_t external_threshold_bytes = size_t{1} << 20;
  /// Where `backend` comes from; null: default_registry().
  const BackendRegistry* registry = nullptr;
};

struct ExportRecord {
  std::string format;
  std::string backend;                                     // what produced it
  std::vector<std::pair<std::string, std::string>> files;  // relative path, SHA-256 hex
  int64_t max_batch_measured = 0;
  std::string json;  // deploy.json as written
};

[[nodiscard]] Result<ExportRecord> export_artifact(const TunedModel& model,
                                                   const std::filesystem::path& dir,
                                                   const ExportOptions& options = {});

}  // namespace hone
