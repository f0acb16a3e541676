// hone::onnx: import ONNX models into a hone::Graph and export graphs back to
// ONNX, plus the tensor/sequence/optional protos of the ONNX test data.
//
//   HONE_TRY(Graph g, hone::onnx::load_model("model.onnx"));
//   HONE_CHECK_OK(hone::onnx::save_model(g, "out.onnx", {.external_data = true}));
//   HONE_TRY(auto v, hone::onnx::load_data_file("test_data_set_0/input_0.pb"));
//
// Import never trusts the file: every malformed model (not protobuf, wrong
// sizes, absurd dims, undefined names, cycles, external data escaping the
// model's folder) becomes an Error naming the node, tensor or field; nothing
// is allocated before its size has been checked against the bytes present.
// Thread-safety: all functions are reentrant; they share no state.
// protobuf and libonnx headers stay out of this header on purpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "hone/dtype.h"
#include "hone/error.h"
#include "hone/graph.h"
#include "hone/tensor.h"

namespace hone::onnx {

/// Reads and imports an ONNX model file. External data is resolved relative to
/// the file's folder. Errors: kNotFound (no file), kIo, kCorrupt (not a model,
/// inconsistent data), kUnsupported (string tensors, function attribute
/// references, map types), kInvalidArgument (structural: undefined names,
/// cycles, duplicates), each naming what was wrong.
[[nodiscard]] Result<Graph> load_model(const std::filesystem::path& file);

/// As load_model, from bytes in memory; `base_dir` is where external data
/// files are looked up (they may not leave it).
[[nodiscard]] Result<Graph> load_model_from_bytes(std::span<const uint8_t> bytes,
                                                  const std::filesystem::path& base_dir);

struct SaveOptions {
  /// Write initializers of at least `external_threshold_bytes` to one weights
  /// file next to the model instead of inline.
  bool external_data = false;
  size_t external_threshold_bytes = 1024;
  /// File name (relative to the model's folder) of the weights file; empty
  /// means "<model stem>.weights".
  std::string external_file = "";
};

/// Exports `graph` as an ONNX model that passes onnx::checker::check_model.
/// Files are written to a temporary name and renamed, so a reader never sees
/// a half-written model. Errors: kIo, kUnsupported (an attribute or dtype
/// ONNX cannot express), kInvalidArgument (graph fails validation).
[[nodiscard]] Result<void> save_model(const Graph& graph, const std::filesystem::path& file,
                                      const SaveOptions& options = {});

/// The serialized ModelProto of `graph` (all tensors inline).
[[nodiscard]] Result<std::vector<uint8_t>> save_model_to_bytes(const Graph& graph);

/// One value of the ONNX test data: a tensor, a sequence of tensors, or an
/// optional (holding a tensor, a sequence, or nothing).
struct DataValue {
  enum class Kind { kTensor, kSequence, kOptionalNone };
  Kind kind = Kind::kTensor;
  Tensor tensor;                // kTensor
  std::vector<Tensor> sequence; // kSequence
  bool optional = false;        // the value was wrapped in an OptionalProto
  DType elem_type = DType::kUndefined;
  std::string name;             // the proto's name field, when set
};

/// Reads a conformance `input_K.pb` / `output_K.pb`, deciding from the bytes
/// whether it is a TensorProto, SequenceProto or OptionalProto. A sequence of
/// exactly one tensor and an optional holding a tensor are the same bytes;
/// such files are read as a sequence; use the overload below when the model's
/// declared type is known.
[[nodiscard]] Result<DataValue> load_data_file(const std::filesystem::path& file);
/// Reads the file as the proto that a value of `expected` kind is stored as
/// (kTensor: TensorProto, kSequence: SequenceProto, kOptional: OptionalProto).
[[nodiscard]] Result<DataValue> load_data_file(const std::filesystem::path& file,
                                               ValueKind expected);

/// Parses a serialized TensorProto (inline data only).
[[nodiscard]] Result<Tensor> parse_tensor_proto(std::span<const uint8_t> bytes);
/// Writes `tensor` as a serialized TensorProto (raw_data), atomically.
[[nodiscard]] Result<void> save_tensor_proto(const Tensor& tensor,
                                             const std::filesystem::path& file,
                                             const std::string& name = "");

/// ONNX TensorProto data type number of a hone dtype (FLOAT = 1, ...); 0 for kUndefined.
int32_t to_onnx_dtype(DType t);
/// hone dtype of an ONNX data type number; kUnsupported for string, complex
/// and the float8 types, kCorrupt for numbers ONNX does not define.
[[nodiscard]] Result<DType> from_onnx_dtype(int32_t onnx_type);

}  // namespace hone::onnx
