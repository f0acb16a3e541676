// Reference kernels that write updates into a copy of the data:
// ScatterElements (and the deprecated Scatter), ScatterND, with the
// none/add/mul/max/min reductions; and TensorScatter (opset 24), the KV
// cache update.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "eval/kernel_util.h"
#include "eval/ops_shape_internal.h"
#include "hone/shape.h"
#include "ops/attrs.h"

namespace hone::eval {
namespace {

using namespace shape_detail;

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> read_reduction(const KernelContext& ctx) {
  HONE_TRY(const std::string r, ops::scatter_reduction(ctx.node()));
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return Reduction::kNone;
}

template <class T>
T combine(Reduction red, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (red) {
      case Reduction::kAdd:
      case Reduction::kMax:
        return a || b;
      case Reduction::kMul:
      case Reduction::kMin:
        return a && b;
      default:
        return b;
    }
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wrap on overflow instead of UB
    switch (red) {
      case Reduction::kAdd:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case Reduction::kMul:
        return static_cast<T>(static_cast<uint64_t>(static_cast<U>(a)) * static_cast<U>(b));
      case Reduction::kMax:
        return std::max(a, b);
      case Reduction::kMin:
        return std::min(a, b);
      default:
        return b;
    }
  } else {
    const double x = to_f64(a), y = to_f64(b);
    switch (red) {
      case Reduction::kAdd:
        return from_f64<T>(x + y);
      case Reduction::kMul:
        return from_f64<T>(x * y);
      case Reduction::kMax:
        return from_f64<T>(std::max(x, y));
      case Reduction::kMin:
        return from_f64<T>(std::min(x, y));
      default:
        return b;
    }
  }
}

Result<void> scatter_elements(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* idx_t, ctx.tensor(1));
  HONE_TRY(const Tensor* upd, ctx.tensor(2));
  HONE_TRY(Reduction red, read_reduction(ctx));
  const std::string& op = ctx.node().op_type;
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0 || idx_t->rank() != x->rank() || upd->shape() != idx_t->shape() ||
      upd->dtype() != x->dtype())
    return fail(ErrorCode::kInvalidArgument,
                op +
                    " needs data of rank >= 1, indices of the same rank and updates of the "
                    "indices' shape and data's dtype; got data " +
                    x->describe() + ", indices " + idx_t->describe() + ", updates " +
                    upd->describe());
  if (!is_integer(idx_t->dtype()))
    return fail(ErrorCode::kInvalidArgument,
                op + " indices must be integers, got " + idx_t->describe());
  HONE_TRY(int64_t axis, normalize_axis(ops::axis_attr(ctx.node()), rank, "axis"));
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && idx_t->dim(a) > x->dim(a))
      return fail(ErrorCode::kInvalidArgument, op + " indices " + idx_t->describe() +
                                                   " are larger than data " + x->describe() +
                                                   " on axis " + std::to_string(a));
  const std::vector<int64_t> idx = to_int64s(*idx_t);
  const std::vector<int64_t> ds = strides_of(x->shape());
  const std::vector<int64_t>& ishape = idx_t->shape();
  const int64_t dim = x->dim(axis);
  // Resolve every target offset first so a bad index leaves nothing half done.
  std::vector<int64_t> targets(idx.size());
  std::vector<int64_t> pos(rank, 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    HONE_TRY(int64_t k, normalize_index(idx[i], dim, "index"));
    int64_t off = 0;
    for (int64_t a = 0; a < rank; ++a) off += (a == axis ? k : pos[a]) * ds[a];
    targets[i] = off;
    for (int64_t a = rank - 1; a >= 0; --a) {
      if (++pos[a] < ishape[a]) break;
      pos[a] = 0;
    }
  }
  Tensor y = x->clone();
  HONE_CHECK_OK(dispatch_all(x->dtype(), [&]<class T>() -> Result<void> {
    T* out = y.data<T>();
    const T* u = upd->data<T>();
    for (size_t i = 0; i < targets.size(); ++i)
      out[targets[i]] = red == Reduction::kNone ? u[i] : combine(red, out[targets[i]], u[i]);
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> scatter_nd(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* idx_t, ctx.tensor(1));
  HONE_TRY(const Tensor* upd, ctx.tensor(2));
  HONE_TRY(Reduction red, read_reduction(ctx));
  const int64_t r = static_cast<int64_t>(x->rank());
  const int64_t q = static_cast<int64_t>(idx_t->rank());
  if (r < 1 || q < 1 || !is_integer(idx_t->dtype()) || upd->dtype() != x->dtype())
    return fail(ErrorCode::kInvalidArgument,
                "ScatterND needs data and integer indices of rank >= 1 and updates of data's "
                "dtype; got data " +
                    x->describe() + ", indices " + idx_t->describe() + ", updates " +
                    upd->describe());
  const int64_t k = idx_t->dim(q - 1);
  if (k > r)
    return fail(ErrorCode::kInvalidArgument, "ScatterND indices " + idx_t->describe() +
                                                 " have a last dim larger than the rank of data " +
                                                 x->describe());
  std::vector<int64_t> want(idx_t->shape().begin(), idx_t->shape().end() - 1);
  want.insert(want.end(), x->shape().begin() + k, x->shape().end());
  if (upd->shape() != want)
    return fail(ErrorCode::kInvalidArgument, "ScatterND updates " + upd->describe() +
                                                 " must have shape " + shape_to_string(want));
  const std::vector<int64_t> idx = to_int64s(*idx_t);
  const std::vector<int64_t> ds = strides_of(x->shape());
  int64_t slice = 1;
  for (int64_t a = k; a < r; ++a) slice *= x->dim(a);
  const int64_t tuples =
      shape_numel(std::vector<int64_t>(idx_t->shape().begin(), idx_t->shape().end() - 1));
  std::vector<int64_t> targets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      HONE_TRY(int64_t v, normalize_index(idx[t * k + j], x->dim(j), "ScatterND index"));
      off += v * ds[j];
    }
    targets[t] = off;
  }
  Tensor y = x->clone();
  HONE_CHECK_OK(dispatch_all(x->dtype(), [&]<class T>() -> Result<void> {
    T* out = y.data<T>();
    const T* u = upd->data<T>();
    for (int64_t t = 0; t < tuples; ++t) {
      T* dst = out + targets[t];
      const T* src = u + t * slice;
      for (int64_t e = 0; e < slice; ++e)
        dst[e] = red == Reduction::kNone ? src[e] : combine(red, dst[e], src[e]);
    }
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

/// TensorScatter-24: writes `update` into a copy of `past_cache` along `axis`
/// (the sequence axis), starting at write_indices[b] for batch b; 'circular'
/// mode wraps the positions around the cache length.
Result<void> tensor_scatter(KernelContext& ctx) {
  HONE_TRY(const Tensor* cache, ctx.tensor(0));
  HONE_TRY(const Tensor* upd, ctx.tensor(1));
  const Node& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(cache->rank());
  const std::string mode = node.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return fail(ErrorCode::kInvalidArgument,
                "TensorScatter mode must be 'linear' or 'circular', got '" + mode + "'");
  if (rank < 2 || upd->rank() != cache->rank() || upd->dtype() != cache->dtype())
    return fail(
        ErrorCode::kInvalidArgument,
        "TensorScatter needs past_cache of rank >= 2 and update of its rank and type, got " +
            cache->describe() + " and " + upd->describe());
  HONE_TRY(const int64_t axis, normalize_axis(ops::axis_attr(node), rank, "TensorScatter axis"));
  if (axis == 0)
    return fail(ErrorCode::kInvalidArgument, "TensorScatter axis cannot be the batch axis 0");
  for (int64_t a = 0; a < rank; ++a)
    if (a == axis ? upd->dim(a) > cache->dim(a) : upd->dim(a) != cache->dim(a))
      return fail(ErrorCode::kInvalidArgument, "TensorScatter update " + upd->describe() +
                                                   " does not fit past_cache " + cache->describe() +
                                                   " (axis " + std::to_string(axis) + ")");
  const int64_t batch = cache->dim(0), max_len = cache->dim(axis), len = upd->dim(axis);
  std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
  if (ctx.has_input(2)) {
    HONE_TRY(starts, read_int_list(ctx.input(2), "TensorScatter write_indices"));
    if (static_cast<int64_t>(starts.size()) != batch)
      return fail(ErrorCode::kInvalidArgument, "TensorScatter write_indices " +
                                                   ctx.input(2).describe() + " must have " +
                                                   std::to_string(batch) + " (batch) values");
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t s = starts[static_cast<size_t>(b)];
    if (s < 0 || (mode == "linear" && s + len > max_len))
      return fail(ErrorCode::kInvalidArgument,
                  "TensorScatter write index " + std::to_string(s) + " of batch " +
                      std::to_string(b) + " puts " + std::to_string(len) +
                      " rows outside the cache's " + std::to_string(max_len) + " (linear mode)");
  }
  // Both tensors as [outer, len, inner] bytes; outer spans batch and the dims before axis.
  const size_t elem = dtype_size(cache->dtype());
  int64_t per_batch = 1, inner = 1;
  for (int64_t a = 1; a < axis; ++a) per_batch *= cache->dim(a);
  for (int64_t a = axis + 1; a < rank; ++a) inner *= cache->dim(a);
  Tensor y = cache->clone();
  auto* out = static_cast<unsigned char*>(y.raw());
  const auto* in = static_cast<const unsigned char*>(upd->raw());
  const size_t row = static_cast<size_t>(inner) * elem;
  for (int64_t o = 0; o < batch * per_batch; ++o) {
    const int64_t start = starts[static_cast<size_t>(o / per_batch)];
    for (int64_t j = 0; j < len; ++j) {
      const int64_t at = (start + j) % max_len;
      std::memcpy(out + static_cast<size_t>(o * max_len + at) * row,
                  in + static_cast<size_t>(o * len + j) * row, row);
    }
  }
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_shape_scatter_ops(OpRegistry& r) {
  r.add("ScatterElements", scatter_elements);
  r.add("Scatter", scatter_elements);
  r.add("ScatterND", scatter_nd);
  r.add("TensorScatter", tensor_scatter);
}

}  // namespace hone::eval
