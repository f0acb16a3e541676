// The op-case table's element-wise rows: every formula of src/ops/unary.h
// (default and given attributes), the basic math unaries, binary arithmetic
// with broadcasting (the first operand's too), Where, Clip and Cast.
#include <algorithm>
#include <limits>

#include "ops/op_cases.h"
#include "ops/unary.h"

namespace hone::op_cases {
namespace {

using Attrs = std::map<std::string, Attribute>;

OpCase unary(std::string name, std::string op, OpInput x, Attrs attrs = {}, int64_t opset = 17) {
  return {std::move(name), std::move(op), opset, {std::move(x)}, std::move(attrs)};
}

OpCase binary(std::string name, std::string op, OpInput a, OpInput b) {
  return {std::move(name), std::move(op), 17, {std::move(a), std::move(b)}};
}

}  // namespace

std::vector<OpCase> eltwise_cases() {
  std::vector<OpCase> t;
  // Every formula of ops/unary.h with its defaults, on edge values; a formula
  // added there is covered here without a new row.
  for (const ops::UnaryFormula& f : ops::unary_formulas())
    t.push_back(unary(std::string(f.op), f.op, edge({2, 3, 7}), {}, std::max(17, f.since)));
  // ... and with given attributes.
  t.push_back(unary("LeakyRelu_alpha", "LeakyRelu", edge({3, 8}), {{"alpha", 0.2f}}));
  t.push_back(unary("Elu_alpha", "Elu", edge({3, 8}), {{"alpha", 0.5f}}));
  t.push_back(unary("Selu_alpha_gamma", "Selu", edge({3, 8}), {{"alpha", 1.5f}, {"gamma", 2.0f}}));
  t.push_back(unary("Celu_alpha", "Celu", edge({3, 8}), {{"alpha", 2.0f}}, 12));
  t.push_back(unary("HardSigmoid_alpha_beta", "HardSigmoid", edge({3, 8}),
                    {{"alpha", 0.3f}, {"beta", 0.4f}}));
  t.push_back(
      unary("Shrink_lambd_bias", "Shrink", edge_nan({3, 8}), {{"lambd", 1.0f}, {"bias", 0.5f}}, 9));
  t.push_back(unary("ThresholdedRelu_alpha", "ThresholdedRelu", edge({3, 8}), {{"alpha", 0.5f}}));
  t.push_back(unary("Swish_alpha", "Swish", edge({3, 8}), {{"alpha", 0.5f}}, 24));

  // The basic math unaries, on edge values where the whole line is defined.
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Floor", "Ceil", "Round", "Sign",
                         "Erf", "Sin", "Cos", "Exp", "Mish"})
    t.push_back(unary(op, op, edge({2, 3, 7})));
  // Trigonometric and hyperbolic functions and their inverses, where each is defined.
  for (const char* op : {"Tan", "Atan", "Sinh", "Cosh", "Asinh"})
    t.push_back(unary(op, op, edge({2, 3, 7})));
  for (const char* op : {"Asin", "Acos", "Atanh"}) t.push_back(unary(op, op, in({2, 3, 7})));
  t.push_back(unary("Acosh", "Acosh", pos({2, 3, 7})));
  t.push_back(unary("Gelu_erf", "Gelu", edge({2, 3, 7}), {}, 20));
  t.push_back(
      unary("Gelu_tanh", "Gelu", edge({2, 3, 7}), {{"approximate", std::string("tanh")}}, 20));
  t.push_back(unary("Identity", "Identity", edge({2, 3, 7})));
  // ... on the half line where they are defined.
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) t.push_back(unary(op, op, pos({2, 3, 7})));
  // ... and through NaN and infinities, which they propagate.
  for (const char* op :
       {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Reciprocal", "HardSigmoid", "HardSwish"}) {
    t.push_back(unary(std::string(op) + "_nan_inf", op, edge_nan({4, 6})));
    if (t.back().op == "Relu")
      t.back().exclude = {{"onednn", "oneDNN's eltwise relu gives 0 for NaN"},
                          {"aot", "aot's Relu is (x > 0 ? x : 0), which gives 0 for NaN"}};
    if (t.back().op == "Exp")
      t.back().exclude = {{"onednn", "oneDNN's eltwise exp gives inf for NaN"}};
    if (t.back().op == "HardSigmoid")
      t.back().exclude = {{"onednn", "oneDNN's eltwise hardsigmoid gives 0 for NaN"}};
  }

  // Binary arithmetic: same shapes, one side broadcast, both sides broadcast,
  // the first operand broadcast, a scalar.
  for (const char* op : {"Add", "Sub", "Mul", "Max", "Min"}) {
    const std::string o = op;
    t.push_back(binary(o + "_same", op, edge({2, 3, 7}), in({2, 3, 7})));
    t.push_back(binary(o + "_bcast_last", op, in({2, 3, 7}), in({7})));
    t.push_back(binary(o + "_bcast_both", op, in({1, 3, 1}), in({2, 1, 5})));
    t.push_back(binary(o + "_bcast_first", op, in({7}), in({2, 3, 7})));
    t.push_back(binary(o + "_scalar_weight", op, in({2, 3, 7}), weight({})));
  }
  t.push_back(binary("Div_same", "Div", edge({2, 3, 7}), pos({2, 3, 7})));
  t.push_back(binary("Div_bcast_first", "Div", in({7}), pos({2, 3, 7})));
  t.push_back(binary("Div_bcast_mid", "Div", in({2, 3, 7}), pos({3, 1})));
  t.push_back(binary("Pow_same", "Pow", pos({2, 3, 7}), in({2, 3, 7})));
  t.push_back(binary("Pow_square", "Pow", edge({2, 3, 7}), values({2.0}, DType::kF32)));
  t.push_back(binary("Pow_const_fraction", "Pow", pos({5, 8}), values({1.5}, DType::kF32)));
  t.back().inputs[1].shape = {};
  t.push_back(binary("Pow_bcast_first", "Pow", pos({5}), in({3, 5})));
  t.push_back(binary("PRelu_channel", "PRelu", edge({2, 3, 4, 4}), weight({3, 1, 1})));

  // Where: condition, then the two branches, broadcast in turn.
  t.push_back({"Where_same", "Where", 16, {in({3, 5}, Fill::kBool), in({3, 5}), in({3, 5})}});
  t.back().inputs[0].dtype = DType::kBool;
  t.push_back({"Where_bcast", "Where", 16, {in({3, 1}, Fill::kBool), in({1, 5}), weight({})}});
  t.back().inputs[0].dtype = DType::kBool;
  // Integer values, the condition broadcast over the leading axis.
  t.push_back({"Where_i64",
               "Where",
               16,
               {in({1, 4}, Fill::kBool), given(DType::kI64, {2, 4}, {1, -2, 3, -4, 5, -6, 7, -8}),
                given(DType::kI64, {2, 1}, {100, -100})}});
  t.back().inputs[0].dtype = DType::kBool;
  // The condition and both branches broadcast at once.
  t.push_back(
      {"Where_bcast_all", "Where", 16, {in({2, 1, 4}, Fill::kBool), in({3, 1}), in({2, 3, 1})}});
  t.back().inputs[0].dtype = DType::kBool;

  // Comparisons of f32 values (bool results), with broadcasting and ties.
  t.push_back(binary("Greater_bcast", "Greater", in({2, 3, 4}), in({4})));
  t.push_back(binary("Less_bcast_first", "Less", in({3, 1}), in({2, 3, 5})));
  t.push_back({"Equal_ties",
               "Equal",
               13,
               {given(DType::kF32, {2, 3}, {1.0, -2.0, 0.0, 0.5, 3.0, -0.0}),
                given(DType::kF32, {3}, {1.0, 2.0, 0.0})}});
  t.push_back({"LessOrEqual_ties",
               "LessOrEqual",
               16,
               {given(DType::kF32, {2, 3}, {1.0, -2.0, 0.0, 0.5, 3.0, -0.0}),
                given(DType::kF32, {2, 1}, {0.0, 0.5})}});
  t.push_back({"GreaterOrEqual_ties",
               "GreaterOrEqual",
               16,
               {given(DType::kF32, {2, 3}, {1.0, -2.0, 0.0, 0.5, 3.0, -0.0}),
                given(DType::kF32, {2, 1}, {0.0, 0.5})}});
  // Bool logic, with broadcasting.
  t.push_back({"Not", "Not", 1, {in({3, 5}, Fill::kBool)}});
  t.back().inputs[0].dtype = DType::kBool;
  for (const char* op : {"And", "Or", "Xor"}) {
    t.push_back(
        {std::string(op) + "_bcast", op, 7, {in({2, 3, 4}, Fill::kBool), in({3, 1}, Fill::kBool)}});
    t.back().inputs[0].dtype = t.back().inputs[1].dtype = DType::kBool;
  }

  // Clip: bounds as attributes (opset 6), inputs (13+), one bound only, none.
  t.push_back(unary("Clip_attrs_opset6", "Clip", edge({3, 8}), {{"min", -0.5f}, {"max", 2.0f}}, 6));
  t.push_back({"Clip_inputs",
               "Clip",
               13,
               {edge({3, 8}), values({-0.5}, DType::kF32), values({2.0}, DType::kF32)}});
  t.back().inputs[1].shape = t.back().inputs[2].shape = {};
  t.push_back({"Clip_min_only", "Clip", 13, {edge({3, 8}), values({0.0}, DType::kF32)}});
  t.back().inputs[1].shape = {};
  t.push_back({"Clip_max_only", "Clip", 13, {edge({3, 8}), absent(), values({1.0}, DType::kF32)}});
  t.back().inputs[2].shape = {};
  t.push_back(unary("Clip_nan", "Clip", edge_nan({3, 8}), {{"min", -1.0f}, {"max", 1.0f}}, 6));
  t.back().exclude = {{"onednn", "oneDNN's clip gives the lower bound for NaN"}};

  // Cast: float -> int truncates toward zero; int -> float; float -> float.
  t.push_back(unary("Cast_f32_to_i64", "Cast",
                    given(DType::kF32, {8}, {0.0, -0.0, 1.5, -1.5, 2.9, -2.9, 100.0, -7.0}),
                    {{"to", int64_t{7}}}, 13));
  t.push_back(unary("Cast_i64_to_f32", "Cast", given(DType::kI64, {6}, {0, -1, 3, 1000, -77, 5}),
                    {{"to", int64_t{1}}}, 13));
  t.push_back(unary("Cast_i32_to_i64", "Cast", given(DType::kI32, {4}, {0, -1, 3, 1 << 20}),
                    {{"to", int64_t{7}}}, 13));
  t.push_back(unary("Cast_f32_to_f32", "Cast", edge({3, 5}), {{"to", int64_t{1}}}, 13));
  // The reference's choices where ONNX leaves it undefined: NaN -> 0, out of
  // range saturates; and bool both ways (NaN is true).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  t.push_back(unary("Cast_f32_to_i32_saturate", "Cast",
                    given(DType::kF32, {7}, {3e9, -3e9, nan, inf, -inf, 2.5, -0.5}),
                    {{"to", int64_t{6}}}, 13));
  t.push_back(unary("Cast_f32_to_bool", "Cast",
                    given(DType::kF32, {6}, {0.0, -0.0, 0.25, -3.0, nan, inf}),
                    {{"to", int64_t{9}}}, 13));
  t.push_back(unary("Cast_bool_to_f32", "Cast", in({3, 4}, Fill::kBool), {{"to", int64_t{1}}}, 13));
  t.back().inputs[0].dtype = DType::kBool;
  return t;
}

}  // namespace hone::op_cases
