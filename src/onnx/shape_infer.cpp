#include "onnx/shape_infer.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <string>
#include <unordered_map>

#include "core/log.h"

namespace hone::onnx::detail {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;

/// Why a node fails its schema, or "".
std::string verify_schemas(const GraphProto& gp, const std::unordered_map<std::string, int>& opsets,
                           int depth) {
  if (depth > 64) return "subgraphs nested too deeply";
  for (const NodeProto& n : gp.node()) {
    const std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    auto it = opsets.find(domain);
    if (it != opsets.end()) {
      const auto* schema = ::onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, domain);
      if (schema != nullptr) {
        try {
          schema->Verify(n);
        } catch (const std::exception& e) {
          return e.what();
        }
      }
    }
    for (const AttributeProto& a : n.attribute()) {
      if (a.has_g()) {
        std::string why = verify_schemas(a.g(), opsets, depth + 1);
        if (!why.empty()) return why;
      }
      for (const GraphProto& sub : a.graphs()) {
        std::string why = verify_schemas(sub, opsets, depth + 1);
        if (!why.empty()) return why;
      }
    }
  }
  return "";
}

}  // namespace

bool infer_shapes_guarded(::onnx::ModelProto& model, const char* who) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& op : model.opset_import())
    opsets[op.domain() == "ai.onnx" ? std::string() : op.domain()] = static_cast<int>(op.version());
  const std::string why = verify_schemas(model.graph(), opsets, 0);
  if (!why.empty()) {
    HONE_LOG_DEBUG("{}: skipping shape inference: {}", who, why);
    return false;
  }
  try {
    ::onnx::shape_inference::InferShapes(model);
    return true;
  } catch (const std::exception& e) {
    HONE_LOG_DEBUG("{}: shape inference stopped early, keeping what it found: {}", who, e.what());
  } catch (...) {
    HONE_LOG_DEBUG("{}: shape inference stopped early with an unknown exception", who);
  }
  return true;  // what it inferred before stopping is still sound
}

}  // namespace hone::onnx::detail
