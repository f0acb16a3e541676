// Shape, layout and indexing reference kernels: registration, and the helpers
// the ops_shape_*.cpp parts share (declared in ops_shape_internal.h).
#include "eval/ops.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "hone/thread_pool.h"

#include "eval/kernel_util.h"
#include "eval/ops_shape_internal.h"

namespace hone::eval {

void register_shape_ops(OpRegistry& r) {
  register_shape_basic_ops(r);
  register_shape_index_ops(r);
  register_shape_scatter_ops(r);
  register_shape_layout_ops(r);
  register_shape_misc_ops(r);
}

namespace shape_detail {

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

Result<std::vector<int64_t>> input_ints(const KernelContext& ctx, size_t i, const char* what) {
  HONE_TRY(const Tensor* t, ctx.tensor(i));
  return read_int_list(*t, what);
}

Result<int64_t> input_scalar_int(const KernelContext& ctx, size_t i, const char* what) {
  HONE_TRY(const Tensor* t, ctx.tensor(i));
  if (!is_integer(t->dtype()) || t->numel() != 1)
    return fail(ErrorCode::kInvalidArgument,
                std::string(what) + " must be a scalar integer tensor, got " + t->describe());
  return tensor_element_as_int64(*t, 0);
}

Result<int64_t> normalize_index(int64_t index, int64_t dim, const char* what) {
  if (index < -dim || index >= dim)
    return fail(ErrorCode::kInvalidArgument, std::string(what) + " " + std::to_string(index) +
                                                 " is out of range for a dim of size " +
                                                 std::to_string(dim));
  return index < 0 ? index + dim : index;
}

namespace {

constexpr size_t kParallelBytes = size_t{1} << 20;  // smaller copies stay on one thread

/// Rows [o0, o1) of the strided copy: row o is out's o-th run of the last dim.
template <class E>
void strided_rows(const E* in, int64_t base, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& shape, E* out, int64_t o0, int64_t o1) {
  const size_t rank = shape.size();
  const int64_t inner = shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t off = base;
  for (int64_t rem = o0, a = static_cast<int64_t>(rank) - 2; a >= 0; --a) {
    idx[a] = rem % shape[a];
    rem /= shape[a];
    off += idx[a] * strides[a];
  }
  out += o0 * inner;
  for (int64_t o = o0; o < o1; ++o) {
    const E* src = in + off;
    if (inner_stride == 1) {
      std::memcpy(out, src, static_cast<size_t>(inner) * sizeof(E));
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = src[i * inner_stride];
    }
    out += inner;
    for (int64_t a = static_cast<int64_t>(rank) - 2; a >= 0; --a) {
      if (++idx[a] < shape[a]) {
        off += strides[a];
        break;
      }
      off -= strides[a] * (shape[a] - 1);
      idx[a] = 0;
    }
  }
}

template <class E>
void strided_copy_typed(const E* in, int64_t base, const std::vector<int64_t>& strides,
                        const std::vector<int64_t>& shape, E* out) {
  const size_t rank = shape.size();
  if (rank == 0) {
    out[0] = in[base];
    return;
  }
  int64_t outer = 1;
  for (size_t a = 0; a + 1 < rank; ++a) outer *= shape[a];
  const int64_t inner = shape[rank - 1];
  if (static_cast<size_t>(outer * inner) * sizeof(E) < kParallelBytes) {
    strided_rows(in, base, strides, shape, out, 0, outer);
    return;
  }
  // Rows of at least 64 KiB a chunk: large copies (a Transpose of vit's
  // activations at batch 32 is 39 MB in f64) go on every thread.
  const int64_t grain = std::max<int64_t>(
      1, static_cast<int64_t>((size_t{64} << 10) / sizeof(E)) / std::max<int64_t>(inner, 1));
  ThreadPool::global().parallel_for(
      outer, [&](int64_t o0, int64_t o1) { strided_rows(in, base, strides, shape, out, o0, o1); },
      grain);
}

struct Bytes16 {
  unsigned char b[16];
};

}  // namespace

void strided_copy(const Tensor& in, int64_t base, const std::vector<int64_t>& in_strides,
                  Tensor& out) {
  if (out.numel() == 0) return;
  const std::vector<int64_t>& shape = out.shape();
  switch (dtype_size(in.dtype())) {
    case 1:
      strided_copy_typed(in.data<uint8_t>(), base, in_strides, shape, out.data<uint8_t>());
      break;
    case 2:
      strided_copy_typed(in.data<uint16_t>(), base, in_strides, shape, out.data<uint16_t>());
      break;
    case 4:
      strided_copy_typed(in.data<uint32_t>(), base, in_strides, shape, out.data<uint32_t>());
      break;
    case 8:
      strided_copy_typed(in.data<uint64_t>(), base, in_strides, shape, out.data<uint64_t>());
      break;
    default:
      strided_copy_typed(in.data<Bytes16>(), base, in_strides, shape, out.data<Bytes16>());
      break;
  }
}

void copy_elements(const void* src, int64_t src_off, void* dst, int64_t dst_off, int64_t count,
                   size_t es) {
  if (count <= 0) return;
  copy_bytes(static_cast<char*>(dst) + static_cast<size_t>(dst_off) * es,
             static_cast<const char*>(src) + static_cast<size_t>(src_off) * es,
             static_cast<size_t>(count) * es);
}

void copy_bytes(void* dst, const void* src, size_t bytes) {
  if (bytes < kParallelBytes) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  constexpr size_t kChunk = size_t{256} << 10;
  const auto chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  ThreadPool::global().parallel_for(chunks, [&](int64_t c0, int64_t c1) {
    const size_t b = static_cast<size_t>(c0) * kChunk;
    const size_t e = std::min(bytes, static_cast<size_t>(c1) * kChunk);
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  });
}

}  // namespace shape_detail
}  // namespace hone::eval
