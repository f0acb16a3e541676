// Reference linear algebra: Gemm, MatMul, Det. Einsum, the quantized
// matmuls and the signal ops live in ops_linalg_<part>.cpp.
#include "eval/ops.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "eval/kernel_util.h"
#include "eval/ops_linalg_internal.h"
#include "hone/shape.h"
#include "ops/attrs.h"

namespace hone::eval {

Result<MatMulPlan> plan_matmul(const std::vector<int64_t>& a_shape,
                               const std::vector<int64_t>& b_shape) {
  if (a_shape.empty() || b_shape.empty())
    return fail(ErrorCode::kInvalidArgument, "MatMul operands must have rank >= 1, got " +
                                                 shape_to_string(a_shape) + " and " +
                                                 shape_to_string(b_shape));
  MatMulPlan p;
  p.a_full_shape = a_shape;
  p.b_full_shape = b_shape;
  const bool a_vec = a_shape.size() == 1, b_vec = b_shape.size() == 1;
  if (a_vec) p.a_full_shape.insert(p.a_full_shape.begin(), 1);
  if (b_vec) p.b_full_shape.push_back(1);
  const size_t ra = p.a_full_shape.size(), rb = p.b_full_shape.size();
  p.M = p.a_full_shape[ra - 2];
  p.K = p.a_full_shape[ra - 1];
  p.N = p.b_full_shape[rb - 1];
  if (p.b_full_shape[rb - 2] != p.K)
    return fail(ErrorCode::kInvalidArgument,
                "MatMul inner dimensions differ: " + shape_to_string(a_shape) + " x " +
                    shape_to_string(b_shape) + " (" + std::to_string(p.K) + " vs " +
                    std::to_string(p.b_full_shape[rb - 2]) + ")");
  const std::vector<int64_t> a_batch(p.a_full_shape.begin(), p.a_full_shape.end() - 2);
  const std::vector<int64_t> b_batch(p.b_full_shape.begin(), p.b_full_shape.end() - 2);
  HONE_TRY(std::vector<int64_t> batch, broadcast_shapes({a_batch, b_batch}));
  p.batch = shape_numel(batch);
  const std::vector<int64_t> a_map = broadcast_index_map(a_batch, batch);
  const std::vector<int64_t> b_map = broadcast_index_map(b_batch, batch);
  p.a_off.resize(a_map.size());
  p.b_off.resize(b_map.size());
  for (size_t i = 0; i < a_map.size(); ++i) p.a_off[i] = a_map[i] * p.M * p.K;
  for (size_t i = 0; i < b_map.size(); ++i) p.b_off[i] = b_map[i] * p.K * p.N;
  p.out_full_shape = batch;
  p.out_full_shape.push_back(p.M);
  p.out_full_shape.push_back(p.N);
  p.out_shape = batch;
  if (!a_vec) p.out_shape.push_back(p.M);
  if (!b_vec) p.out_shape.push_back(p.N);
  return p;
}

namespace {

bool is_matmul_dtype(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kF64:
    case DType::kF16:
    case DType::kBF16:
    case DType::kI32:
    case DType::kI64:
    case DType::kU32:
    case DType::kU64:
      return true;
    default:
      return false;
  }
}

Result<void> matmul(KernelContext& ctx) {
  HONE_TRY(const Tensor* a, ctx.tensor(0));
  HONE_TRY(const Tensor* b, ctx.tensor(1));
  if (a->dtype() != b->dtype())
    return fail(ErrorCode::kInvalidArgument, "MatMul operands have different dtypes: " +
                                                 a->describe() + " and " + b->describe());
  if (!is_matmul_dtype(a->dtype()))
    return fail(ErrorCode::kUnsupported,
                "MatMul does not support dtype " + std::string(dtype_name(a->dtype())));
  HONE_TRY(MatMulPlan p, plan_matmul(a->shape(), b->shape()));
  Tensor out = Tensor::zeros(a->dtype(), p.out_shape);
  HONE_CHECK_OK(dispatch_numeric(a->dtype(), [&]<class T>() -> Result<void> {
    using Acc = AccOf<T>;
    ThreadPool& pool = ctx.pool();
    if constexpr (std::is_same_v<T, Acc>) {  // f64 (the truth's run): no copies
      matmul_batched<Acc>(pool, p.batch, p.M, p.K, p.N, p.a_off, p.b_off, a->data<T>(),
                          b->data<T>(), out.data<T>());
    } else {
      const HostVector<Acc> av = load_acc_as<Acc, T>(pool, *a), bv = load_acc_as<Acc, T>(pool, *b);
      HostVector<Acc> cv(static_cast<size_t>(out.numel()));
      matmul_batched<Acc>(pool, p.batch, p.M, p.K, p.N, p.a_off, p.b_off, av.data(), bv.data(),
                          cv.data());
      T* o = out.data<T>();
      pool.parallel_for(
          out.numel(),
          [&](int64_t b0, int64_t e0) {
            for (int64_t i = b0; i < e0; ++i) o[i] = from_acc<T>(cv[static_cast<size_t>(i)]);
          },
          int64_t{1} << 16);
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

// A (or Aᵀ) of Gemm as a contiguous rows × cols accumulator matrix.
template <class Acc, class T>
HostVector<Acc> load_matrix(ThreadPool& pool, const Tensor& t, bool transpose) {
  const int64_t r = t.dim(0), c = t.dim(1);
  if (!transpose) return load_acc_as<Acc, T>(pool, t);
  const T* p = t.data<T>();
  HostVector<Acc> out(static_cast<size_t>(r * c));  // c × r
  pool.parallel_for(
      c,
      [&](int64_t j0, int64_t j1) {
        for (int64_t i = 0; i < r; ++i)
          for (int64_t j = j0; j < j1; ++j)
            out[static_cast<size_t>(j * r + i)] = to_acc<Acc>(p[i * c + j]);
      },
      std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(r, 1)));
  return out;
}

Result<void> gemm(KernelContext& ctx) {
  HONE_TRY(const Tensor* a, ctx.tensor(0));
  HONE_TRY(const Tensor* b, ctx.tensor(1));
  const Tensor* c = nullptr;
  if (ctx.has_input(2)) {
    HONE_TRY(c, ctx.tensor(2));
  }
  const Node& n = ctx.node();
  HONE_TRY(const ops::GemmAttrs ga, ops::gemm_attrs(n));
  const bool trans_a = ga.trans_a, trans_b = ga.trans_b;
  const double alpha = ga.alpha, beta = ga.beta;
  if (a->rank() != 2 || b->rank() != 2)
    return fail(ErrorCode::kInvalidArgument,
                "Gemm needs 2-D A and B, got " + a->describe() + " and " + b->describe());
  if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype()))
    return fail(ErrorCode::kInvalidArgument, "Gemm inputs have different dtypes: " + a->describe() +
                                                 ", " + b->describe() +
                                                 (c ? ", " + c->describe() : std::string()));
  if (!is_matmul_dtype(a->dtype()))
    return fail(ErrorCode::kUnsupported,
                "Gemm does not support dtype " + std::string(dtype_name(a->dtype())));
  const int64_t M = trans_a ? a->dim(1) : a->dim(0), K = trans_a ? a->dim(0) : a->dim(1);
  const int64_t KB = trans_b ? b->dim(1) : b->dim(0), N = trans_b ? b->dim(0) : b->dim(1);
  if (K != KB)
    return fail(ErrorCode::kInvalidArgument, "Gemm inner dimensions differ: A " + a->describe() +
                                                 (trans_a ? " (transposed)" : "") + " and B " +
                                                 b->describe() + (trans_b ? " (transposed)" : ""));
  std::vector<int64_t> c_strides;  // strides of C broadcast to [M, N]
  if (c) {
    if (c->rank() > 2)
      return fail(ErrorCode::kInvalidArgument, "Gemm C must have rank <= 2, got " + c->describe());
    const bool exact = c->rank() == 2 && c->dim(0) == M && c->dim(1) == N;
    if (ctx.opset() < 7 && n.attr_int("broadcast", 0) == 0 && !exact)
      return fail(ErrorCode::kInvalidArgument, "Gemm C " + c->describe() + " must be [" +
                                                   std::to_string(M) + "," + std::to_string(N) +
                                                   "] when broadcast=0");
    const std::vector<int64_t> mn{M, N};
    auto bshape = broadcast_shapes({c->shape(), mn});
    if (!bshape || *bshape != mn)
      return fail(ErrorCode::kInvalidArgument, "Gemm C " + c->describe() +
                                                   " cannot be broadcast to [" + std::to_string(M) +
                                                   "," + std::to_string(N) + "]");
    c_strides = broadcast_strides(c->shape(), mn);
  }
  Tensor out = Tensor::zeros(a->dtype(), {M, N});
  HONE_CHECK_OK(dispatch_numeric(a->dtype(), [&]<class T>() -> Result<void> {
    using Acc = AccOf<T>;
    ThreadPool& pool = ctx.pool();
    const HostVector<Acc> av = load_matrix<Acc, T>(pool, *a, trans_a);
    const HostVector<Acc> bv = load_matrix<Acc, T>(pool, *b, trans_b);
    HostVector<Acc> acc(static_cast<size_t>(M * N));
    const std::vector<int64_t> zero{0};
    matmul_batched<Acc>(pool, 1, M, K, N, zero, zero, av.data(), bv.data(), acc.data());
    const T* cp = c ? c->data<T>() : nullptr;
    T* o = out.data<T>();
    pool.parallel_for(
        M,
        [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) {
            for (int64_t j = 0; j < N; ++j) {
              const Acc v = acc[static_cast<size_t>(i * N + j)];
              if constexpr (std::is_same_v<Acc, double>) {
                double y = alpha * v;
                if (cp) y += beta * to_f64(cp[i * c_strides[0] + j * c_strides[1]]);
                o[i * N + j] = from_f64<T>(y);
              } else if (alpha == 1.0 && beta == 1.0) {  // exact integer path
                Acc y = v;
                if (cp) y += to_acc<Acc>(cp[i * c_strides[0] + j * c_strides[1]]);
                o[i * N + j] = static_cast<T>(y);
              } else {
                const double vd = std::is_signed_v<T> ? static_cast<double>(static_cast<int64_t>(v))
                                                      : static_cast<double>(v);
                double y = alpha * vd;
                if (cp) y += beta * to_f64(cp[i * c_strides[0] + j * c_strides[1]]);
                o[i * N + j] = from_f64<T>(y);
              }
            }
          }
        },
        std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(N, 1)));
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

// Determinant by LU decomposition with partial pivoting, in double.
double determinant(std::vector<double>& m, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t piv = col;
    for (int64_t r = col + 1; r < n; ++r)
      if (std::fabs(m[r * n + col]) > std::fabs(m[piv * n + col])) piv = r;
    if (m[piv * n + col] == 0.0) return 0.0;
    if (piv != col) {
      for (int64_t j = 0; j < n; ++j) std::swap(m[col * n + j], m[piv * n + j]);
      det = -det;
    }
    const double d = m[col * n + col];
    det *= d;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = m[r * n + col] / d;
      if (f == 0.0) continue;
      for (int64_t j = col; j < n; ++j) m[r * n + j] -= f * m[col * n + j];
    }
  }
  return det;
}

Result<void> det(KernelContext& ctx) {
  HONE_TRY(const Tensor* x, ctx.tensor(0));
  const size_t r = x->rank();
  if (r < 2 || x->dim(r - 1) != x->dim(r - 2))
    return fail(ErrorCode::kInvalidArgument, "Det needs a [..., M, M] input, got " + x->describe());
  const int64_t n = x->dim(r - 1);
  std::vector<int64_t> out_shape(x->shape().begin(), x->shape().end() - 2);
  Tensor out = Tensor::zeros(x->dtype(), out_shape);
  HONE_CHECK_OK(dispatch_float(x->dtype(), [&]<class T>() -> Result<void> {
    const T* p = x->data<T>();
    T* o = out.data<T>();
    std::vector<double> m(static_cast<size_t>(n * n));
    for (int64_t b = 0; b < out.numel(); ++b) {
      for (int64_t i = 0; i < n * n; ++i) m[static_cast<size_t>(i)] = to_f64(p[b * n * n + i]);
      o[b] = from_f64<T>(determinant(m, n));
    }
    return {};
  }));
  ctx.set_output(0, std::move(out));
  return {};
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  r.add("MatMul", matmul);
  r.add("Gemm", gemm);
  r.add("Det", det);
  register_linalg_einsum_ops(r);
  register_linalg_quant_ops(r);
  register_linalg_signal_ops(r);
}

}  // namespace hone::eval
