// Sequence and optional reference kernels.
#include <gtest/gtest.h>

#include "control_test_util.h"

namespace hone::eval::testing {
namespace {

using Attrs = std::map<std::string, Attribute>;

RuntimeValue seq_of(std::vector<Tensor> ts) {
  const DType dt = ts.empty() ? DType::kF32 : ts.front().dtype();
  return RuntimeValue::of_sequence(std::move(ts), dt);
}

// One node `op` over graph inputs of the given kinds; returns its outputs.
Result<std::vector<RuntimeValue>> run_op(const std::string& op, std::vector<RuntimeValue> ins,
                                         Attrs attrs = {}, int num_outputs = 1,
                                         int64_t opset = 17) {
  Graph g("g");
  g.opsets()[""] = opset;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < ins.size(); ++i) {
    Value v = declared("in" + std::to_string(i), ins[i].is_sequence() ? ValueKind::kSequence
                                                 : ins[i].optional    ? ValueKind::kOptional
                                                                      : ValueKind::kTensor);
    ids.push_back(ins[i].is_none() && !ins[i].optional ? kNoValue : g.add_value(v));
  }
  std::vector<ValueId> inputs;
  for (ValueId id : ids)
    if (id != kNoValue) inputs.push_back(id);
  g.set_inputs(inputs);
  std::vector<RuntimeValue> given;
  for (RuntimeValue& v : ins)
    if (!v.is_none() || v.optional) given.push_back(std::move(v));
  g.set_outputs(g.add_node(op, ids, num_outputs, std::move(attrs), "node"));
  return run_values(g, std::move(given));
}

Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::from<float>(shape, v);
}

TEST(ControlSequence, ConstructAtAndLength) {
  auto made = run_op("SequenceConstruct",
                     {RuntimeValue::of(f32({1}, {1})), RuntimeValue::of(f32({2}, {2, 3}))});
  ASSERT_TRUE(made) << made.error().to_string();
  ASSERT_TRUE((*made)[0].is_sequence());
  EXPECT_EQ((*made)[0].sequence.size(), 2u);
  EXPECT_EQ((*made)[0].elem_type, DType::kF32);

  RuntimeValue s = seq_of({f32({1}, {1}), f32({2}, {2, 3}), f32({}, {4})});
  auto last = run_op("SequenceAt", {s, RuntimeValue::of(Tensor::scalar<int64_t>(-1))});
  ASSERT_TRUE(last) << last.error().to_string();
  EXPECT_EQ(values_of<float>((*last)[0].tensor), (std::vector<float>{4}));
  auto second = run_op("SequenceAt", {s, RuntimeValue::of(Tensor::scalar<int32_t>(1))});
  ASSERT_TRUE(second) << second.error().to_string();
  EXPECT_EQ(values_of<float>((*second)[0].tensor), (std::vector<float>{2, 3}));
  auto len = run_op("SequenceLength", {s});
  ASSERT_TRUE(len) << len.error().to_string();
  EXPECT_EQ((*len)[0].tensor.data<int64_t>()[0], 3);
  EXPECT_EQ((*len)[0].tensor.rank(), 0u);
}

TEST(ControlSequence, ConstructRejectsMixedDtypes) {
  auto r = run_op("SequenceConstruct",
                  {RuntimeValue::of(f32({1}, {1})), RuntimeValue::of(Tensor::scalar<int64_t>(1))});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("share a dtype"), std::string::npos);
}

TEST(ControlSequence, AtOutOfRangeIsAnError) {
  RuntimeValue s = seq_of({f32({1}, {1}), f32({1}, {2})});
  for (int64_t pos : {2, -3}) {
    auto r = run_op("SequenceAt", {s, RuntimeValue::of(Tensor::scalar<int64_t>(pos))});
    ASSERT_FALSE(r) << pos;
    EXPECT_NE(r.error().message().find("out of range"), std::string::npos) << r.error().to_string();
  }
}

TEST(ControlSequence, InsertAtPositionsAndEnd) {
  RuntimeValue s = seq_of({f32({1}, {1}), f32({1}, {2})});
  auto back = run_op("SequenceInsert", {s, RuntimeValue::of(f32({1}, {9})), RuntimeValue()});
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ((*back)[0].sequence.size(), 3u);
  EXPECT_EQ((*back)[0].sequence[2].data<float>()[0], 9);
  auto front = run_op("SequenceInsert", {s, RuntimeValue::of(f32({1}, {9})),
                                         RuntimeValue::of(Tensor::scalar<int64_t>(-2))});
  ASSERT_TRUE(front) << front.error().to_string();
  EXPECT_EQ((*front)[0].sequence[0].data<float>()[0], 9);
  EXPECT_EQ((*front)[0].sequence[1].data<float>()[0], 1);
  auto wrong = run_op("SequenceInsert", {s, RuntimeValue::of(Tensor::scalar<int64_t>(1))});
  ASSERT_FALSE(wrong);
  auto far = run_op("SequenceInsert", {s, RuntimeValue::of(f32({1}, {9})),
                                       RuntimeValue::of(Tensor::scalar<int64_t>(3))});
  ASSERT_FALSE(far);
}

TEST(ControlSequence, EraseDefaultsToTheLastElement) {
  RuntimeValue s = seq_of({f32({1}, {1}), f32({1}, {2}), f32({1}, {3})});
  auto last = run_op("SequenceErase", {s});
  ASSERT_TRUE(last) << last.error().to_string();
  ASSERT_EQ((*last)[0].sequence.size(), 2u);
  EXPECT_EQ((*last)[0].sequence[1].data<float>()[0], 2);
  auto first = run_op("SequenceErase", {s, RuntimeValue::of(Tensor::scalar<int64_t>(-3))});
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_EQ((*first)[0].sequence[0].data<float>()[0], 2);
  auto empty = run_op("SequenceErase", {RuntimeValue::of_sequence({}, DType::kF32)});
  ASSERT_FALSE(empty);
}

TEST(ControlSequence, EmptyHasTheRequestedDtype) {
  auto r = run_op("SequenceEmpty", {}, {{"dtype", int64_t{7}}});
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE((*r)[0].is_sequence());
  EXPECT_TRUE((*r)[0].sequence.empty());
  EXPECT_EQ((*r)[0].elem_type, DType::kI64);
  auto dflt = run_op("SequenceEmpty", {});
  ASSERT_TRUE(dflt);
  EXPECT_EQ((*dflt)[0].elem_type, DType::kF32);
}

Tensor iota23() {
  return f32({2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST(ControlSequence, SplitToSequenceWithoutSplit) {
  auto keep = run_op("SplitToSequence", {RuntimeValue::of(iota23())}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(keep) << keep.error().to_string();
  ASSERT_EQ((*keep)[0].sequence.size(), 3u);
  EXPECT_EQ((*keep)[0].sequence[1].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values_of<float>((*keep)[0].sequence[1]), (std::vector<float>{1, 4}));
  auto drop = run_op("SplitToSequence", {RuntimeValue::of(iota23())},
                     {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  ASSERT_TRUE(drop) << drop.error().to_string();
  EXPECT_EQ((*drop)[0].sequence[2].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values_of<float>((*drop)[0].sequence[2]), (std::vector<float>{2, 5}));
}

TEST(ControlSequence, SplitToSequenceScalarAndListSplits) {
  auto chunks = run_op("SplitToSequence",
                       {RuntimeValue::of(iota23()), RuntimeValue::of(Tensor::scalar<int64_t>(2))},
                       {{"axis", int64_t{1}}});
  ASSERT_TRUE(chunks) << chunks.error().to_string();
  ASSERT_EQ((*chunks)[0].sequence.size(), 2u);  // sizes 2 and 1
  EXPECT_EQ(values_of<float>((*chunks)[0].sequence[0]), (std::vector<float>{0, 1, 3, 4}));
  EXPECT_EQ(values_of<float>((*chunks)[0].sequence[1]), (std::vector<float>{2, 5}));
  auto sizes =
      run_op("SplitToSequence",
             {RuntimeValue::of(iota23()), RuntimeValue::of(Tensor::from<int64_t>({2}, {1, 2}))},
             {{"axis", int64_t{1}}});
  ASSERT_TRUE(sizes) << sizes.error().to_string();
  EXPECT_EQ((*sizes)[0].sequence[1].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of<float>((*sizes)[0].sequence[1]), (std::vector<float>{1, 2, 4, 5}));
  auto bad =
      run_op("SplitToSequence",
             {RuntimeValue::of(iota23()), RuntimeValue::of(Tensor::from<int64_t>({2}, {1, 1}))},
             {{"axis", int64_t{1}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("sum to 2"), std::string::npos) << bad.error().to_string();
  auto axis = run_op("SplitToSequence", {RuntimeValue::of(iota23())}, {{"axis", int64_t{2}}});
  ASSERT_FALSE(axis);
}

TEST(ControlSequence, ConcatFromSequenceConcatsOrStacks) {
  RuntimeValue s = seq_of({f32({1, 2}, {1, 2}), f32({1, 2}, {3, 4})});
  auto cat = run_op("ConcatFromSequence", {s}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(cat) << cat.error().to_string();
  EXPECT_EQ((*cat)[0].tensor.shape(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(values_of<float>((*cat)[0].tensor), (std::vector<float>{1, 2, 3, 4}));
  auto stack = run_op("ConcatFromSequence", {s}, {{"axis", int64_t{-1}}, {"new_axis", int64_t{1}}});
  ASSERT_TRUE(stack) << stack.error().to_string();
  EXPECT_EQ((*stack)[0].tensor.shape(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(values_of<float>((*stack)[0].tensor), (std::vector<float>{1, 3, 2, 4}));
  RuntimeValue ragged = seq_of({f32({1, 2}, {1, 2}), f32({1, 3}, {3, 4, 5})});
  auto ok = run_op("ConcatFromSequence", {ragged}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(values_of<float>((*ok)[0].tensor), (std::vector<float>{1, 2, 3, 4, 5}));
  auto bad = run_op("ConcatFromSequence", {ragged}, {{"axis", int64_t{0}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("except axis 0"), std::string::npos)
      << bad.error().to_string();
}

TEST(ControlSequence, SequenceMapAppliesTheBodyPerElement) {
  Graph body("body");
  ValueId a = body.add_input("a", DType::kF32, std::nullopt);
  ValueId b = body.add_input("b", DType::kF32, std::nullopt);
  body.add_output(body.add_node("Add", {a, b}, 1)[0]);
  RuntimeValue s = seq_of({f32({1}, {1}), f32({2}, {2, 3})});
  auto r = run_op("SequenceMap", {s, RuntimeValue::of(Tensor::scalar<float>(10))},
                  {{"body", share(std::move(body))}});
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ((*r)[0].sequence.size(), 2u);
  EXPECT_EQ(values_of<float>((*r)[0].sequence[1]), (std::vector<float>{12, 13}));
}

TEST(ControlOptional, WrapsTestsAndUnwraps) {
  auto full = run_op("Optional", {RuntimeValue::of(f32({1}, {5}))});
  ASSERT_TRUE(full) << full.error().to_string();
  EXPECT_TRUE((*full)[0].optional);
  EXPECT_TRUE((*full)[0].is_tensor());
  auto has = run_op("OptionalHasElement", {(*full)[0]});
  ASSERT_TRUE(has) << has.error().to_string();
  EXPECT_TRUE((*has)[0].tensor.data<bool>()[0]);
  auto got = run_op("OptionalGetElement", {(*full)[0]});
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_FALSE((*got)[0].optional);
  EXPECT_EQ(values_of<float>((*got)[0].tensor), (std::vector<float>{5}));
}

TEST(ControlOptional, EmptyOptionalFromTypeAttribute) {
  auto empty = run_op("Optional", {}, {{"type", std::string("seq(tensor(int64))")}});
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_TRUE((*empty)[0].optional);
  EXPECT_TRUE((*empty)[0].is_none());
  EXPECT_EQ((*empty)[0].elem_type, DType::kI64);
  auto has = run_op("OptionalHasElement", {(*empty)[0]});
  ASSERT_TRUE(has) << has.error().to_string();
  EXPECT_FALSE((*has)[0].tensor.data<bool>()[0]);
  auto got = run_op("OptionalGetElement", {(*empty)[0]});
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("empty optional"), std::string::npos);
  auto untyped = run_op("Optional", {});
  ASSERT_FALSE(untyped);
  auto strings = run_op("Optional", {}, {{"type", std::string("tensor(string)")}});
  ASSERT_FALSE(strings);
  EXPECT_NE(strings.error().message().find("tensor(string)"), std::string::npos);
  auto bare = run_op("Optional", {}, {{"type", std::string("double")}});
  ASSERT_TRUE(bare) << bare.error().to_string();
  EXPECT_EQ((*bare)[0].elem_type, DType::kF64);
}

TEST(ControlOptional, Opset18AcceptsPlainValues) {
  RuntimeValue s = seq_of({f32({1}, {1})});
  auto has = run_op("OptionalHasElement", {s}, {}, 1, 18);
  ASSERT_TRUE(has) << has.error().to_string();
  EXPECT_TRUE((*has)[0].tensor.data<bool>()[0]);
  auto got = run_op("OptionalGetElement", {s}, {}, 1, 18);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE((*got)[0].is_sequence());
  // An omitted input (opset 18) has no element.
  auto none = run_op("OptionalHasElement", {RuntimeValue()}, {}, 1, 18);
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_FALSE((*none)[0].tensor.data<bool>()[0]);
}

}  // namespace
}  // namespace hone::eval::testing
