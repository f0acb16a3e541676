// Pools: MaxPool (with Indices), AveragePool, LpPool, their Global forms, and
// MaxUnpool. Every [n, c] plane is independent and runs in parallel; inside a
// plane each output position gathers the in-bounds taps of its window.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/kernel_util.h"
#include "eval/ops_nn_internal.h"
#include "ops/attrs.h"

namespace hone::eval::nn {
namespace {

/// For every spatial dim, the input coordinate each (output index, kernel
/// index) pair reads (-1 when outside the input) and whether it lies inside
/// the padded input (for count_include_pad).
struct TapTables {
  std::vector<std::vector<int64_t>> coord;
  std::vector<std::vector<char>> in_padded;
  std::vector<int64_t> in_stride;  // row-major strides of the input plane
};

TapTables make_taps(const Window& w) {
  TapTables t;
  const size_t r = w.rank();
  t.coord.resize(r);
  t.in_padded.resize(r);
  t.in_stride.assign(r, 1);
  for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d)
    t.in_stride[d] = t.in_stride[d + 1] * w.in[d + 1];
  for (size_t d = 0; d < r; ++d) {
    t.coord[d].resize(static_cast<size_t>(w.out[d] * w.kernel[d]));
    t.in_padded[d].resize(t.coord[d].size());
    for (int64_t o = 0; o < w.out[d]; ++o)
      for (int64_t k = 0; k < w.kernel[d]; ++k) {
        const int64_t i = o * w.strides[d] + k * w.dilations[d] - w.pad_begin[d];
        const size_t at = static_cast<size_t>(o * w.kernel[d] + k);
        t.coord[d][at] = (i >= 0 && i < w.in[d]) ? i : -1;
        t.in_padded[d][at] = i >= -w.pad_begin[d] && i < w.in[d] + w.pad_end[d];
      }
  }
  return t;
}

/// Calls visit(out_offset, taps, padded_count) for every output position of
/// one plane, where taps are the in-plane offsets of the window's in-bounds
/// elements, in row-major window order.
template <class Visit>
void for_each_window(const Window& w, const TapTables& t, Visit&& visit) {
  const size_t r = w.rank();
  const int64_t out_n = product(w.out);
  std::vector<int64_t> o(r, 0);
  std::vector<int64_t> taps, next;
  taps.reserve(static_cast<size_t>(product(w.kernel)));
  next.reserve(taps.capacity());
  for (int64_t flat = 0; flat < out_n; ++flat) {
    taps.assign(1, 0);
    int64_t padded = 1;
    for (size_t d = 0; d < r; ++d) {
      next.clear();
      int64_t in_pad = 0;
      const int64_t base = o[d] * w.kernel[d];
      for (int64_t k = 0; k < w.kernel[d]; ++k) in_pad += t.in_padded[d][base + k];
      padded *= in_pad;
      for (int64_t tap : taps)
        for (int64_t k = 0; k < w.kernel[d]; ++k) {
          const int64_t c = t.coord[d][base + k];
          if (c >= 0) next.push_back(tap + c * t.in_stride[d]);
        }
      taps.swap(next);
    }
    visit(flat, taps, padded);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++o[d] < w.out[d]) break;
      o[d] = 0;
    }
  }
}

struct PoolSetup {
  Window win;
  std::vector<int64_t> out_shape;
  int64_t planes = 0;  // N * C
  int64_t in_plane = 0;
  int64_t out_plane = 0;
  ops::PoolAttrs attrs;
};

Result<PoolSetup> pool_setup(const KernelContext& ctx, const Tensor& x, const std::string& op,
                             bool allow_ceil) {
  HONE_CHECK_OK(check_nc_input(x, 3, op));
  const Node& node = ctx.node();
  HONE_TRY(const ops::PoolAttrs pa, ops::pool_attrs(node));
  const std::vector<int64_t>& kernel = pa.kernel_shape;
  if (kernel.empty())
    return fail(ErrorCode::kInvalidArgument, op + " needs the 'kernel_shape' attribute");
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  const bool ceil_mode = allow_ceil && pa.ceil_mode;
  PoolSetup s;
  s.attrs = pa;
  HONE_TRY(s.win, make_window(node, in, kernel, ceil_mode, op));
  s.out_shape = {x.dim(0), x.dim(1)};
  s.out_shape.insert(s.out_shape.end(), s.win.out.begin(), s.win.out.end());
  s.planes = x.dim(0) * x.dim(1);
  s.in_plane = product(in);
  s.out_plane = product(s.win.out);
  return s;
}

Result<void> max_pool(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(PoolSetup s, pool_setup(ctx, *x, "MaxPool", true));
  const int64_t storage_order = s.attrs.storage_order;
  if (storage_order != 0 && storage_order != 1)
    return fail(ErrorCode::kInvalidArgument,
                "MaxPool storage_order " + std::to_string(storage_order) + " must be 0 or 1");
  const TapTables taps = make_taps(s.win);
  Tensor y = Tensor::zeros(x->dtype(), s.out_shape);
  Tensor idx = Tensor::zeros(DType::kI64, s.out_shape);
  const size_t r = s.win.rank();
  std::vector<int64_t> col_stride(r, 1);
  for (size_t d = 1; d < r; ++d) col_stride[d] = col_stride[d - 1] * s.win.in[d - 1];
  HONE_CHECK_OK(dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    const T* xp = x->data<T>();
    T* yp = y.data<T>();
    int64_t* ip = idx.data<int64_t>();
    ctx.pool().parallel_for(s.planes, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* xs = xp + plane * s.in_plane;
        for_each_window(s.win, taps, [&](int64_t o, const std::vector<int64_t>& t, int64_t) {
          int64_t best = -1;
          double best_v = -std::numeric_limits<double>::infinity();
          for (int64_t off : t) {
            const double v = to_f64(xs[off]);
            if (best < 0 || v > best_v) {
              best = off;
              best_v = v;
            }
          }
          const int64_t at = plane * s.out_plane + o;
          if (best < 0) {  // a window entirely in the padding (cannot happen with valid pads)
            yp[at] = T{};
            ip[at] = -1;
            return;
          }
          yp[at] = xs[best];
          int64_t flat = best;
          if (storage_order == 1) {
            flat = 0;
            int64_t rem = best;
            for (size_t d = 0; d < r; ++d) {
              flat += (rem / taps.in_stride[d]) * col_stride[d];
              rem %= taps.in_stride[d];
            }
          }
          ip[at] = plane * s.in_plane + flat;
        });
      }
    });
    return {};
  }));
  ctx.set_output(0, std::move(y));
  if (ctx.wants_output(1)) ctx.set_output(1, std::move(idx));
  return {};
}

Result<void> average_pool(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(PoolSetup s, pool_setup(ctx, *x, "AveragePool", true));
  const bool include_pad = s.attrs.count_include_pad;
  const TapTables taps = make_taps(s.win);
  Tensor y = Tensor::zeros(x->dtype(), s.out_shape);
  HONE_CHECK_OK(dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    const T* xp = x->data<T>();
    T* yp = y.data<T>();
    ctx.pool().parallel_for(s.planes, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* xs = xp + plane * s.in_plane;
        for_each_window(s.win, taps, [&](int64_t o, const std::vector<int64_t>& t, int64_t padded) {
          double sum = 0.0;
          for (int64_t off : t) sum += to_f64(xs[off]);
          const int64_t count = include_pad ? padded : static_cast<int64_t>(t.size());
          yp[plane * s.out_plane + o] =
              from_f64<T>(count > 0 ? sum / static_cast<double>(count) : 0.0);
        });
      }
    });
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

double lp_finish(double sum, double p) {
  return p == 1.0 ? sum : std::pow(sum, 1.0 / p);
}
double lp_term(double v, double p) {
  return p == 2.0 ? v * v : std::pow(std::abs(v), p);
}

Result<void> lp_pool(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(PoolSetup s, pool_setup(ctx, *x, "LpPool", true));
  const double p = static_cast<double>(s.attrs.p);
  if (p <= 0) return fail(ErrorCode::kInvalidArgument, "LpPool p must be positive");
  const TapTables taps = make_taps(s.win);
  Tensor y = Tensor::zeros(x->dtype(), s.out_shape);
  HONE_CHECK_OK(dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    const T* xp = x->data<T>();
    T* yp = y.data<T>();
    ctx.pool().parallel_for(s.planes, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* xs = xp + plane * s.in_plane;
        for_each_window(s.win, taps, [&](int64_t o, const std::vector<int64_t>& t, int64_t) {
          double sum = 0.0;
          for (int64_t off : t) sum += lp_term(to_f64(xs[off]), p);
          yp[plane * s.out_plane + o] = from_f64<T>(lp_finish(sum, p));
        });
      }
    });
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

enum class GlobalKind { kAverage, kMax, kLp };

Result<void> global_pool(KernelContext& ctx, GlobalKind kind, const std::string& op) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_CHECK_OK(check_nc_input(*x, 2, op));
  std::vector<int64_t> out_shape = x->shape();
  for (size_t d = 2; d < out_shape.size(); ++d) out_shape[d] = 1;
  const int64_t planes = x->dim(0) * x->dim(1);
  const int64_t plane = product(x->shape(), 2);
  HONE_TRY(const ops::PoolAttrs pa, ops::pool_attrs(ctx.node()));
  const double p = static_cast<double>(pa.p);
  Tensor y = Tensor::zeros(x->dtype(), out_shape);
  auto body = [&]<class T>() -> Result<void> {
    const T* xp = x->data<T>();
    T* yp = y.data<T>();
    ctx.pool().parallel_for(planes, [&](int64_t begin, int64_t end) {
      for (int64_t pl = begin; pl < end; ++pl) {
        const T* xs = xp + pl * plane;
        if (kind == GlobalKind::kMax) {
          if (plane == 0) continue;
          int64_t best = 0;
          for (int64_t i = 1; i < plane; ++i)
            if (to_f64(xs[i]) > to_f64(xs[best])) best = i;
          yp[pl] = xs[best];
          continue;
        }
        double sum = 0.0;
        for (int64_t i = 0; i < plane; ++i)
          sum += kind == GlobalKind::kLp ? lp_term(to_f64(xs[i]), p) : to_f64(xs[i]);
        yp[pl] = from_f64<T>(kind == GlobalKind::kLp
                                 ? lp_finish(sum, p)
                                 : (plane > 0 ? sum / static_cast<double>(plane) : 0.0));
      }
    });
    return {};
  };
  if (kind == GlobalKind::kMax)
    HONE_CHECK_OK(dispatch_numeric(x->dtype(), body));
  else
    HONE_CHECK_OK(dispatch_float(x->dtype(), body));
  ctx.set_output(0, std::move(y));
  return {};
}

Result<void> max_unpool(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  HONE_TRY(const Tensor* ind, ctx.tensor(1));
  HONE_CHECK_OK(check_nc_input(*x, 3, "MaxUnpool"));
  if (ind->shape() != x->shape() || !is_integer(ind->dtype()))
    return fail(ErrorCode::kInvalidArgument, "MaxUnpool indices I " + ind->describe() +
                                                 " must be an integer tensor shaped like X " +
                                                 x->describe());
  const Node& node = ctx.node();
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  const size_t r = x->rank() - 2;
  if (kernel.size() != r)
    return fail(ErrorCode::kInvalidArgument, "MaxUnpool kernel_shape " + list_to_string(kernel) +
                                                 " must have one value per spatial dim");
  std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (strides.size() != r || pads.size() != 2 * r)
    return fail(ErrorCode::kInvalidArgument, "MaxUnpool strides " + list_to_string(strides) +
                                                 " / pads " + list_to_string(pads) +
                                                 " do not match the spatial rank");
  std::vector<int64_t> out_shape{x->dim(0), x->dim(1)};
  if (ctx.has_input(2)) {
    HONE_TRY(out_shape, read_int_list(ctx.input(2), "MaxUnpool output_shape"));
    if (out_shape.size() != x->rank())
      return fail(ErrorCode::kInvalidArgument, "MaxUnpool output_shape " +
                                                   list_to_string(out_shape) + " must have rank " +
                                                   std::to_string(x->rank()));
  } else {
    for (size_t d = 0; d < r; ++d)
      out_shape.push_back((x->dim(d + 2) - 1) * strides[d] + kernel[d] - pads[d] - pads[d + r]);
  }
  HONE_TRY(Tensor y, Tensor::allocate(x->dtype(), out_shape));
  const std::vector<int64_t> index = to_int64s(*ind);
  HONE_CHECK_OK(dispatch_numeric(x->dtype(), [&]<class T>() -> Result<void> {
    const T* xp = x->data<T>();
    T* yp = y.data<T>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      if (index[i] < 0 || index[i] >= y.numel())
        return fail(ErrorCode::kInvalidArgument,
                    "MaxUnpool index " + std::to_string(index[i]) + " at position " +
                        std::to_string(i) + " is outside the output " + shape_to_string(out_shape));
      yp[index[i]] = xp[i];
    }
    return {};
  }));
  ctx.set_output(0, std::move(y));
  return {};
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  r.add("MaxPool", max_pool);
  r.add("AveragePool", average_pool);
  r.add("LpPool", lp_pool);
  r.add("GlobalAveragePool",
        [](KernelContext& c) { return global_pool(c, GlobalKind::kAverage, "GlobalAveragePool"); });
  r.add("GlobalMaxPool",
        [](KernelContext& c) { return global_pool(c, GlobalKind::kMax, "GlobalMaxPool"); });
  r.add("GlobalLpPool",
        [](KernelContext& c) { return global_pool(c, GlobalKind::kLp, "GlobalLpPool"); });
  r.add("MaxUnpool", max_unpool);
}

}  // namespace hone::eval::nn
