// The unary formula table of unary.h. The C expressions run in float inside
// loops GCC vectorizes (aot): libm calls with a libmvec variant (expf, log1pf,
// tanhf) keep them vectorized. fminf and fmaxf have none: GCC calls libm's
// per element (no -ffinite-math-only), so clamps are comparisons, which also
// keep NaN as the reference's clamp01 does. The double forms are the reference's.
#include "ops/unary.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ops/attrs.h"

namespace hone::ops {
namespace {

double clamp01(double v) {
  return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);  // NaN stays NaN
}

double swish(double v, double alpha) {
  const double a = alpha * v;
  return a >= 0 ? v / (1.0 + std::exp(-a)) : v * std::exp(a) / (1.0 + std::exp(a));
}

double softplus(double v) {
  return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

const std::vector<UnaryFormula>& formulas() {
  static const std::vector<UnaryFormula> kFormulas = {
      {"LeakyRelu",
       {"alpha", 0.01f},
       {},
       "(x < 0.0f ? a * x : x)",
       [](double x, double a, double) { return x < 0 ? a * x : x; }},
      {"Elu",
       {"alpha", 1.0f},
       {},
       "(x < 0.0f ? a * expm1f(x) : x)",
       [](double x, double a, double) { return x < 0 ? a * std::expm1(x) : x; }},
      {"Selu",
       {"alpha", 1.67326319217681884765625f},
       {"gamma", 1.05070102214813232421875f},
       "(x <= 0.0f ? b * a * expm1f(x) : b * x)",
       [](double x, double a, double b) { return x <= 0 ? b * a * std::expm1(x) : b * x; }},
      // max(0, x) + min(0, alpha * (e^(x/alpha) - 1)), written so NaN propagates.
      {"Celu",
       {"alpha", 1.0f},
       {},
       "(x > 0.0f ? x : a * expm1f(x / a))",
       [](double x, double a, double) { return x > 0 ? x : a * std::expm1(x / a); },
       [](double a, double) -> const char* { return a == 0.0 ? "alpha must not be 0" : nullptr; }},
      {"HardSigmoid",
       {"alpha", 0.2f},
       {"beta", 0.5f},
       "((a * x + b) < 0.0f ? 0.0f : ((a * x + b) > 1.0f ? 1.0f : (a * x + b)))",
       [](double x, double a, double b) { return clamp01(a * x + b); }},
      {"HardSwish",
       {},
       {},
       "(x * ((x / 6.0f + 0.5f) < 0.0f ? 0.0f"
       " : ((x / 6.0f + 0.5f) > 1.0f ? 1.0f : (x / 6.0f + 0.5f))))",
       [](double x, double, double) { return x * clamp01(x / 6.0 + 0.5); }},
      {"ThresholdedRelu",
       {"alpha", 1.0f},
       {},
       "(x > a ? x : 0.0f)",
       [](double x, double a, double) { return x > a ? x : 0.0; }},
      {"Softplus",
       {},
       {},
       "(x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)))",
       [](double x, double, double) { return softplus(x); }},
      // Opset 9: lambd and bias; NaN falls in neither tail and gives 0.
      {"Shrink",
       {"lambd", 0.5f},
       {"bias", 0.0f},
       "(x < -(a) ? x + (b) : (x > (a) ? x - (b) : 0.0f))",
       [](double x, double a, double b) { return x < -a ? x + b : (x > a ? x - b : 0.0); }},
      {"Softsign",
       {},
       {},
       "(x / (1.0f + fabsf(x)))",
       [](double x, double, double) { return x / (1.0 + std::fabs(x)); }},
      // Opset 24: x * sigmoid(alpha * x). The double form avoids exp's
      // overflow on both sides; in float, x / inf gives the same signed 0.
      {"Swish",
       {"alpha", 1.0f},
       {},
       "(x / (1.0f + expf(-(a * x))))",
       [](double x, double a, double) { return swish(x, a); },
       nullptr,
       24},
  };
  return kFormulas;
}

}  // namespace

const std::vector<UnaryFormula>& unary_formulas() {
  return formulas();
}

const UnaryFormula* find_unary(std::string_view op) {
  const std::vector<UnaryFormula>& all = formulas();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const UnaryFormula& f) { return op == f.op; });
  return it == all.end() ? nullptr : &*it;
}

Result<UnaryParams> unary_params(const Node& n, const UnaryFormula& f) {
  UnaryParams p;
  if (f.a.name) p.a = n.attr_float(f.a.name, f.a.fallback);
  if (f.b.name) p.b = n.attr_float(f.b.name, f.b.fallback);
  if (f.check)
    if (const char* why = f.check(p.a, p.b))
      return fail(attr_error(n, f.a.name ? f.a.name : "", why));
  return p;
}

std::string unary_c_expr(const UnaryFormula& f, const std::string& x, const std::string& a,
                         const std::string& b) {
  const std::string_view e = f.c_expr;
  std::string out;
  size_t i = 0;
  while (i < e.size()) {
    const char c = e[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {  // a literal: 0.5f, 1e-5f
      while (i < e.size() && (std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '.'))
        out += e[i++];
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < e.size() && (std::isalnum(static_cast<unsigned char>(e[j])) || e[j] == '_')) ++j;
      const std::string_view id = e.substr(i, j - i);
      out += id == "x" ? x : id == "a" ? a : id == "b" ? b : std::string(id);
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace hone::ops
