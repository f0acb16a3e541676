// Shape propagation of Range (its length from constants, or a sequence dim
// it counts up to) and the refinement of dims ONNX's inference left unknown
// or named with its "unk__N" placeholders.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

std::string shape_of(const Graph& g, ValueId v) {
  return g.value(v).shape ? g.value(v).shape->to_string() : "none";
}

ValueId scalar(GraphBuilder& b, int64_t v) {
  return b.constant("", Tensor::scalar<int64_t>(v));
}

TEST(ShapePropagationRange, LengthFromConstantsOrTheDimItCountsTo) {
  GraphBuilder b("range");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  ValueId seq =
      b.op("Cast", {b.op("Gather", {b.op("Shape", {x}), scalar(b, 1)})}, {{"to", int64_t{7}}});
  ValueId positions = b.op("Range", {scalar(b, 0), seq, scalar(b, 1)});
  ValueId stepped = b.op("Range", {scalar(b, 2), scalar(b, 11), scalar(b, 3)});  // 2 5 8
  ValueId empty = b.op("Range", {scalar(b, 5), scalar(b, 1), scalar(b, 1)});
  ValueId down = b.op("Range", {scalar(b, 5), scalar(b, 0), scalar(b, -2)});  // 5 3 1
  ValueId odd = b.op("Range", {scalar(b, 1), seq, scalar(b, 1)});             // seq - 1
  for (ValueId v : {positions, stepped, empty, down, odd}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, positions), "[seq]");
  EXPECT_EQ(shape_of(*g, stepped), "[3]");
  EXPECT_EQ(shape_of(*g, empty), "[0]");
  EXPECT_EQ(shape_of(*g, down), "[3]");
  EXPECT_EQ(g->value(odd).shape->rank(), 1u);
  EXPECT_TRUE((*g->value(odd).shape)[0].is_unknown());
}

TEST(ShapePropagationRange, AFloatRangeOfWholeNumbersCountsAsAnIntegerOne) {
  // torch.arange(seq, dtype=torch.float32): Range(0.0, Cast(seq, float), 1.0),
  // the positions of rotary tables (Falcon, Gemma, GPT-NeoX exports).
  GraphBuilder b("float_range");
  ValueId x = b.input("x", DType::kI64, Shape{1, Dim::symbol("seq")});
  ValueId seq =
      b.op("Cast", {b.op("Gather", {b.op("Shape", {x}), scalar(b, 1)})}, {{"to", int64_t{1}}});
  auto f = [&](float v) { return b.constant("", Tensor::scalar<float>(v)); };
  ValueId positions = b.op("Range", {f(0.0f), seq, f(1.0f)});
  ValueId stepped = b.op("Range", {f(2.0f), f(11.0f), f(3.0f)});  // float limit: not read
  ValueId half = b.op("Range", {f(0.0f), seq, f(0.5f)});          // not whole: unknown
  // XLNet's relative positions, arange(klen, -qlen, -1.0): 2 * seq of them.
  ValueId relative = b.op("Range", {seq, b.op("Neg", {seq}), f(-1.0f)});
  ValueId upward = b.op("Range", {b.op("Neg", {seq}), seq, f(-1.0f)});  // empty, not said
  for (ValueId v : {positions, stepped, half, relative, upward}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, positions), "[seq]");
  EXPECT_TRUE((*g->value(stepped).shape)[0].is_unknown()) << shape_of(*g, stepped);
  EXPECT_TRUE((*g->value(half).shape)[0].is_unknown()) << shape_of(*g, half);
  EXPECT_EQ(shape_of(*g, relative), "[(2*seq)]");
  EXPECT_TRUE((*g->value(upward).shape)[0].is_unknown()) << shape_of(*g, upward);
}

TEST(ShapePropagationRange, FromAComputedStartTheLengthIsLimitMinusStart) {
  // A KV-cache step's positions: Range(past, past + seq, 1) counts seq, so
  // the rotary tables multiply the new tokens' queries at dims aot can match.
  GraphBuilder b("past");
  ValueId k = b.input("k", DType::kF32, Shape{1, 2, Dim::symbol("past"), 16});
  ValueId ids = b.input("ids", DType::kI64, Shape{1, Dim::symbol("seq")});
  auto dim = [&](ValueId x, int64_t i) {
    return b.op("Gather", {b.op("Shape", {x}), scalar(b, i)});
  };
  ValueId past = dim(k, 2), seq = dim(ids, 1);
  ValueId positions = b.op("Range", {past, b.add(past, seq), scalar(b, 1)});
  ValueId back = b.op("Range", {seq, past, scalar(b, 1)});  // past - seq may be negative
  ValueId same = b.op("Range", {seq, seq, scalar(b, 1)});
  for (ValueId v : {positions, back, same}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, positions), "[seq]");
  EXPECT_TRUE((*g->value(back).shape)[0].is_unknown()) << shape_of(*g, back);
  EXPECT_EQ(shape_of(*g, same), "[0]");
}

TEST(ShapePropagationRange, EyeLikeHasItsInputsShapeAndItsDtype) {
  // XLNet's torch.eye(qlen): ConstantOfShape([seq, seq]) -> EyeLike.
  GraphBuilder b("eye");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("seq"), Dim::symbol("seq")});
  ValueId eye = b.op("EyeLike", {x});
  ValueId eye_bool = b.op("EyeLike", {x}, {{"dtype", int64_t{9}}});
  b.output(eye);
  b.output(eye_bool);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  g->value(eye).shape.reset();
  g->value(eye_bool).shape.reset();
  g->value(eye_bool).dtype = DType::kUndefined;
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, eye), "[seq,seq]");
  EXPECT_EQ(shape_of(*g, eye_bool), "[seq,seq]");
  EXPECT_EQ(g->value(eye_bool).dtype, DType::kBool);
}

TEST(ShapePropagationRange, PlaceholderDimsAreRefinedRealOnesKept) {
  GraphBuilder b("refine");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq")});
  ValueId y = b.relu(x);
  ValueId z = b.sigmoid(x);
  b.output(y);
  b.output(z);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  // As the importer leaves them after ONNX's own inference.
  g->value(y).shape = Shape{Dim::symbol("batch"), Dim::symbol("unk__7")};
  g->value(z).shape = Shape{Dim::symbol("batch"), Dim::symbol("unk__seq")};
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, y), "[batch,seq]");
  // An expression of a placeholder (a Slice of it, propagated before the
  // placeholder was refined) is refined too.
  g->value(y).shape = Shape{Dim::symbol("batch"), Dim::symbol("(unk__34-1)")};
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, y), "[batch,seq]");
  EXPECT_EQ(shape_of(*g, z), "[batch,unk__seq]");  // not a placeholder's name: kept
}

}  // namespace
}  // namespace hone
