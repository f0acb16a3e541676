// The element-wise unary formulas with attributes, written once: for each op
// its attributes (name and ONNX default), the formula as a C expression over
// `x`, `a` and `b` (floats; aot's code generator substitutes them), and the
// same formula in double (the reference and the blas kernels call it).
// Adding such an op to every CPU backend is one row here plus one op case.
//
//   const ops::UnaryFormula* f = ops::find_unary("Elu");
//   HONE_TRY(ops::UnaryParams p, ops::unary_params(node, *f));
//   double y = f->eval(x, p.a, p.b);   // or ops::unary_c_expr(*f, "v", lit(p.a), lit(p.b))
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"

namespace hone::ops {

/// One float attribute of a formula; `name` null when the formula has none.
struct UnaryAttr {
  const char* name = nullptr;
  float fallback = 0.0f;
};

struct UnaryFormula {
  const char* op;                                ///< ONNX op type
  UnaryAttr a, b;                                ///< the attributes the formula calls a and b
  const char* c_expr;                            ///< C over float x, a, b: "(x < 0.0f ? a * x : x)"
  double (*eval)(double x, double a, double b);  ///< the same in double
  /// A reason the attribute values are invalid, or null (e.g. Celu's alpha 0).
  const char* (*check)(double a, double b) = nullptr;
  int since = 1;  ///< the first opset with the op in this form
};

/// An op's attribute values, in the formula's order.
struct UnaryParams {
  float a = 0.0f, b = 0.0f;
};

/// Every formula, in a fixed order.
const std::vector<UnaryFormula>& unary_formulas();

/// The formula of `op`, or null when it is not a unary formula op.
const UnaryFormula* find_unary(std::string_view op);

/// Reads `n`'s attributes with the formula's defaults; an invalid-argument
/// error naming the node and attribute when `check` refuses them.
[[nodiscard]] Result<UnaryParams> unary_params(const Node& n, const UnaryFormula& f);

/// `f.c_expr` with x, a and b replaced by the given C expressions.
std::string unary_c_expr(const UnaryFormula& f, const std::string& x, const std::string& a,
                         const std::string& b);

}  // namespace hone::ops
