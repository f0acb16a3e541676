#include "onnx/proto_tensor.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <system_error>

#include "core/stdio_file.h"
#include "hone/file_io.h"
#include "hone/limits.h"
#include "hone/onnx.h"
#include "hone/read_file.h"

namespace hone::onnx {

using ::onnx::TensorProto;

int32_t to_onnx_dtype(DType t) {
  switch (t) {
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    case DType::kF64:
      return TensorProto::DOUBLE;
    case DType::kI8:
      return TensorProto::INT8;
    case DType::kU8:
      return TensorProto::UINT8;
    case DType::kI16:
      return TensorProto::INT16;
    case DType::kU16:
      return TensorProto::UINT16;
    case DType::kI32:
      return TensorProto::INT32;
    case DType::kU32:
      return TensorProto::UINT32;
    case DType::kI64:
      return TensorProto::INT64;
    case DType::kU64:
      return TensorProto::UINT64;
    case DType::kBool:
      return TensorProto::BOOL;
    case DType::kUndefined:
      return TensorProto::UNDEFINED;
  }
  return TensorProto::UNDEFINED;
}

Result<DType> from_onnx_dtype(int32_t onnx_type) {
  switch (onnx_type) {
    case TensorProto::UNDEFINED:
      return DType::kUndefined;
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT16:
      return DType::kU16;
    case TensorProto::INT16:
      return DType::kI16;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::BOOL:
      return DType::kBool;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::UINT32:
      return DType::kU32;
    case TensorProto::UINT64:
      return DType::kU64;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    case TensorProto::STRING:
      return fail(ErrorCode::kUnsupported, "string tensors are not supported");
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128:
      return fail(ErrorCode::kUnsupported, "complex tensors are not supported");
    default:
      // The element types of IR 9 to 13 (onnx.proto's numbers 17 to 26), which
      // hone has no dtype for.
      static constexpr const char* kNewer[] = {
          "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",
          "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0", "UINT2",          "INT2"};
      if (onnx_type >= 17 && onnx_type < 17 + static_cast<int32_t>(std::size(kNewer)))
        return fail(ErrorCode::kUnsupported,
                    std::string(kNewer[onnx_type - 17]) + " tensors are not supported");
      return fail(ErrorCode::kCorrupt, "unknown ONNX data type " + std::to_string(onnx_type));
  }
}

namespace detail {
namespace {

/// Element count of `dims`, checked: no negative dim, no overflow past 2^62.
Result<int64_t> checked_numel(const TensorProto& t) {
  int64_t n = 1;
  constexpr int64_t kMax = int64_t{1} << 62;
  for (int i = 0; i < t.dims_size(); ++i) {
    const int64_t d = t.dims(i);
    if (d < 0)
      return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has negative dim " +
                                           std::to_string(d) + " at axis " + std::to_string(i));
    if (d != 0 && n > kMax / d)
      return fail(ErrorCode::kCorrupt,
                  describe_tensor(t) + " has absurd dims (element count overflows)");
    n *= d;
  }
  return n;
}

std::vector<int64_t> dims_of(const TensorProto& t) {
  return {t.dims().begin(), t.dims().end()};
}

template <class Dst, class Field>
void copy_typed(const Field& field, Tensor& out) {
  Dst* dst = out.data<Dst>();
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<Dst>(field.Get(i));
}

void copy_u16_bits(const google::protobuf::RepeatedField<int32_t>& field, Tensor& out) {
  auto* dst = static_cast<uint16_t*>(out.raw());
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<uint16_t>(field.Get(i) & 0xFFFF);
}

/// How many values the typed field that holds `dtype` carries.
int64_t typed_count(const TensorProto& t, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return t.float_data_size();
    case DType::kF64:
      return t.double_data_size();
    case DType::kI64:
      return t.int64_data_size();
    case DType::kU32:
    case DType::kU64:
      return t.uint64_data_size();
    default:
      return t.int32_data_size();
  }
}

int64_t all_typed_count(const TensorProto& t) {
  return int64_t{t.float_data_size()} + t.double_data_size() + t.int64_data_size() +
         t.uint64_data_size() + t.int32_data_size() + t.string_data_size();
}

void fill_typed(const TensorProto& t, DType dtype, Tensor& out) {
  switch (dtype) {
    case DType::kF32:
      copy_typed<float>(t.float_data(), out);
      break;
    case DType::kF64:
      copy_typed<double>(t.double_data(), out);
      break;
    case DType::kI64:
      copy_typed<int64_t>(t.int64_data(), out);
      break;
    case DType::kU32:
      copy_typed<uint32_t>(t.uint64_data(), out);
      break;
    case DType::kU64:
      copy_typed<uint64_t>(t.uint64_data(), out);
      break;
    case DType::kI32:
      copy_typed<int32_t>(t.int32_data(), out);
      break;
    case DType::kI16:
      copy_typed<int16_t>(t.int32_data(), out);
      break;
    case DType::kU16:
      copy_typed<uint16_t>(t.int32_data(), out);
      break;
    case DType::kI8:
      copy_typed<int8_t>(t.int32_data(), out);
      break;
    case DType::kU8:
      copy_typed<uint8_t>(t.int32_data(), out);
      break;
    case DType::kF16:
    case DType::kBF16:
      copy_u16_bits(t.int32_data(), out);
      break;
    case DType::kBool: {
      auto* dst = static_cast<uint8_t*>(out.raw());
      for (int i = 0; i < t.int32_data_size(); ++i) dst[i] = t.int32_data(i) != 0 ? 1 : 0;
      break;
    }
    case DType::kUndefined:
      break;
  }
}

Result<uint64_t> parse_u64(const std::string& text, const std::string& what, const TensorProto& t) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty())
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has external data " + what + " '" +
                                         text + "', which is not a non-negative integer");
  return v;
}

bool path_is_within(const std::filesystem::path& base, const std::filesystem::path& target) {
  auto b = base.begin();
  auto t = target.begin();
  for (; b != base.end(); ++b, ++t) {
    if (b->empty()) continue;  // trailing separator
    if (t == target.end() || *b != *t) return false;
  }
  return t != target.end();
}

Result<std::filesystem::path> resolve_external(const TensorProto& t, const std::string& location,
                                               const ExternalDataPolicy& ext) {
  namespace fs = std::filesystem;
  if (!ext.allowed)
    return fail(ErrorCode::kInvalidArgument,
                describe_tensor(t) + " has external data, which is not allowed here");
  if (location.empty())
    return fail(ErrorCode::kCorrupt,
                describe_tensor(t) + " has external data without a 'location'");
  if (location.find('\0') != std::string::npos)
    return fail(ErrorCode::kCorrupt,
                describe_tensor(t) + " has an external data location with a NUL byte");
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory())
    return fail(ErrorCode::kInvalidArgument,
                describe_tensor(t) + " has external data at absolute path '" + location +
                    "'; locations must be relative to the model's folder");
  std::error_code ec;
  const fs::path base_in = ext.base_dir.empty() ? fs::path(".") : ext.base_dir;
  const fs::path base = fs::weakly_canonical(fs::absolute(base_in, ec), ec);
  if (ec)
    return fail(ErrorCode::kIo,
                "cannot resolve model folder '" + base_in.string() + "': " + ec.message());
  const fs::path target = fs::weakly_canonical(base / loc, ec);
  if (ec)
    return fail(ErrorCode::kIo, "cannot resolve external data file '" + location + "' of " +
                                    describe_tensor(t) + ": " + ec.message());
  if (!path_is_within(base, target))
    return fail(ErrorCode::kInvalidArgument,
                describe_tensor(t) + " has external data '" + location +
                    "', which resolves outside the model's folder '" + base.string() + "'");
  if (!fs::exists(target, ec))
    return fail(ErrorCode::kNotFound, "external data file '" + location + "' of " +
                                          describe_tensor(t) + " not found in '" + base.string() +
                                          "'");
  if (!fs::is_regular_file(target, ec))
    return fail(ErrorCode::kInvalidArgument, "external data '" + location + "' of " +
                                                 describe_tensor(t) + " is not a regular file");
  return target;
}

Result<Tensor> read_external(const TensorProto& t, DType dtype, int64_t numel,
                             const ExternalDataPolicy& ext) {
  std::string location;
  std::optional<uint64_t> offset, length;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      HONE_TRY(offset, parse_u64(kv.value(), "offset", t));
    } else if (kv.key() == "length") {
      HONE_TRY(length, parse_u64(kv.value(), "length", t));
    }
  }
  HONE_TRY(auto path, resolve_external(t, location, ext));
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec)
    return fail(ErrorCode::kIo,
                "cannot stat external data file '" + location + "': " + ec.message());
  const uint64_t off = offset.value_or(0);
  if (off > file_size)
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has external data offset " +
                                         std::to_string(off) + " past the end of '" + location +
                                         "' (" + std::to_string(file_size) + " bytes)");
  const uint64_t len = length.value_or(file_size - off);
  if (len > file_size - off)
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has external data [" +
                                         std::to_string(off) + ", +" + std::to_string(len) +
                                         ") past the end of '" + location + "' (" +
                                         std::to_string(file_size) + " bytes)");
  const uint64_t want = static_cast<uint64_t>(numel) * dtype_size(dtype);
  if (len != want)
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has " + std::to_string(len) +
                                         " bytes of external data but its dims and dtype need " +
                                         std::to_string(want));
  if (!ext.read) return Tensor::borrow(dtype, dims_of(t), nullptr);
  HONE_CHECK_OK(check_allocation(len, describe_tensor(t) + " (external data '" + location + "')"));
  HONE_TRY(Tensor out, Tensor::allocate(dtype, dims_of(t)));
  StdioFile f(std::fopen(path.c_str(), "rb"));
  if (!f) return fail(ErrorCode::kIo, "cannot open '" + path.string() + "': " + errno_text());
  if (fseeko(f.get(), static_cast<off_t>(off), SEEK_SET) != 0 ||
      std::fread(out.raw(), 1, len, f.get()) != len)
    return fail(ErrorCode::kIo, "cannot read " + std::to_string(len) + " bytes at offset " +
                                    std::to_string(off) + " of '" + path.string() + "' for " +
                                    describe_tensor(t));
  return out;
}

}  // namespace

std::string describe_tensor(const TensorProto& t) {
  return t.name().empty() ? std::string("unnamed tensor") : "tensor '" + t.name() + "'";
}

Result<Tensor> tensor_from_proto(const TensorProto& t, const ExternalDataPolicy& ext) {
  auto dtype_r = from_onnx_dtype(t.data_type());
  if (!dtype_r) {
    Error e = dtype_r.error();
    return fail(e.code(), e.message() + " (" + describe_tensor(t) + ")");
  }
  const DType dtype = *dtype_r;
  if (dtype == DType::kUndefined)
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has no data_type");
  if (t.has_segment())
    return fail(ErrorCode::kUnsupported, describe_tensor(t) + " is a segment of a larger tensor");
  HONE_TRY(int64_t numel, checked_numel(t));
  const uint64_t want_bytes = static_cast<uint64_t>(numel) * dtype_size(dtype);
  if (numel > 0 && want_bytes / static_cast<uint64_t>(numel) != dtype_size(dtype))
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has absurd dims");

  if (t.data_location() == TensorProto::EXTERNAL) return read_external(t, dtype, numel, ext);
  if (t.data_location() != TensorProto::DEFAULT)
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has unknown data_location " +
                                         std::to_string(t.data_location()));

  const int64_t typed = all_typed_count(t);
  if (t.has_raw_data()) {
    if (typed != 0)
      return fail(ErrorCode::kCorrupt,
                  describe_tensor(t) + " has both raw_data and typed data fields");
    if (t.raw_data().size() != want_bytes)
      return fail(ErrorCode::kCorrupt,
                  describe_tensor(t) + " has " + std::to_string(t.raw_data().size()) +
                      " bytes of raw_data but dims " + shape_to_string(dims_of(t)) + " of " +
                      std::string(dtype_name(dtype)) + " need " + std::to_string(want_bytes));
    HONE_CHECK_OK(check_allocation(want_bytes, describe_tensor(t)));
    HONE_TRY(Tensor out, Tensor::allocate(dtype, dims_of(t)));
    if (want_bytes != 0) std::memcpy(out.raw(), t.raw_data().data(), want_bytes);
    return out;
  }
  const int64_t have = typed_count(t, dtype);
  if (have != typed)
    return fail(ErrorCode::kCorrupt,
                describe_tensor(t) + " of dtype " + std::string(dtype_name(dtype)) +
                    " stores its data in a typed field that does not hold that dtype");
  if (have != numel)
    return fail(ErrorCode::kCorrupt, describe_tensor(t) + " has " + std::to_string(have) +
                                         " values but dims " + shape_to_string(dims_of(t)) +
                                         " need " + std::to_string(numel));
  HONE_CHECK_OK(check_allocation(want_bytes, describe_tensor(t)));
  HONE_TRY(Tensor out, Tensor::allocate(dtype, dims_of(t)));
  fill_typed(t, dtype, out);
  return out;
}

Result<Tensor> tensor_from_sparse_proto(const ::onnx::SparseTensorProto& sp,
                                        const ExternalDataPolicy& ext) {
  const std::string what = "sparse tensor '" + sp.values().name() + "'";
  HONE_TRY(Tensor values, tensor_from_proto(sp.values(), ext));
  if (values.rank() != 1)
    return fail(ErrorCode::kCorrupt,
                what + " has values of rank " + std::to_string(values.rank()) + ", not 1");
  std::vector<int64_t> dims(sp.dims().begin(), sp.dims().end());
  int64_t dense_numel = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      return fail(ErrorCode::kCorrupt, what + " has negative dim at axis " + std::to_string(i));
    if (dims[i] != 0 && dense_numel > std::numeric_limits<int64_t>::max() / dims[i])
      return fail(ErrorCode::kCorrupt, what + " has absurd dims");
    dense_numel *= dims[i];
  }
  if (static_cast<uint64_t>(dense_numel) > kMaxSparseDenseBytes / dtype_size(values.dtype()))
    return fail(ErrorCode::kUnsupported, what + " would take more than 1 GiB when made dense");
  HONE_TRY(Tensor indices, tensor_from_proto(sp.indices(), ext));
  if (indices.dtype() != DType::kI64)
    return fail(ErrorCode::kCorrupt, what + " has indices of dtype " +
                                         std::string(dtype_name(indices.dtype())) + ", not int64");
  const int64_t nnz = values.numel();
  const bool linear = indices.rank() == 1;
  if (!(linear && indices.dim(0) == nnz) && !(indices.rank() == 2 && indices.dim(0) == nnz &&
                                              indices.dim(1) == static_cast<int64_t>(dims.size())))
    return fail(ErrorCode::kCorrupt, what + " has indices of shape " +
                                         shape_to_string(indices.shape()) + " for " +
                                         std::to_string(nnz) + " values");
  HONE_TRY(Tensor dense, Tensor::allocate(values.dtype(), dims));
  const size_t es = dtype_size(values.dtype());
  const int64_t* idx = indices.data<int64_t>();
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = 0;
    if (linear) {
      flat = idx[k];
    } else {
      for (size_t a = 0; a < dims.size(); ++a) {
        const int64_t c = idx[k * static_cast<int64_t>(dims.size()) + static_cast<int64_t>(a)];
        if (c < 0 || c >= dims[a])
          return fail(ErrorCode::kCorrupt, what + " has index " + std::to_string(c) +
                                               " out of range at axis " + std::to_string(a));
        flat = flat * dims[a] + c;
      }
    }
    if (flat < 0 || flat >= dense_numel)
      return fail(ErrorCode::kCorrupt,
                  what + " has index " + std::to_string(flat) + " out of range");
    std::memcpy(static_cast<char*>(dense.raw()) + static_cast<size_t>(flat) * es,
                static_cast<const char*>(values.raw()) + static_cast<size_t>(k) * es, es);
  }
  return dense;
}

Result<void> tensor_to_proto(const Tensor& t, const std::string& name, TensorProto* proto) {
  if (!t.defined()) return fail(ErrorCode::kInvalidArgument, "tensor '" + name + "' is undefined");
  proto->set_name(name);
  proto->set_data_type(to_onnx_dtype(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  proto->set_raw_data(t.raw(), t.nbytes());
  return {};
}

Result<std::vector<uint8_t>> read_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    return fail(ErrorCode::kNotFound, "file '" + file.string() + "' not found");
  if (std::filesystem::is_directory(file, ec))
    return fail(ErrorCode::kInvalidArgument, "'" + file.string() + "' is a folder, not a file");
  // A regular file only (never a FIFO or a device), at most 2 GiB.
  auto bytes = read_regular_file(file, kMaxModelBytes);
  if (!bytes && bytes.error().code() == ErrorCode::kUnsupported)
    return fail(ErrorCode::kUnsupported, bytes.error().message() +
                                             "; protobuf files are limited to 2 GiB "
                                             "(store large weights as external data)");
  return bytes;
}

Result<void> write_message_atomic(const google::protobuf::MessageLite& msg,
                                  const std::filesystem::path& file) {
  const size_t size = msg.ByteSizeLong();
  if (size > kMaxModelBytes)
    return fail(ErrorCode::kUnsupported,
                "'" + file.string() + "' would be " + std::to_string(size) +
                    " bytes; protobuf files are limited to 2 GiB (use external data)");
  std::vector<uint8_t> bytes(size);
  if (!msg.SerializeToArray(bytes.data(), static_cast<int>(size)))
    return fail(ErrorCode::kInternal, "cannot serialize '" + file.string() + "'");
  return hone::write_file_atomic(file, std::span<const uint8_t>(bytes));
}

}  // namespace detail
}  // namespace hone::onnx
