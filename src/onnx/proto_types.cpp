#include "onnx/proto_types.h"

#include <array>
#include <utility>

#include "hone/onnx.h"
#include "ops/sym_int.h"

namespace hone::onnx::detail {
namespace {

using ::onnx::TensorProto;
using ::onnx::TypeProto;

constexpr std::array<std::pair<int32_t, std::string_view>, 16> kElemNames{{
    {TensorProto::FLOAT, "float"},
    {TensorProto::UINT8, "uint8"},
    {TensorProto::INT8, "int8"},
    {TensorProto::UINT16, "uint16"},
    {TensorProto::INT16, "int16"},
    {TensorProto::INT32, "int32"},
    {TensorProto::INT64, "int64"},
    {TensorProto::STRING, "string"},
    {TensorProto::BOOL, "bool"},
    {TensorProto::FLOAT16, "float16"},
    {TensorProto::DOUBLE, "double"},
    {TensorProto::UINT32, "uint32"},
    {TensorProto::UINT64, "uint64"},
    {TensorProto::COMPLEX64, "complex64"},
    {TensorProto::COMPLEX128, "complex128"},
    {TensorProto::BFLOAT16, "bfloat16"},
}};

std::string elem_name(int32_t t) {
  for (const auto& [id, name] : kElemNames)
    if (id == t) return std::string(name);
  return "undefined";
}

Result<int32_t> elem_from_name(std::string_view name) {
  for (const auto& [id, n] : kElemNames)
    if (n == name) return id;
  return fail(ErrorCode::kCorrupt, "unknown element type '" + std::string(name) + "'");
}

/// Splits "head(inner)" into head and inner.
bool split_call(std::string_view text, std::string_view* head, std::string_view* inner) {
  const size_t open = text.find('(');
  if (open == std::string_view::npos || text.empty() || text.back() != ')') return false;
  *head = text.substr(0, open);
  *inner = text.substr(open + 1, text.size() - open - 2);
  return true;
}

Result<void> parse_type(std::string_view text, TypeProto* type, int depth) {
  if (depth > 16) return fail(ErrorCode::kCorrupt, "type string is nested too deeply");
  std::string_view head, inner;
  if (!split_call(text, &head, &inner))
    return fail(ErrorCode::kCorrupt, "cannot parse type '" + std::string(text) + "'");
  if (head == "tensor" || head == "sparse_tensor") {
    HONE_TRY(int32_t e, elem_from_name(inner));
    if (head == "tensor")
      type->mutable_tensor_type()->set_elem_type(e);
    else
      type->mutable_sparse_tensor_type()->set_elem_type(e);
    return {};
  }
  if (head == "seq")
    return parse_type(inner, type->mutable_sequence_type()->mutable_elem_type(), depth + 1);
  if (head == "optional")
    return parse_type(inner, type->mutable_optional_type()->mutable_elem_type(), depth + 1);
  if (head == "map") {
    const size_t comma = inner.find(',');
    if (comma == std::string_view::npos)
      return fail(ErrorCode::kCorrupt, "cannot parse map type '" + std::string(text) + "'");
    HONE_TRY(int32_t k, elem_from_name(inner.substr(0, comma)));
    type->mutable_map_type()->set_key_type(k);
    return parse_type(inner.substr(comma + 1), type->mutable_map_type()->mutable_value_type(),
                      depth + 1);
  }
  return fail(ErrorCode::kCorrupt, "cannot parse type '" + std::string(text) + "'");
}

Result<Shape> shape_from_proto(const ::onnx::TensorShapeProto& s, const std::string& what) {
  std::vector<Dim> dims;
  dims.reserve(static_cast<size_t>(s.dim_size()));
  for (int i = 0; i < s.dim_size(); ++i) {
    const auto& d = s.dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return fail(ErrorCode::kCorrupt, what + " has negative dim " +
                                             std::to_string(d.dim_value()) + " at axis " +
                                             std::to_string(i));
      dims.emplace_back(d.dim_value());
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      // An expression's name ("4*batch", the dynamo exporter's) in hone's form.
      dims.push_back(ops::dim_from_name(d.dim_param()));
    } else {
      dims.emplace_back();
    }
  }
  return Shape(std::move(dims));
}

Result<void> apply_tensor_type(const TypeProto::Tensor& t, const std::string& what, Value& value) {
  if (t.elem_type() != 0) {
    auto dt = from_onnx_dtype(t.elem_type());
    if (!dt) return fail(dt.error().code(), dt.error().message() + " (" + what + ")");
    value.dtype = *dt;
  }
  if (t.has_shape()) {
    HONE_TRY(value.shape, shape_from_proto(t.shape(), what));
  }
  return {};
}

void shape_to_proto(const Shape& shape, ::onnx::TensorShapeProto* out) {
  for (const Dim& d : shape.dims()) {
    auto* pd = out->add_dim();
    if (d.is_static())
      pd->set_dim_value(d.value());
    else if (d.is_symbolic())
      pd->set_dim_param(d.symbol_name());
  }
}

}  // namespace

std::string type_proto_to_string(const TypeProto& type) {
  switch (type.value_case()) {
    case TypeProto::kTensorType:
      return "tensor(" + elem_name(type.tensor_type().elem_type()) + ")";
    case TypeProto::kSparseTensorType:
      return "sparse_tensor(" + elem_name(type.sparse_tensor_type().elem_type()) + ")";
    case TypeProto::kSequenceType:
      return "seq(" + type_proto_to_string(type.sequence_type().elem_type()) + ")";
    case TypeProto::kOptionalType:
      return "optional(" + type_proto_to_string(type.optional_type().elem_type()) + ")";
    case TypeProto::kMapType:
      return "map(" + elem_name(type.map_type().key_type()) + "," +
             type_proto_to_string(type.map_type().value_type()) + ")";
    default:
      return "undefined";
  }
}

Result<void> type_proto_from_string(std::string_view text, TypeProto* type) {
  return parse_type(text, type, 0);
}

Result<void> apply_type_proto(const TypeProto& type, const std::string& what, Value& value) {
  switch (type.value_case()) {
    case TypeProto::VALUE_NOT_SET:
      return {};
    case TypeProto::kTensorType:
      value.kind = ValueKind::kTensor;
      return apply_tensor_type(type.tensor_type(), what, value);
    case TypeProto::kSequenceType: {
      value.kind = ValueKind::kSequence;
      const TypeProto& elem = type.sequence_type().elem_type();
      if (elem.value_case() == TypeProto::VALUE_NOT_SET) return {};
      if (elem.value_case() != TypeProto::kTensorType)
        return fail(ErrorCode::kUnsupported, what + " is a sequence of " +
                                                 type_proto_to_string(elem) +
                                                 "; only sequences of tensors are supported");
      return apply_tensor_type(elem.tensor_type(), what, value);
    }
    case TypeProto::kOptionalType: {
      value.kind = ValueKind::kOptional;
      const TypeProto& elem = type.optional_type().elem_type();
      if (elem.value_case() == TypeProto::kTensorType)
        return apply_tensor_type(elem.tensor_type(), what, value);
      if (elem.value_case() == TypeProto::kSequenceType &&
          elem.sequence_type().elem_type().value_case() == TypeProto::kTensorType)
        return apply_tensor_type(elem.sequence_type().elem_type().tensor_type(), what, value);
      if (elem.value_case() == TypeProto::VALUE_NOT_SET) return {};
      return fail(ErrorCode::kUnsupported,
                  what + " has type " + type_proto_to_string(type) + ", which is not supported");
    }
    case TypeProto::kMapType:
      return fail(ErrorCode::kUnsupported, what + " has map type " + type_proto_to_string(type) +
                                               "; map types are not supported");
    case TypeProto::kSparseTensorType:
      return fail(ErrorCode::kUnsupported,
                  what + " is a sparse tensor; sparse values are not supported");
    default:
      return fail(ErrorCode::kUnsupported, what + " has a type hone does not know");
  }
}

bool value_type_to_proto(const Value& value, TypeProto* type) {
  if (value.dtype == DType::kUndefined && !value.shape && value.kind == ValueKind::kTensor)
    return false;
  TypeProto::Tensor* tensor = nullptr;
  switch (value.kind) {
    case ValueKind::kTensor:
      tensor = type->mutable_tensor_type();
      break;
    case ValueKind::kSequence:
      tensor = type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
      break;
    case ValueKind::kOptional:
      tensor = type->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
      break;
  }
  tensor->set_elem_type(to_onnx_dtype(value.dtype));
  if (value.shape) shape_to_proto(*value.shape, tensor->mutable_shape());
  return true;
}

::onnx::AttributeProto::AttributeType held_attribute_type(const ::onnx::AttributeProto& a) {
  using ::onnx::AttributeProto;
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.has_sparse_tensor()) return AttributeProto::SPARSE_TENSOR;
  if (a.has_tp()) return AttributeProto::TYPE_PROTO;
  if (a.floats_size() > 0) return AttributeProto::FLOATS;
  if (a.ints_size() > 0) return AttributeProto::INTS;
  if (a.strings_size() > 0) return AttributeProto::STRINGS;
  if (a.tensors_size() > 0) return AttributeProto::TENSORS;
  if (a.graphs_size() > 0) return AttributeProto::GRAPHS;
  if (a.sparse_tensors_size() > 0) return AttributeProto::SPARSE_TENSORS;
  if (a.type_protos_size() > 0) return AttributeProto::TYPE_PROTOS;
  return AttributeProto::UNDEFINED;
}

}  // namespace hone::onnx::detail
