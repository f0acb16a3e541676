// The element-wise op table of eltwise.h. An entry: name, arity, the C
// expression of one element (operands a[0], a[1]), and optionally the
// attribute values aot refuses. The unary ops with attributes come from the
// schema's formula table (ops/unary.h), not from here. The expressions run in
// float inside loops GCC vectorizes: libm calls with a libmvec variant
// (expf, logf, erff, tanhf, powf; declared in runtime/core.c) keep them
// vectorized.
#include "backends/aot/eltwise.h"

#include <algorithm>

#include "backends/aot/emitter.h"
#include "ops/attrs.h"
#include "ops/unary.h"

namespace hone::aot {
namespace {

using Args = std::vector<std::string>;

/// Max and Min are variadic; aot's loops take two operands.
std::string two_operands(const Node& n) {
  return n.inputs.size() == 2
             ? ""
             : n.op_type + " of " + std::to_string(n.inputs.size()) + " inputs (aot takes two)";
}

/// A unary formula op of the schema (ops/unary.h), its attributes as C
/// float literals.
std::string formula_expr(const Node& n, const Args& a) {
  const ops::UnaryFormula& f = *ops::find_unary(n.op_type);
  const ops::UnaryParams p = ops::unary_params(n, f).value_or(ops::UnaryParams{});
  return ops::unary_c_expr(f, a[0], float_literal(p.a), float_literal(p.b));
}

std::string formula_refuse(const Node& n) {
  auto p = ops::unary_params(n, *ops::find_unary(n.op_type));
  return p ? "" : p.error().message();
}

std::string call(const char* fn, const std::string& x) {
  return std::string(fn) + "(" + x + ")";
}

const std::vector<EltwiseOp> kOwnOps = {
    // --- unary ------------------------------------------------------------
    {"Relu", 1,
     [](const Node&, const Args& a) { return "(" + a[0] + " > 0.0f ? " + a[0] + " : 0.0f)"; }},
    {"Sigmoid", 1,
     [](const Node&, const Args& a) { return "(1.0f / (1.0f + expf(-" + a[0] + ")))"; }},
    {"Tanh", 1, [](const Node&, const Args& a) { return call("tanhf", a[0]); }},
    {"Erf", 1, [](const Node&, const Args& a) { return call("erff", a[0]); }},
    {"Sqrt", 1, [](const Node&, const Args& a) { return call("sqrtf", a[0]); }},
    {"Exp", 1, [](const Node&, const Args& a) { return call("expf", a[0]); }},
    {"Log", 1, [](const Node&, const Args& a) { return call("logf", a[0]); }},
    {"Abs", 1, [](const Node&, const Args& a) { return call("fabsf", a[0]); }},
    {"Neg", 1, [](const Node&, const Args& a) { return "(-" + a[0] + ")"; }},
    {"Reciprocal", 1, [](const Node&, const Args& a) { return "(1.0f / " + a[0] + ")"; }},
    {"Floor", 1, [](const Node&, const Args& a) { return call("floorf", a[0]); }},
    {"Ceil", 1, [](const Node&, const Args& a) { return call("ceilf", a[0]); }},
    {"Sin", 1, [](const Node&, const Args& a) { return call("sinf", a[0]); }},
    {"Cos", 1, [](const Node&, const Args& a) { return call("cosf", a[0]); }},
    {"Gelu", 1,
     [](const Node& n, const Args& a) {
       const std::string& x = a[0];
       if (ops::gelu_approx(n).value_or(ops::GeluApprox::kNone) == ops::GeluApprox::kTanh)
         return "(0.5f * " + x + " * (1.0f + tanhf(0.7978845608028654f * (" + x +
                " + 0.044715f * " + x + " * " + x + " * " + x + "))))";
       // hone_erf (runtime/core.c): inline FMAs, where erff is a call per element.
       return "(0.5f * " + x + " * (1.0f + hone_erf(" + x + " * 0.7071067811865476f)))";
     },
     [](const Node& n) -> std::string {
       auto approx = ops::gelu_approx(n);
       return approx ? "" : approx.error().message();
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
    // Max and Min of two (a detector's box clipping); NaN propagates (runtime/core.c).
    {"Max", 2, [](const Node&, const Args& a) { return "hone_maxf(" + a[0] + ", " + a[1] + ")"; },
     two_operands},
    {"Min", 2, [](const Node&, const Args& a) { return "hone_minf(" + a[0] + ", " + a[1] + ")"; },
     two_operands},
    // --- ternary -------------------------------------------------------------
    // The condition reaches the code as floats, 0 or 1 (host_block.h).
    {"Where", 3,
     [](const Node&, const Args& a) {
       return "(" + a[0] + " != 0.0f ? " + a[1] + " : " + a[2] + ")";
     }},
};

std::string binary(const Args& a, const char* op) {
  return "(" + a[0] + " " + op + " " + a[1] + ")";
}

/// Comparisons (any type to bool: C's operators on the C types, so NaN is
/// equal to nothing and ordered with nothing, as in the reference) and
/// logic of bools (uint8_t, 0 or 1).
const std::vector<EltwiseOp> kTypedOps = {
    {"Equal", 2, [](const Node&, const Args& a) { return binary(a, "=="); }},
    {"Less", 2, [](const Node&, const Args& a) { return binary(a, "<"); }},
    {"LessOrEqual", 2, [](const Node&, const Args& a) { return binary(a, "<="); }},
    {"Greater", 2, [](const Node&, const Args& a) { return binary(a, ">"); }},
    {"GreaterOrEqual", 2, [](const Node&, const Args& a) { return binary(a, ">="); }},
    {"And", 2, [](const Node&, const Args& a) { return binary(a, "&&"); }},
    {"Or", 2, [](const Node&, const Args& a) { return binary(a, "||"); }},
    {"Xor", 2,
     [](const Node&, const Args& a) { return "((" + a[0] + " != 0) != (" + a[1] + " != 0))"; }},
    {"Not", 1, [](const Node&, const Args& a) { return "(" + a[0] + " == 0)"; }},
};

/// aot's own entries, then every unary formula of the schema.
/// (Built on first use: the schema's table is another file's static.)
const std::vector<EltwiseOp>& all_ops() {
  static const std::vector<EltwiseOp> kAll = [] {
    std::vector<EltwiseOp> out = kOwnOps;
    for (const ops::UnaryFormula& f : ops::unary_formulas())
      out.push_back({f.op, 1, formula_expr, formula_refuse});
    return out;
  }();
  return kAll;
}

}  // namespace

const std::vector<EltwiseOp>& eltwise_ops() {
  return all_ops();
}

const std::vector<EltwiseOp>& typed_eltwise_ops() {
  return kTypedOps;
}

const EltwiseOp* find_eltwise(std::string_view op) {
  for (const std::vector<EltwiseOp>* table : {&all_ops(), &kTypedOps}) {
    const auto it = std::find_if(table->begin(), table->end(),
                                 [&](const EltwiseOp& e) { return op == e.name; });
    if (it != table->end()) return &*it;
  }
  return nullptr;
}

}  // namespace hone::aot
