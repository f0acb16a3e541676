// Private to the aot backend: the plain element-wise ops aot generates code
// for, as data. Each entry is an op's arity, the C expression of one element
// and, where it has any, the attribute values aot refuses. support.cpp
// (what aot claims), shape_rules.cpp (dims: the input's, or the broadcast of
// two), lower.cpp (chains, through is_elementwise_op) and emit_chain.cpp
// (the loop body) all read it, so adding an op is one entry in eltwise.cpp
// (docs/architecture.md has the recipe).
//
//   if (const EltwiseOp* e = find_eltwise(n.op_type)) code = e->expr(n, {"x"});
//
// Clip, PRelu and BatchNormalization run in the same loops but take constant
// operands of their own (bounds, slope shape, folded statistics): they stay
// special cases beside the table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hone/graph.h"

namespace hone::aot {

struct EltwiseOp {
  const char* name;  // the ONNX op type
  int arity;         // 1: y = f(x); 2: y = f(a, b); 3: y = f(a, b, c); numpy-broadcast
  /// The C expression of one element (float, or the operands' C types); `a` holds the operands' C
  /// expressions, a literal ("2.0f") where the operand is a constant scalar.
  std::string (*expr)(const Node& n, const std::vector<std::string>& a);
  /// Why aot refuses this node's attributes, or ""; nullptr: it has no limits.
  std::string (*refuse)(const Node& n) = nullptr;
};

/// The entry of `op`, or nullptr when it is not in the table.
const EltwiseOp* find_eltwise(std::string_view op);
/// Every f32 entry, in the table's order (the tests walk it).
const std::vector<EltwiseOp>& eltwise_ops();
/// The comparisons (any of aot's types in, bool out) and And, Or, Xor and
/// Not (bool): in find_eltwise() too, their types checked by typed_values.h.
const std::vector<EltwiseOp>& typed_eltwise_ops();

}  // namespace hone::aot
