#include "backends/blas/kernels/eltwise.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>

#include "backends/blas/kernels/vector_clones.h"
#include "ops/attrs.h"
#include "ops/broadcast.h"

namespace hone::blas::kernels {
namespace {

constexpr int64_t kTile = 256;

std::string_view op_name(EwOp op) {
  static constexpr std::string_view kNames[] = {
      "add",     "sub",        "mul",  "div",       "pow",    "prelu",  "relu", "leaky_relu",
      "sigmoid", "tanh",       "clip", "erf",       "exp",    "log",    "sqrt", "abs",
      "neg",     "reciprocal", "gelu", "gelu_tanh", "affine", "formula"};
  return kNames[static_cast<size_t>(op)];
}

/// "HardSigmoid" -> "hard_sigmoid".
std::string snake_case(std::string_view op) {
  std::string s;
  for (char c : op) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (!s.empty()) s += '_';
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      s += c;
    }
  }
  return s;
}

/// Applies a transcendental op element by element in double.
template <class F>
void map_double(float* acc, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) acc[i] = static_cast<float>(f(static_cast<double>(acc[i])));
}

void unary(const EwInstr& in, float* acc, int64_t n) {
  const float a = in.a, b = in.b;
  switch (in.op) {
    case EwOp::kRelu:
      for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] < 0.0f ? 0.0f : acc[i];
      break;
    case EwOp::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] < 0.0f ? a * acc[i] : acc[i];
      break;
    case EwOp::kClip:
      for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] < a ? a : (acc[i] > b ? b : acc[i]);
      break;
    case EwOp::kAbs:
      for (int64_t i = 0; i < n; ++i) acc[i] = std::fabs(acc[i]);
      break;
    case EwOp::kNeg:
      for (int64_t i = 0; i < n; ++i) acc[i] = -acc[i];
      break;
    case EwOp::kAffine:
      for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] * a + b;
      break;
    case EwOp::kReciprocal:
      for (int64_t i = 0; i < n; ++i) acc[i] = 1.0f / acc[i];
      break;
    case EwOp::kSqrt:
      for (int64_t i = 0; i < n; ++i) acc[i] = std::sqrt(acc[i]);
      break;
    case EwOp::kSigmoid:
      map_double(acc, n, [](double v) {
        if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
        const double e = std::exp(v);
        return e / (1.0 + e);
      });
      break;
    case EwOp::kTanh:
      map_double(acc, n, [](double v) { return std::tanh(v); });
      break;
    case EwOp::kErf:
      map_double(acc, n, [](double v) { return std::erf(v); });
      break;
    case EwOp::kExp:
      map_double(acc, n, [](double v) { return std::exp(v); });
      break;
    case EwOp::kLog:
      map_double(acc, n, [](double v) { return std::log(v); });
      break;
    case EwOp::kFormula: {
      const auto f = in.formula->eval;
      map_double(acc, n, [f, a, b](double v) { return f(v, a, b); });
      break;
    }
    case EwOp::kGelu:
      // erfc keeps the tail accurate where 1 + erf(v) would cancel.
      map_double(acc, n, [](double v) { return 0.5 * v * std::erfc(-v / std::numbers::sqrt2); });
      break;
    case EwOp::kGeluTanh:
      map_double(acc, n, [](double v) { return ops::gelu_tanh(v); });
      break;
    default:
      break;
  }
}

/// acc = acc (op) x, where x advances by `step` (0: one broadcast value).
template <int64_t kStep>
void binary(const EwInstr& in, float* acc, const float* x, int64_t n) {
  auto at = [&](int64_t i) { return x[i * kStep]; };
  const bool r = in.reversed;
  switch (in.op) {
    case EwOp::kAdd:
      for (int64_t i = 0; i < n; ++i) acc[i] += at(i);
      break;
    case EwOp::kMul:
      for (int64_t i = 0; i < n; ++i) acc[i] *= at(i);
      break;
    case EwOp::kSub:
      if (r)
        for (int64_t i = 0; i < n; ++i) acc[i] = at(i) - acc[i];
      else
        for (int64_t i = 0; i < n; ++i) acc[i] -= at(i);
      break;
    case EwOp::kDiv:
      if (r)
        for (int64_t i = 0; i < n; ++i) acc[i] = at(i) / acc[i];
      else
        for (int64_t i = 0; i < n; ++i) acc[i] /= at(i);
      break;
    case EwOp::kPow:
      for (int64_t i = 0; i < n; ++i) {
        const double base = r ? at(i) : acc[i], e = r ? acc[i] : at(i);
        // Squares are most of the Pows in real models (variances, norms);
        // base * base in double is what pow() returns for them, 20x cheaper.
        acc[i] = static_cast<float>(e == 2.0 ? base * base : std::pow(base, e));
      }
      break;
    case EwOp::kPRelu:
      for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] < 0.0f ? at(i) * acc[i] : acc[i];
      break;
    default:
      break;
  }
}

/// One contiguous stretch of `n` output elements starting at `out_off`,
/// operand k starting at offs[k] with inner stride steps[k].
HONE_VECTOR_CLONES void run_segment(const EwProgram& p, const std::vector<const float*>& ops,
                                    const int64_t* offs, const int64_t* steps, float* out,
                                    int64_t n) {
  alignas(64) float acc[kTile];
  for (int64_t t = 0; t < n; t += kTile) {
    const int64_t m = std::min(kTile, n - t);
    const float* x0 = ops[0] + offs[0] + t * steps[0];
    if (steps[0] == 0)
      std::fill(acc, acc + m, *x0);
    else
      std::copy(x0, x0 + m, acc);
    for (const EwInstr& in : p.code) {
      if (!ew_is_binary(in.op)) {
        unary(in, acc, m);
        continue;
      }
      const size_t k = static_cast<size_t>(in.operand);
      const float* x = ops[k] + offs[k] + t * steps[k];
      if (steps[k] == 0)
        binary<0>(in, acc, x, m);
      else
        binary<1>(in, acc, x, m);
    }
    std::copy(acc, acc + m, out + t);
  }
}

}  // namespace

bool ew_is_binary(EwOp op) {
  return op <= EwOp::kPRelu;
}

std::string EwProgram::describe() const {
  std::string s;
  for (const EwInstr& in : code) {
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, falsely) on
    // `"," + std::string(...)` here.
    if (!s.empty()) s += ',';
    s += in.op == EwOp::kFormula ? snake_case(in.formula->op) : std::string(op_name(in.op));
  }
  return s;
}

Result<EwLayout> EwLayout::make(const std::vector<int64_t>& out,
                                const std::vector<std::vector<int64_t>>& operands) {
  const size_t r = out.size();
  std::vector<std::vector<int64_t>> strides(operands.size(), std::vector<int64_t>(r, 0));
  for (size_t k = 0; k < operands.size(); ++k) {
    const auto& s = operands[k];
    if (s.size() > r)
      return fail(ErrorCode::kInvalidArgument,
                  "operand " + std::to_string(k) + " has a higher rank than the output");
    // ONNX broadcasting (ops/broadcast.h): the operand must broadcast to the
    // output as it is; its strides are 0 along the broadcast dims.
    const auto fits = ops::broadcast_shapes({s, out});
    if (!fits || *fits != out)
      return fail(ErrorCode::kInvalidArgument,
                  "operand " + std::to_string(k) + " does not broadcast to the output");
    strides[k] = ops::broadcast_strides(s, out);
  }
  EwLayout l;
  l.numel = 1;
  for (int64_t d : out) l.numel *= d;
  // Merge neighbouring dims that every operand walks the same way.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> merged(operands.size());
  for (size_t i = 0; i < r; ++i) {
    if (out[i] == 1) continue;  // size-1 dims change no offsets
    bool can_merge = !dims.empty();
    for (size_t k = 0; k < operands.size() && can_merge; ++k)
      can_merge = merged[k].back() == strides[k][i] * out[i];
    if (can_merge) {
      dims.back() *= out[i];
      for (size_t k = 0; k < operands.size(); ++k) merged[k].back() = strides[k][i];
    } else {
      dims.push_back(out[i]);
      for (size_t k = 0; k < operands.size(); ++k) merged[k].push_back(strides[k][i]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& m : merged) m.push_back(0);
  }
  l.dims = std::move(dims);
  l.strides = std::move(merged);
  l.inner = l.dims.back();
  return l;
}

void eltwise_run(const EwProgram& p, const EwLayout& l, const std::vector<const float*>& operands,
                 float* out, int64_t begin, int64_t end) {
  const size_t nops = operands.size();
  const size_t r = l.dims.size();
  std::vector<int64_t> offs(nops), steps(nops);
  for (size_t k = 0; k < nops; ++k) steps[k] = l.strides[k][r - 1];
  int64_t e = begin;
  while (e < end) {
    int64_t row = e / l.inner;
    const int64_t col = e % l.inner;
    const int64_t n = std::min(l.inner - col, end - e);
    for (size_t k = 0; k < nops; ++k) offs[k] = col * steps[k];
    for (size_t d = r - 1; d-- > 0 && row > 0;) {
      const int64_t i = row % l.dims[d];
      row /= l.dims[d];
      for (size_t k = 0; k < nops; ++k) offs[k] += i * l.strides[k][d];
    }
    run_segment(p, operands, offs.data(), steps.data(), out + e, n);
    e += n;
  }
}

void eltwise_run_parallel(ThreadPool& pool, const EwProgram& p, const EwLayout& l,
                          const std::vector<const float*>& operands, float* out) {
  constexpr int64_t kGrain = 1 << 14;
  const int64_t chunks = std::max<int64_t>(1, (l.numel + kGrain - 1) / kGrain);
  pool.parallel_for(chunks, [&](int64_t b, int64_t e) {
    eltwise_run(p, l, operands, out, b * kGrain, std::min(l.numel, e * kGrain));
  });
}

}  // namespace hone::blas::kernels
