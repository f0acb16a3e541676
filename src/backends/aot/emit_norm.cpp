// InstanceNormalization (GroupNorm as exporters write it: Reshape to
// [N, groups, -1], InstanceNormalization, Reshape back, Mul, Add): per
// [n, c] plane, mean and variance over the spatial dims, then the channel's
// scale and shift, three vectorized passes as LayerNormalization runs.
#include "backends/aot/emitter.h"
#include "ops/attrs.h"

namespace hone::aot {

void Emitter::emit_instance_norm(const Node& n, NodeId id, const std::string& y) {
  const auto& ops = p_.operands.at(id);
  const DimExprs& x = dims(ops[0]);
  const ops::NormAttrs na = ops::norm_attrs(n).value_or(ops::NormAttrs{});
  const int64_t c = x[1].value();
  const std::string planes = dim(x[0] * c), len = dim(product(x, 2, x.size()));
  line("const float* X = " + ptr(ops[0]) + ";");
  line("const float* S = " + ptr(ops[1]) + ";");
  line("const float* Bv = " + ptr(ops[2]) + ";");
  line("float* Y = " + y + ";");
  line("const int64_t len = " + len + ";");
  begin_parallel("parallel for", worth_threads(planes + " * len * 4"));  // 3 passes
  open("for (int64_t pl = 0; pl < " + planes + "; ++pl)");
  line("const float* x = X + pl * len;");
  line("float* yr = Y + pl * len;");
  line("const int64_t ch = pl % " + c_int(c) + ";");
  line("float mean = 0.0f, var = 0.0f;");
  line("#pragma omp simd reduction(+:mean)");
  line("for (int64_t j = 0; j < len; ++j) mean += x[j];");
  line("mean /= (float)len;");
  line("#pragma omp simd reduction(+:var)");
  line("for (int64_t j = 0; j < len; ++j) var += (x[j] - mean) * (x[j] - mean);");
  line("const float k = S[ch] / sqrtf(var / (float)len + " + float_literal(na.epsilon) +
       "), t = Bv[ch] - mean * k;");
  line("#pragma omp simd");
  line("for (int64_t j = 0; j < len; ++j) yr[j] = x[j] * k + t;");
  close();
  end_parallel();
}

}  // namespace hone::aot
