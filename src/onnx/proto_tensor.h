// Internal to src/onnx: conversions between ONNX TensorProto/SparseTensorProto
// and hone::Tensor, external data, and the file helpers import and export
// share. Includes protobuf headers, so never include it from include/.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/tensor.h"

namespace hone::onnx::detail {

/// Largest file or message we read: protobuf's own 2 GiB limit.
inline constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;
/// Largest dense tensor we build from a sparse one.
inline constexpr uint64_t kMaxSparseDenseBytes = uint64_t{1} << 30;

/// Where a tensor's external data may be read from; empty base_dir forbids it.
struct ExternalDataPolicy {
  std::filesystem::path base_dir;
  bool allowed = true;
  /// false: external tensors are checked (location, sizes) but not read;
  /// they get their dtype and shape with no data (see LoadModelOptions).
  bool read = true;
};

/// "tensor 'w'" or "unnamed tensor" for messages.
std::string describe_tensor(const ::onnx::TensorProto& t);

/// Checked conversion: dims non-negative, element count fits, data (inline
/// raw_data, typed field, or external file) exactly as large as the dims say.
Result<Tensor> tensor_from_proto(const ::onnx::TensorProto& proto, const ExternalDataPolicy& ext);
/// Densifies a SparseTensorProto (values + linear or coordinate indices).
Result<Tensor> tensor_from_sparse_proto(const ::onnx::SparseTensorProto& proto,
                                        const ExternalDataPolicy& ext);
/// Fills `proto` with dims, data_type and raw_data of `t` (named `name`).
Result<void> tensor_to_proto(const Tensor& t, const std::string& name, ::onnx::TensorProto* proto);

/// Reads a whole file (at most kMaxModelBytes). kNotFound when missing.
Result<std::vector<uint8_t>> read_file(const std::filesystem::path& file);
/// Serializes any message and writes it atomically (hone::write_file_atomic).
Result<void> write_message_atomic(const ::google::protobuf::MessageLite& msg,
                                  const std::filesystem::path& file);

}  // namespace hone::onnx::detail
