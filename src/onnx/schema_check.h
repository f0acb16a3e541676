// Internal to src/onnx: a model checked against ONNX's own operator schemas
// (libonnx's OpSchemaRegistry) before import, at least as strictly as ONNX
// Runtime checks a model it loads.
//
//   HONE_CHECK_OK(detail::check_model_schemas(model));   // before convert_model
//
// Checked: the IR version is one hone reads; the model imports at least one
// opset, each domain once, each in the range libonnx knows for its domain
// (ai.onnx: up to ops::kNewestOnnxOpset; no opset 0, no opset 999); every node of every
// (sub)graph in a domain libonnx knows names an operator that exists at the imported opset and is
// not deprecated there; its attributes are ones the schema declares, of the declared type, with
// every required one present; its input and output counts fit the schema. For ai.onnx opsets newer
// than libonnx's (1.12: 17), the schema of an op version after 17 is hone's own row
// (src/ops/signature.h), and an op unchanged since is checked against its version at 17. Each error
// names the node and the graph. As in ONNX's own checker, nodes of other (custom) domains are left
// to the backends, which refuse what they cannot run.
#pragma once

#include <onnx/onnx_pb.h>

#include "hone/error.h"

namespace hone::onnx::detail {

/// Oldest and newest IR version accepted (ONNX Runtime 1.30 reads up to 13;
/// IR 9 to 13 add element types (float8, int4, float4, e8m0, int2), which the
/// importer refuses by name where a tensor uses one, and fields older readers
/// may ignore).
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 13;

[[nodiscard]] Result<void> check_model_schemas(const ::onnx::ModelProto& model);

}  // namespace hone::onnx::detail
