// MatMul as SGEMM calls over strided operands: one call when every batch
// shares B (batch folded into M), otherwise one per broadcast batch index,
// with each operand's batch offset, transposition flag and leading dimension
// taken from its strides, so folded Transposes cost nothing (gemm_fold.h).
#include <algorithm>

#include "backends/aot/emitter.h"
#include "backends/aot/gemm_fold.h"

namespace hone::aot {
namespace {

bool contiguous(const Strided& s) {
  for (size_t i = 0; i < s.dims.size(); ++i)
    if (!(s.strides[i] == product(s.dims, i + 1, s.dims.size()))) return false;
  return true;
}

struct Layout {
  bool trans = false;
  DimExpr ld;
};

/// How SGEMM reads the [rows x cols] matrices of `s`: row-major with a row
/// stride, or transposed (column-major) with a column stride. The folds only
/// make views where one of the two axes has unit stride.
Layout layout_of(const Strided& s, const DimExpr& rows, const DimExpr& cols) {
  const size_t r = s.dims.size();
  if (is_one(s.strides[r - 1])) return {false, is_one(rows) ? cols : s.strides[r - 2]};
  return {true, s.strides[r - 1]};
}

}  // namespace

void Emitter::emit_matmul(const Step& st, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const Strided a = matmul_operand(p_, ops[0], false), b = matmul_operand(p_, ops[1], true);
  const size_t ra = a.dims.size(), rb = b.dims.size();
  const DimExpr M = a.dims[ra - 2], K = a.dims[ra - 1], N = b.dims[rb - 1];
  // Batch dims of the product: the operands' batch dims, broadcast.
  const size_t nbatch = std::max(ra, rb) - 2;
  auto batch_dim = [&](const Strided& s, size_t i) {
    const size_t own = s.dims.size() - 2;
    return i + own < nbatch ? DimExpr(1) : s.dims[i + own - nbatch];
  };
  DimExprs od;
  for (size_t i = 0; i < nbatch; ++i) {
    const DimExpr da = batch_dim(a, i);
    od.push_back(is_one(da) ? batch_dim(b, i) : da);
  }
  const DimExprs ob = od;
  od.push_back(M);
  od.push_back(N);
  const Strided o = matmul_result(p_, st, od);
  const GemmScale scale = gemm_scale(p_, st);
  const Layout la = layout_of(a, M, K), lb = layout_of(b, K, N);
  const DimExpr ldc = is_one(M) ? N : o.strides[o.dims.size() - 2];
  line("const float* A = " + ptr(a.storage) + ";");
  line("const float* Bm = " + ptr(b.storage) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t M = " + dim(M) + ", N = " + dim(N) + ", K = " + dim(K) + ";");
  const std::string alpha = float_literal(scale.alpha);
  const bool bias = scale.bias != kNoValue;
  const std::string beta = bias ? "1.0f" : "0.0f";
  if (bias) line("const float* Bias = " + ptr(scale.bias) + ";");
  const std::string flags = std::string(la.trans ? "1" : "0") + ", " + (lb.trans ? "1" : "0");
  bool b_shared = true;
  for (size_t i = 0; i + 2 < rb; ++i) b_shared = b_shared && is_one(b.dims[i]);
  if (b_shared && contiguous(a) && contiguous(o)) {
    // One B for every batch: fold A's batch dims into M, one GEMM.
    line("const int64_t rows = " + dim(product(a.dims, 0, ra - 2)) + " * M;");
    if (bias)
      line("for (int64_t r = 0; r < rows; ++r) memcpy(Y + r * N, Bias, sizeof(float) * N);");
    line("SGEMM(0, " + std::string(lb.trans ? "1" : "0") + ", (int)rows, (int)N, (int)K, " + alpha +
         ", A, (int)K, Bm, (int)" + dim(lb.ld) + ", " + beta + ", Y, (int)N);");
    return;
  }
  // Offset of batch `bi` in an operand: its strides along the product's batch
  // dims, 0 where it broadcasts.
  auto offset = [&](const Strided& s, bool result) {
    const size_t own = s.dims.size() - 2;
    std::string sum;
    for (size_t i = 0; i < nbatch; ++i) {
      if (i + own < nbatch) continue;
      const size_t j = i + own - nbatch;
      if (!result && is_one(s.dims[j])) continue;
      if (is_one(ob[i])) continue;
      std::string t = "bi";
      const DimExpr below = product(ob, i + 1, nbatch);
      if (!is_one(below)) t = "(" + t + " / " + dim(below) + ")";
      if (i > 0) t = "(" + t + " % " + dim(ob[i]) + ")";
      if (!is_one(s.strides[j])) t += " * " + dim(s.strides[j]);
      sum += (sum.empty() ? "" : " + ") + t;
    }
    return sum.empty() ? std::string("0") : sum;
  };
  const std::string nb = dim(product(ob));
  begin_parallel("parallel for", "M * N * K < 65536 && " + nb + " > 1");
  open("for (int64_t bi = 0; bi < " + nb + "; ++bi)");
  line("float* y = Y + " + offset(o, true) + ";");
  if (bias)
    line("for (int64_t r = 0; r < M; ++r) memcpy(y + r * " + dim(ldc) +
         ", Bias, sizeof(float) * N);");
  line("SGEMM(" + flags + ", (int)M, (int)N, (int)K, " + alpha + ", A + " + offset(a, false) +
       ", (int)" + dim(la.ld) + ", Bm + " + offset(b, false) + ", (int)" + dim(lb.ld) + ", " +
       beta + ", y, (int)" + dim(ldc) + ");");
  close();
  end_parallel();
}

}  // namespace hone::aot
