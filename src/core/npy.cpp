#include "hone/npy.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

#include "hone/file_io.h"
#include "hone/limits.h"
#include "hone/read_file.h"
#include "hone/shape.h"

namespace hone {
namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct DescrEntry {
  DType dtype;
  const char* descr;
};
constexpr DescrEntry kDescrs[] = {
    {DType::kF16, "<f2"}, {DType::kF32, "<f4"}, {DType::kF64, "<f8"}, {DType::kBool, "|b1"},
    {DType::kI8, "|i1"},  {DType::kI16, "<i2"}, {DType::kI32, "<i4"}, {DType::kI64, "<i8"},
    {DType::kU8, "|u1"},  {DType::kU16, "<u2"}, {DType::kU32, "<u4"}, {DType::kU64, "<u8"},
};

std::unexpected<Error> corrupt(std::string_view origin, const std::string& what) {
  return fail(ErrorCode::kCorrupt, std::string(origin) + ": " + what);
}

// --- a tiny parser for the header, a Python dict literal ---------------------
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view origin) : s_(text), origin_(origin) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
  };

  Result<Header> parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    if (!eat('{')) return err("header does not start with '{'");
    while (true) {
      skip_ws();
      if (eat('}')) break;
      HONE_TRY(std::string key, parse_string());
      skip_ws();
      if (!eat(':')) return err("expected ':' after key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          return fail(ErrorCode::kUnsupported,
                      std::string(origin_) +
                          ": structured (record) dtypes are not supported; only plain numeric "
                          "and bool arrays");
        HONE_TRY(h.descr, parse_string());
        have_descr = true;
      } else if (key == "fortran_order") {
        HONE_TRY(h.fortran_order, parse_bool());
        have_order = true;
      } else if (key == "shape") {
        HONE_TRY(h.shape, parse_tuple());
        have_shape = true;
      } else {
        return err("unexpected header key '" + key + "'");
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return err("expected ',' or '}' in header at offset " + std::to_string(pos_));
    }
    if (!have_descr) return err("header has no 'descr'");
    if (!have_order) return err("header has no 'fortran_order'");
    if (!have_shape) return err("header has no 'shape'");
    return h;
  }

 private:
  std::unexpected<Error> err(const std::string& what) const {
    return corrupt(origin_, "bad .npy header: " + what);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  Result<std::string> parse_string() {
    const char q = peek();
    if (q != '\'' && q != '"')
      return err("expected a quoted string at offset " + std::to_string(pos_));
    ++pos_;
    const size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) return err("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  Result<bool> parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return err("'fortran_order' is neither True nor False");
  }
  Result<std::vector<int64_t>> parse_tuple() {
    std::vector<int64_t> dims;
    if (!eat('(')) return err("'shape' is not a tuple");
    while (true) {
      skip_ws();
      if (eat(')')) break;
      const size_t start = pos_;
      int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        const int64_t d = s_[pos_] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
          return err("dim too large in 'shape'");
        v = v * 10 + d;
        ++pos_;
      }
      if (pos_ == start) return err("'shape' holds something that is not a non-negative integer");
      eat('L');  // Python 2 longs
      dims.push_back(v);
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat(')')) break;
      return err("expected ',' or ')' in 'shape'");
    }
    return dims;
  }

  std::string_view s_;
  std::string_view origin_;
  size_t pos_ = 0;
};

struct ParsedDescr {
  DType dtype;
  bool big_endian;
};

Result<ParsedDescr> parse_descr(const std::string& descr, std::string_view origin) {
  auto unsupported = [&](const std::string& why) {
    return fail(ErrorCode::kUnsupported, std::string(origin) + ": NumPy dtype '" + descr +
                                             "' is not supported (" + why + ")");
  };
  if (descr.size() < 2) return corrupt(origin, "bad .npy header: dtype '" + descr + "'");
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return corrupt(origin, "bad .npy header: dtype '" + descr + "' has no byte-order mark");
  const char kind = descr[1];
  int size = 0;
  try {
    size = std::stoi(descr.substr(2));
  } catch (...) {
    if (kind == 'U' || kind == 'S' || kind == 'O' || kind == 'V')
      return unsupported("strings, objects and raw bytes have no hone dtype");
    return corrupt(origin, "bad .npy header: dtype '" + descr + "'");
  }
  std::optional<DType> dt;
  if (kind == 'f') {
    if (size == 2) dt = DType::kF16;
    if (size == 4) dt = DType::kF32;
    if (size == 8) dt = DType::kF64;
  } else if (kind == 'i') {
    if (size == 1) dt = DType::kI8;
    if (size == 2) dt = DType::kI16;
    if (size == 4) dt = DType::kI32;
    if (size == 8) dt = DType::kI64;
  } else if (kind == 'u') {
    if (size == 1) dt = DType::kU8;
    if (size == 2) dt = DType::kU16;
    if (size == 4) dt = DType::kU32;
    if (size == 8) dt = DType::kU64;
  } else if (kind == 'b') {
    if (size == 1) dt = DType::kBool;
  } else if (kind == 'c') {
    return unsupported("complex numbers have no hone dtype");
  } else if (kind == 'U' || kind == 'S' || kind == 'O' || kind == 'V') {
    return unsupported("strings, objects and raw bytes have no hone dtype");
  } else if (kind == 'M' || kind == 'm') {
    return unsupported("datetimes have no hone dtype");
  }
  if (!dt) return unsupported("no hone dtype of that kind and size");
  return ParsedDescr{*dt, order == '>' && size > 1};
}

void byteswap_inplace(Tensor& t) {
  const size_t es = dtype_size(t.dtype());
  auto* p = static_cast<uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) std::reverse(p + i * es, p + (i + 1) * es);
}

// Fortran-order data of shape S is, read in C order, an array of shape
// reverse(S); transposing it with the reversed axis order gives shape S.
Tensor fortran_to_c(const Tensor& f) {
  const size_t rank = f.rank();
  Tensor c = Tensor::zeros(f.dtype(), f.shape());
  if (rank < 2 || f.numel() == 0) {
    std::memcpy(c.raw(), f.raw(), f.nbytes());
    return c;
  }
  const size_t es = dtype_size(f.dtype());
  // Column-major strides (in elements) of the source for each C axis.
  std::vector<int64_t> fstride(rank);
  int64_t s = 1;
  for (size_t a = 0; a < rank; ++a) {
    fstride[a] = s;
    s *= f.shape()[a];
  }
  std::vector<int64_t> idx(rank, 0);
  const auto* src = static_cast<const uint8_t*>(f.raw());
  auto* dst = static_cast<uint8_t*>(c.raw());
  for (int64_t i = 0; i < c.numel(); ++i) {
    int64_t off = 0;
    for (size_t a = 0; a < rank; ++a) off += idx[a] * fstride[a];
    std::memcpy(dst + i * es, src + off * es, es);
    for (size_t a = rank; a-- > 0;) {
      if (++idx[a] < f.shape()[a]) break;
      idx[a] = 0;
    }
  }
  return c;
}

uint32_t read_le(const uint8_t* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string shape_literal(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

std::string_view npy_descr(DType dtype) {
  for (const auto& e : kDescrs)
    if (e.dtype == dtype) return e.descr;
  return {};
}

namespace {

// Largest header we read: NumPy writes a few hundred bytes; version 2.0 and
// 3.0 allow up to 4 GiB, which no real array needs.
constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 20;

/// What the header says: where the data starts and what it holds.
struct NpyLayout {
  ParsedDescr descr;
  std::string descr_text;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;  // what the shape and dtype need
};

/// The length of magic + version + header-length field, or an error.
Result<size_t> npy_prefix_size(std::span<const uint8_t> head, std::string_view origin) {
  if (head.size() < 10 || std::memcmp(head.data(), kMagic, 6) != 0)
    return corrupt(origin, "not a .npy file (missing the \\x93NUMPY magic)");
  const uint8_t major = head[6], minor = head[7];
  if (major < 1 || major > 3)
    return fail(ErrorCode::kUnsupported, std::string(origin) + ": .npy format version " +
                                             std::to_string(major) + "." + std::to_string(minor) +
                                             " is not supported (1.0, 2.0, 3.0 are)");
  return major == 1 ? size_t{10} : size_t{12};
}

/// Parses the header in `head` (which holds at least the prefix and the
/// header) of a file of `file_size` bytes; checks the data size exactly.
Result<NpyLayout> parse_layout(std::span<const uint8_t> head, uint64_t file_size,
                               std::string_view origin) {
  HONE_TRY(size_t prefix, npy_prefix_size(head, origin));
  if (head.size() < prefix) return corrupt(origin, "truncated .npy header");
  const uint64_t header_len = read_le(head.data() + 8, static_cast<int>(prefix - 8));
  if (header_len > kMaxHeaderBytes)
    return corrupt(origin, "the .npy header declares " + std::to_string(header_len) +
                               " bytes; more than " + std::to_string(kMaxHeaderBytes) +
                               " is not a real array header");
  if (head.size() - prefix < header_len)
    return corrupt(origin, "truncated .npy header: it declares " + std::to_string(header_len) +
                               " bytes but the file has " + std::to_string(head.size() - prefix));
  const std::string_view text(reinterpret_cast<const char*>(head.data() + prefix), header_len);
  HONE_TRY(auto header, HeaderParser(text, origin).parse());
  HONE_TRY(ParsedDescr d, parse_descr(header.descr, origin));

  // The payload size, with overflow guards, before anything is allocated.
  const size_t es = dtype_size(d.dtype);
  const uint64_t data_offset = prefix + header_len;
  const uint64_t available = file_size - data_offset;
  uint64_t need = es;
  for (int64_t dim : header.shape) {
    if (dim != 0 && need > std::numeric_limits<uint64_t>::max() / 2 / static_cast<uint64_t>(dim)) {
      need = std::numeric_limits<uint64_t>::max();
      break;
    }
    need *= static_cast<uint64_t>(dim);
  }
  if (need > available)
    return corrupt(origin,
                   "truncated .npy data: shape " + shape_to_string(header.shape) + " of " +
                       header.descr + " needs " +
                       (need == std::numeric_limits<uint64_t>::max() ? std::string("more")
                                                                     : std::to_string(need)) +
                       " bytes but only " + std::to_string(available) + " follow the header");
  if (need < available)
    return corrupt(origin, std::to_string(available - need) +
                               " unexpected bytes after the data of shape " +
                               shape_to_string(header.shape));
  return NpyLayout{d, header.descr, header.fortran_order, header.shape, data_offset, need};
}

/// Byte order, bool check and Fortran order, once the data is in `t`.
Result<Tensor> finish(Tensor t, const NpyLayout& l, std::string_view origin) {
  if (l.descr.big_endian) byteswap_inplace(t);
  if (l.descr.dtype == DType::kBool) {
    auto* p = static_cast<uint8_t*>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i)
      if (p[i] > 1)
        return corrupt(origin, "bool element " + std::to_string(i) + " is neither 0 nor 1");
  }
  if (l.fortran_order) t = fortran_to_c(t);
  return t;
}

}  // namespace

Result<Tensor> parse_npy(std::span<const uint8_t> bytes, std::string_view origin) {
  HONE_TRY(NpyLayout l, parse_layout(bytes, bytes.size(), origin));
  auto t = Tensor::allocate(l.descr.dtype, l.shape);
  if (!t) return fail(std::move(t).error().add_context("while reading " + std::string(origin)));
  if (l.data_bytes > 0) std::memcpy(t->raw(), bytes.data() + l.data_offset, l.data_bytes);
  return finish(std::move(*t), l, origin);
}

Result<Tensor> load_npy(const std::filesystem::path& path) {
  // Only a regular file, never a FIFO or a device: /dev/zero would read forever.
  HONE_TRY(RegularFile f, RegularFile::open(path));
  const std::string origin = path.string();
  // The prefix says how long the header is; the header says how many data
  // bytes there must be, and the file must have exactly those.
  std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(f.size(), 12)));
  HONE_CHECK_OK(f.read_at(0, head.data(), head.size()));
  HONE_TRY(size_t prefix, npy_prefix_size(head, origin));
  if (head.size() < prefix) return corrupt(origin, "truncated .npy header");
  const uint64_t header_len = read_le(head.data() + 8, static_cast<int>(prefix - 8));
  const uint64_t head_size =
      std::min<uint64_t>(f.size(), prefix + std::min(header_len, kMaxHeaderBytes));
  head.resize(static_cast<size_t>(head_size));
  HONE_CHECK_OK(f.read_at(0, head.data(), head.size()));
  HONE_TRY(NpyLayout l, parse_layout(head, f.size(), origin));
  auto t = Tensor::allocate(l.descr.dtype, l.shape);
  if (!t) return fail(std::move(t).error().add_context("while reading " + origin));
  if (l.data_bytes > 0) HONE_CHECK_OK(f.read_at(l.data_offset, t->raw(), l.data_bytes));
  return finish(std::move(*t), l, origin);
}

Result<std::vector<uint8_t>> serialize_npy(const Tensor& tensor) {
  if (!tensor.defined())
    return fail(ErrorCode::kInvalidArgument, "cannot save an undefined tensor as .npy");
  const std::string_view descr = npy_descr(tensor.dtype());
  if (descr.empty())
    return fail(ErrorCode::kUnsupported,
                "cannot save a " + std::string(dtype_name(tensor.dtype())) +
                    " tensor as .npy: NumPy has no " + std::string(dtype_name(tensor.dtype())) +
                    " dtype (convert to f32 first)");
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': " + shape_literal(tensor.shape()) +
                       ", }";
  // Pad so that the data starts on a 64-byte boundary; the header ends in '\n'.
  uint8_t major = 1;
  size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  if (padded - prefix > 0xffff) {
    major = 2;
    prefix = 12;
    total = prefix + header.size() + 1;
    padded = (total + 63) / 64 * 64;
  }
  header.append(padded - total, ' ');
  header.push_back('\n');
  const size_t hlen = header.size();

  std::vector<uint8_t> out;
  out.reserve(padded + tensor.nbytes());
  out.insert(out.end(), kMagic, kMagic + 6);
  out.push_back(major);
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<uint8_t>(hlen >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  const auto* data = static_cast<const uint8_t*>(tensor.raw());
  if (tensor.nbytes() > 0) out.insert(out.end(), data, data + tensor.nbytes());
  return out;
}

Result<void> save_npy(const Tensor& tensor, const std::filesystem::path& path) {
  HONE_TRY(std::vector<uint8_t> bytes, serialize_npy(tensor));
  return write_file_atomic(path, std::span<const uint8_t>(bytes));
}

}  // namespace hone
