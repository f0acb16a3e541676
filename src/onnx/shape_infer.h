// Internal to src/onnx: ONNX shape inference, guarded so hostile models
// cannot crash it.
#pragma once

#include <onnx/onnx_pb.h>

namespace hone::onnx::detail {

/// Checks every node (subgraphs included) against its operator schema, then
/// runs onnx::shape_inference::InferShapes on `model` in a forked child
/// process and copies the types it inferred (value_info, typed graph inputs
/// and outputs, subgraphs included) back into `model`. libonnx 1.12's
/// inference functions trust their input (a Scan without num_scan_inputs or a
/// ConvTranspose with an unknown weight dim reads through bad pointers), so a
/// crash, hang (120 s) or error there must cost only the extra types, never
/// the process. Returns false when nothing was inferred; when inference throws
/// part way, what it found before stays and true is returned. Reasons are
/// logged at debug level under `who`.
bool infer_shapes_guarded(::onnx::ModelProto& model, const char* who);

}  // namespace hone::onnx::detail
