// Private to the aot backend: the element types of the values its code
// carries. Most are f32; the integer and bool values a graph reads at run
// time (token ids and attention masks as i64, TopK's indices, a Cast's
// result, integer arithmetic on them) are i64, i32 or bool (uint8_t in C,
// 0 or 1). The ops that carry them: the views, Cast, Gather and GatherND (of
// any of them, by i64 or i32 indices read at run time too), the strided copies, Transpose,
// Concat, Split, Add, Sub and Mul of integers, ArgMax and ArgMin (i64 positions
// of any of them), the comparisons (to bool) and And/Or/Xor/Not (of bool),
// Where (a bool condition, branches of any type), Clip and CumSum of integers,
// GatherElements, ScatterElements, ScatterND and OneHot; every other op reads
// and makes f32. support.cpp asks
// types_problem(), lowering result_dtype(), the emitters c_type() and cast_c_expr().
//
//   if (std::string why = types_problem(g, n, data_inputs); !why.empty()) refuse(why);
//   line(std::string("const ") + c_type(info.dtype) + "* X = " + ptr(v) + ";");
#pragma once

#include <string>

#include "backends/aot/program.h"

namespace hone::aot {

/// f32, i64, i32 or bool: the element types aot's code has.
bool aot_dtype(DType t);
/// "float", "int64_t", "int32_t", "uint8_t".
const char* c_type(DType t);
/// Ops whose inputs and outputs may be integer or bool (the rest are f32 only).
bool carries_any_dtype(const std::string& op);
/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual: any type in, bool out.
bool is_compare_op(const std::string& op);
/// And, Or, Xor, Not: bool in, bool out.
bool is_logic_op(const std::string& op);
/// Why aot cannot run `n` with its element types ("" when it can): data
/// inputs are slots [0, data); an op outside carries_any_dtype() reads and
/// makes f32.
std::string types_problem(const Graph& g, const Node& n, size_t data);
/// The element type of node output `v`: the graph's, or where the graph
/// leaves it undefined (a builder-made intermediate), Cast's `to` or its
/// first operand's.
DType result_dtype(const Program& p, const Node& n, ValueId v);
/// Cast of C expression `x` of type `from` to `to`, with the reference's
/// rules (eval's cast_one): float to integer truncates toward zero, NaN to 0,
/// out of range saturates; integer to integer wraps; anything to bool is != 0.
std::string cast_c_expr(DType from, DType to, const std::string& x);

}  // namespace hone::aot
