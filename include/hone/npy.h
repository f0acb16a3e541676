// NumPy .npy files: read and write single tensors in NumPy's own format, so
// inputs and outputs can be exchanged with Python (numpy.load / numpy.save)
// and with the JavaScript peer scripts.
//
//   HONE_TRY(hone::Tensor x, hone::load_npy("input_0.npy"));
//   HONE_CHECK_OK(hone::save_npy(y, "output_0.npy"));
//   HONE_TRY(auto t, hone::parse_npy(bytes, "blob"));      // from memory
//
// Reading accepts format versions 1.0, 2.0 and 3.0, little- or big-endian
// data (big-endian is byte-swapped on load) and C or Fortran order (Fortran
// order is transposed into hone's row-major layout). Element types map one to
// one: <f2 f16, <f4 f32, <f8 f64, |b1 bool, |i1 <i2 <i4 <i8, |u1 <u2 <u4 <u8.
// bf16 has no NumPy dtype, so save_npy rejects it (kUnsupported) rather than
// writing bits NumPy would misread. Writing always produces version 1.0 (2.0
// when the header does not fit), little-endian, C order.
// Errors: kNotFound / kIo for files that cannot be opened or written,
// kCorrupt for malformed or truncated data (naming the file and the problem),
// kUnsupported for dtypes hone has no equivalent for (strings, complex,
// structured records).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/tensor.h"

namespace hone {

/// Parses the bytes of a whole .npy file. `origin` names the data in error
/// messages (a file path, "<memory>").
[[nodiscard]] Result<Tensor> parse_npy(std::span<const uint8_t> bytes,
                                       std::string_view origin = "<memory>");
/// Reads and parses a .npy file.
[[nodiscard]] Result<Tensor> load_npy(const std::filesystem::path& path);
/// The bytes of a .npy file holding `tensor` (a defined tensor, not bf16).
[[nodiscard]] Result<std::vector<uint8_t>> serialize_npy(const Tensor& tensor);
/// Writes `tensor` to `path`. The file is written under a temporary name next
/// to `path` and renamed into place, so a failure never leaves a half file.
[[nodiscard]] Result<void> save_npy(const Tensor& tensor, const std::filesystem::path& path);

/// NumPy's descr string for a dtype ("<f4", "|b1"); empty for bf16/undefined.
std::string_view npy_descr(DType dtype);

}  // namespace hone
