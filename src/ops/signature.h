// The signatures of the ai.onnx operator versions that came after the newest
// opset Debian's libonnx (1.12, opset 17) has schemas for: for each op version
// from opset 18 to kNewestOnnxOpset whose attributes or input/output counts
// changed (new ops included), the attributes it takes (name, kind, required)
// and how many inputs and outputs it has. The importer's schema check reads
// it to validate newer models as strictly as libonnx validates older ones.
//
//   const ops::OpSignature* s = ops::newer_signature("Split", 20);   // Split-18
//   if (s && s->find("num_outputs")) ...
//
// Versions that only widened the element types (most of opsets 19 to 25)
// take the signature of the version before them and have no row. The facts
// come from ONNX's Changelog (docs/Changelog.md), one row per version.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace hone::ops {

/// The newest ai.onnx opset hone reads (ONNX Runtime 1.30 reads up to 26).
inline constexpr int64_t kNewestOnnxOpset = 26;
/// The newest ai.onnx opset libonnx's schemas cover; rows start after it.
inline constexpr int64_t kLibonnxNewestOpset = 17;

/// What an attribute holds, as ONNX's AttributeProto types it.
enum class AttrKind {
  kFloat,
  kInt,
  kString,
  kTensor,
  kGraph,
  kSparseTensor,
  kTypeProto,
  kFloats,
  kInts,
  kStrings,
  kTensors,
  kGraphs,
  kSparseTensors,
  kTypeProtos,
};

/// "INT", "FLOATS", ...: AttributeProto's own spelling, for error messages.
std::string_view attr_kind_name(AttrKind kind);

struct AttrSignature {
  std::string_view name;
  AttrKind kind;
  bool required = false;
};

/// Any number of inputs or outputs from the minimum on.
inline constexpr int kVariadic = -1;

struct OpSignature {
  std::string_view op_type;
  int since;                   ///< the opset this version appeared in
  int min_inputs, max_inputs;  ///< max may be kVariadic
  int min_outputs, max_outputs;
  std::vector<AttrSignature> attributes;

  /// The attribute called `name`, or nullptr when this version takes none.
  const AttrSignature* find(std::string_view name) const;
};

/// The signature of ai.onnx's `op_type` at `opset`: the newest row with
/// since <= opset, or nullptr when the op has no row at or below it (then
/// libonnx's schema at min(opset, kLibonnxNewestOpset) applies, if any).
const OpSignature* newer_signature(std::string_view op_type, int64_t opset);

/// Every row, sorted by op type, then since (for tests and docs).
const std::vector<OpSignature>& newer_signatures();

}  // namespace hone::ops
