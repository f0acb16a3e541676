// The ONNX test data protos: TensorProto, SequenceProto, OptionalProto files.
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include "hone/onnx.h"
#include "onnx/proto_tensor.h"

namespace hone::onnx {
namespace {

using ::onnx::OptionalProto;
using ::onnx::SequenceProto;
using ::onnx::TensorProto;

/// Test data never refers to external files.
const detail::ExternalDataPolicy kInlineOnly{{}, false};

template <class Proto>
Result<Proto> parse_as(std::span<const uint8_t> bytes, const char* what) {
  Proto p;
  if (bytes.size() > detail::kMaxModelBytes ||
      !p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return fail(ErrorCode::kCorrupt, std::string("the bytes do not parse as a ") + what);
  return p;
}

Result<DataValue> from_tensor(const TensorProto& tp) {
  HONE_TRY(Tensor t, detail::tensor_from_proto(tp, kInlineOnly));
  DataValue v;
  v.kind = DataValue::Kind::kTensor;
  v.elem_type = t.dtype();
  v.tensor = std::move(t);
  v.name = tp.name();
  return v;
}

Result<DataValue> from_sequence(const SequenceProto& sp) {
  DataValue v;
  v.kind = DataValue::Kind::kSequence;
  v.name = sp.name();
  if (sp.elem_type() != SequenceProto::TENSOR && sp.elem_type() != SequenceProto::UNDEFINED)
    return fail(ErrorCode::kUnsupported, "sequence '" + sp.name() + "' holds elem_type " +
                                             std::to_string(sp.elem_type()) + "; only sequences of tensors are supported");
  if (sp.sparse_tensor_values_size() || sp.sequence_values_size() || sp.map_values_size() ||
      sp.optional_values_size())
    return fail(ErrorCode::kUnsupported, "sequence '" + sp.name() + "' holds non-tensor values");
  for (int i = 0; i < sp.tensor_values_size(); ++i) {
    auto t = detail::tensor_from_proto(sp.tensor_values(i), kInlineOnly);
    if (!t) return fail(std::move(t).error().add_context("in element " + std::to_string(i) + " of sequence '" + sp.name() + "'"));
    if (i > 0 && t->dtype() != v.elem_type)
      return fail(ErrorCode::kCorrupt, "sequence '" + sp.name() + "' mixes dtypes " +
                                           std::string(dtype_name(v.elem_type)) + " and " +
                                           std::string(dtype_name(t->dtype())));
    v.elem_type = t->dtype();
    v.sequence.push_back(std::move(*t));
  }
  return v;
}

Result<DataValue> from_optional(const OptionalProto& op) {
  DataValue v;
  switch (op.elem_type()) {
    case OptionalProto::UNDEFINED:
      v.kind = DataValue::Kind::kOptionalNone;
      break;
    case OptionalProto::TENSOR: {
      if (!op.has_tensor_value()) {
        v.kind = DataValue::Kind::kOptionalNone;
        break;
      }
      HONE_TRY(v, from_tensor(op.tensor_value()));
      break;
    }
    case OptionalProto::SEQUENCE: {
      if (!op.has_sequence_value()) {
        v.kind = DataValue::Kind::kOptionalNone;
        break;
      }
      HONE_TRY(v, from_sequence(op.sequence_value()));
      break;
    }
    default:
      return fail(ErrorCode::kUnsupported, "optional '" + op.name() + "' holds elem_type " +
                                               std::to_string(op.elem_type()) + ", which is not supported");
  }
  v.optional = true;
  v.name = op.name();
  return v;
}

/// A TensorProto parse is taken as one when it is self-consistent: a known
/// dtype, no segment, no unknown fields, and data exactly as large as the dims
/// say (sequence and optional bytes parsed as a tensor fail one of these).
Result<DataValue> parse_detect(std::span<const uint8_t> bytes) {
  if (auto tp = parse_as<TensorProto>(bytes, "TensorProto");
      tp && tp->data_type() != TensorProto::UNDEFINED && !tp->has_segment() &&
      tp->unknown_fields().empty()) {
    auto v = from_tensor(*tp);
    if (v || tp->data_type() == TensorProto::STRING) return v;
  }
  // SequenceProto and OptionalProto share field numbers. An optional is told
  // apart by an UNDEFINED elem_type (empty optional) or a single nested
  // sequence; a single tensor is ambiguous and read as a sequence.
  HONE_TRY(auto sp, parse_as<SequenceProto>(bytes, "TensorProto, SequenceProto or OptionalProto"));
  if (sp.elem_type() == SequenceProto::UNDEFINED || sp.elem_type() == SequenceProto::OPTIONAL ||
      (sp.elem_type() == SequenceProto::SEQUENCE && sp.sequence_values_size() == 1)) {
    HONE_TRY(auto op, parse_as<OptionalProto>(bytes, "OptionalProto"));
    return from_optional(op);
  }
  return from_sequence(sp);
}

}  // namespace

Result<DataValue> load_data_file(const std::filesystem::path& file) {
  HONE_TRY(auto bytes, detail::read_file(file));
  auto v = parse_detect(bytes);
  if (!v) return fail(std::move(v).error().add_context("while reading '" + file.string() + "'"));
  return v;
}

Result<DataValue> load_data_file(const std::filesystem::path& file, ValueKind expected) {
  HONE_TRY(auto bytes, detail::read_file(file));
  Result<DataValue> v = fail(ErrorCode::kInternal, "unreachable");
  switch (expected) {
    case ValueKind::kTensor: {
      auto tp = parse_as<TensorProto>(bytes, "TensorProto");
      v = tp ? from_tensor(*tp) : fail(tp.error());
      break;
    }
    case ValueKind::kSequence: {
      auto sp = parse_as<SequenceProto>(bytes, "SequenceProto");
      v = sp ? from_sequence(*sp) : fail(sp.error());
      break;
    }
    case ValueKind::kOptional: {
      auto op = parse_as<OptionalProto>(bytes, "OptionalProto");
      v = op ? from_optional(*op) : fail(op.error());
      break;
    }
  }
  if (!v) return fail(std::move(v).error().add_context("while reading '" + file.string() + "'"));
  return v;
}

Result<Tensor> parse_tensor_proto(std::span<const uint8_t> bytes) {
  HONE_TRY(auto tp, parse_as<TensorProto>(bytes, "TensorProto"));
  return detail::tensor_from_proto(tp, kInlineOnly);
}

Result<void> save_tensor_proto(const Tensor& tensor, const std::filesystem::path& file,
                               const std::string& name) {
  TensorProto tp;
  HONE_CHECK_OK(detail::tensor_to_proto(tensor, name, &tp));
  HONE_CHECK_OK_CTX(detail::write_message_atomic(tp, file), "while saving '" + file.string() + "'");
  return {};
}

}  // namespace hone::onnx
