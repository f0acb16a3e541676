// Internal to src/onnx: ONNX shape inference, guarded so hostile models
// cannot crash it.
#pragma once

#include <onnx/onnx_pb.h>

namespace hone::onnx::detail {

/// Checks every node (subgraphs included) against its operator schema, then
/// runs onnx::shape_inference::InferShapes on `model`, catching everything it
/// throws. ONNX's inference functions assume schema-valid nodes (a Scan
/// without num_scan_inputs makes them read through a null pointer), so
/// inference is skipped when a node fails verification. Returns false when
/// inference was skipped; when it throws part way, what it added to `model`
/// stays and true is returned. Reasons are logged at debug level under `who`.
bool infer_shapes_guarded(::onnx::ModelProto& model, const char* who);

}  // namespace hone::onnx::detail
