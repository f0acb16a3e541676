// hone::InspectionNode: what a just-in-time model or a pipeline saw while it
// ran (calls, times, the inputs and outputs it really received, the state of
// its tuning), as a tree, and the self-contained page that shows it.
//
//   InspectionNode root = pipeline.inspect();           // or jit.inspect("model")
//   HONE_CHECK_OK(save_inspection_report(root, "run.html"));  // also writes run.json
//   std::string json = inspection_json(root);
//
// Times are wall-clock milliseconds summed over calls; `self_ms` is the part
// of `total_ms` no child accounts for; `share` is `total_ms` over the root's.
// The page holds its data (the same JSON) and its script and style inline: it
// fetches nothing. A filter box hides rows whose name, state, backend or specs
// do not contain the text (a matching row keeps its ancestors shown).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hone/error.h"

namespace hone {

/// One tensor or scalar leaf of the inputs or outputs, over every recorded call.
struct LeafSeen {
  std::string path;   // "x", "meta.masks[1]"; a bare tensor root is ""
  std::string dtype;  // "f32", ...; "scalar" for plain numbers
  /// Distinct shapes in first-seen order, at most kMaxShapes of them.
  std::vector<std::vector<int64_t>> shapes;
  uint64_t more_shapes = 0;      // calls whose shape was none of the kept ones (past kMaxShapes)
  std::vector<int> varied_axes;  // axes whose size differed between calls
  bool rank_varied = false;      // calls disagreed on the rank
  static constexpr size_t kMaxShapes = 16;
};

struct InspectionNode {
  std::string name;
  std::string kind;  // "pipeline", "stage", "model"
  std::string mode;  // "eager", "deferred", "inspect", "" for plain stages and pipelines
  /// "recording", "tuning", "tuned", "failed", "skipped", "inspecting",
  /// "reference" (a plain stage), "" for a pipeline.
  std::string state;
  std::string backend;  // the backend running it now
  std::string reason;   // why it failed or was skipped
  uint64_t calls = 0;
  uint64_t out_of_bounds_calls = 0;  // tuned, but a call fell outside the tuned bounds
  uint64_t samples_recorded = 0;
  double total_ms = 0, self_ms = 0, avg_ms = 0, share = 0;
  std::vector<LeafSeen> inputs, outputs;
  std::vector<InspectionNode> children;
};

/// Fills self_ms, avg_ms and share over the whole tree (share relative to `root`).
void finish_inspection(InspectionNode& root);

/// The tree as JSON text: {"format": "hone-inspection", "version": 1, "root": {...}}.
std::string inspection_json(const InspectionNode& root);

/// The self-contained HTML page of the tree (its JSON embedded).
std::string inspection_html(const InspectionNode& root);

/// Writes the page to `html` and the JSON beside it (same name, ".json"),
/// each atomically. kInvalidArgument when `html` ends in ".json"; kIo naming
/// the file otherwise.
[[nodiscard]] Result<void> save_inspection_report(const InspectionNode& root,
                                                  const std::filesystem::path& html);

}  // namespace hone
