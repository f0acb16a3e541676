// The element-wise op table of eltwise.h. An entry: name, arity, the C
// expression of one element (operands a[0], a[1]; attributes through f()),
// and optionally the attribute values aot refuses. The expressions run in
// float inside loops GCC vectorizes: libm calls with a libmvec variant
// (expf, logf, erff, tanhf, powf; declared in runtime/core.c) keep them
// vectorized.
#include "backends/aot/eltwise.h"

#include <algorithm>

#include "backends/aot/emitter.h"

namespace hone::aot {
namespace {

using Args = std::vector<std::string>;

/// An attribute as a C float literal.
std::string f(const Node& n, const char* attr, float fallback) {
  return float_literal(n.attr_float(attr, fallback));
}

std::string call(const char* fn, const std::string& x) {
  return std::string(fn) + "(" + x + ")";
}

const std::vector<EltwiseOp> kOps = {
    // --- unary ------------------------------------------------------------
    {"Relu", 1,
     [](const Node&, const Args& a) { return "(" + a[0] + " > 0.0f ? " + a[0] + " : 0.0f)"; }},
    {"LeakyRelu", 1,
     [](const Node& n, const Args& a) {
       return "(" + a[0] + " < 0.0f ? " + f(n, "alpha", 0.01f) + " * " + a[0] + " : " + a[0] + ")";
     }},
    {"Elu", 1,
     [](const Node& n, const Args& a) {
       return "(" + a[0] + " < 0.0f ? " + f(n, "alpha", 1.0f) + " * expm1f(" + a[0] +
              ") : " + a[0] + ")";
     }},
    {"Selu", 1,
     [](const Node& n, const Args& a) {
       const std::string g = f(n, "gamma", 1.05070102214813232421875f),
                         al = f(n, "alpha", 1.67326319217681884765625f);
       return "(" + a[0] + " <= 0.0f ? " + g + " * " + al + " * expm1f(" + a[0] + ") : " + g +
              " * " + a[0] + ")";
     }},
    {"Celu", 1,
     [](const Node& n, const Args& a) {
       return "(" + a[0] + " > 0.0f ? " + a[0] + " : " + f(n, "alpha", 1.0f) + " * expm1f(" + a[0] +
              " / " + f(n, "alpha", 1.0f) + "))";
     }},
    {"Sigmoid", 1,
     [](const Node&, const Args& a) { return "(1.0f / (1.0f + expf(-" + a[0] + ")))"; }},
    {"HardSigmoid", 1,
     [](const Node& n, const Args& a) {
       return "fminf(fmaxf(" + f(n, "alpha", 0.2f) + " * " + a[0] + " + " + f(n, "beta", 0.5f) +
              ", 0.0f), 1.0f)";
     }},
    {"HardSwish", 1,
     [](const Node&, const Args& a) {
       return "(" + a[0] + " * fminf(fmaxf(" + a[0] + " / 6.0f + 0.5f, 0.0f), 1.0f))";
     }},
    {"Tanh", 1, [](const Node&, const Args& a) { return call("tanhf", a[0]); }},
    {"Erf", 1, [](const Node&, const Args& a) { return call("erff", a[0]); }},
    {"Sqrt", 1, [](const Node&, const Args& a) { return call("sqrtf", a[0]); }},
    {"Exp", 1, [](const Node&, const Args& a) { return call("expf", a[0]); }},
    {"Log", 1, [](const Node&, const Args& a) { return call("logf", a[0]); }},
    {"Abs", 1, [](const Node&, const Args& a) { return call("fabsf", a[0]); }},
    {"Neg", 1, [](const Node&, const Args& a) { return "(-" + a[0] + ")"; }},
    {"Reciprocal", 1, [](const Node&, const Args& a) { return "(1.0f / " + a[0] + ")"; }},
    {"Softplus", 1,
     [](const Node&, const Args& a) {
       return "(" + a[0] + " > 0.0f ? " + a[0] + " + log1pf(expf(-" + a[0] + ")) : log1pf(expf(" +
              a[0] + ")))";
     }},
    {"Softsign", 1,
     [](const Node&, const Args& a) { return "(" + a[0] + " / (1.0f + fabsf(" + a[0] + ")))"; }},
    {"Floor", 1, [](const Node&, const Args& a) { return call("floorf", a[0]); }},
    {"Ceil", 1, [](const Node&, const Args& a) { return call("ceilf", a[0]); }},
    {"Sin", 1, [](const Node&, const Args& a) { return call("sinf", a[0]); }},
    {"Cos", 1, [](const Node&, const Args& a) { return call("cosf", a[0]); }},
    {"ThresholdedRelu", 1,
     [](const Node& n, const Args& a) {
       return "(" + a[0] + " > " + f(n, "alpha", 1.0f) + " ? " + a[0] + " : 0.0f)";
     }},
    {"Gelu", 1,
     [](const Node& n, const Args& a) {
       const std::string& x = a[0];
       if (n.attr_string("approximate", "none") == "tanh")
         return "(0.5f * " + x + " * (1.0f + tanhf(0.7978845608028654f * (" + x +
                " + 0.044715f * " + x + " * " + x + " * " + x + "))))";
       // hone_erf (runtime/core.c): inline FMAs, where erff is a call per element.
       return "(0.5f * " + x + " * (1.0f + hone_erf(" + x + " * 0.7071067811865476f)))";
     },
     [](const Node& n) -> std::string {
       const std::string approx = n.attr_string("approximate", "none");
       return approx == "none" || approx == "tanh" ? "" : "approximate must be 'none' or 'tanh'";
     }},
    // --- binary (numpy broadcasting) ----------------------------------------
    {"Add", 2, [](const Node&, const Args& a) { return "(" + a[0] + " + " + a[1] + ")"; }},
    {"Sub", 2, [](const Node&, const Args& a) { return "(" + a[0] + " - " + a[1] + ")"; }},
    {"Mul", 2, [](const Node&, const Args& a) { return "(" + a[0] + " * " + a[1] + ")"; }},
    {"Div", 2, [](const Node&, const Args& a) { return "(" + a[0] + " / " + a[1] + ")"; }},
    {"Pow", 2,
     [](const Node&, const Args& a) {
       return a[1] == "2.0f" ? "(" + a[0] + " * " + a[0] + ")" : "powf(" + a[0] + ", " + a[1] + ")";
     }},
};

}  // namespace

const std::vector<EltwiseOp>& eltwise_ops() {
  return kOps;
}

const EltwiseOp* find_eltwise(std::string_view op) {
  const auto it =
      std::find_if(kOps.begin(), kOps.end(), [&](const EltwiseOp& e) { return op == e.name; });
  return it == kOps.end() ? nullptr : &*it;
}

}  // namespace hone::aot
