// Shape propagation of the reshaping, indexing and reducing ops through the
// shared shape functions (ops/shape_fn_tensor.h): symbols flow through, what
// nobody can tell stays unknown, a rule's error leaves the value unshaped.
#include <gtest/gtest.h>

#include <cstdint>

#include "hone/graph_builder.h"
#include "ops/nonzero.h"
#include "passes/shape_propagation.h"

namespace hone {
namespace {

std::string shape_of(const Graph& g, ValueId v) {
  return g.value(v).shape ? g.value(v).shape->to_string() : "none";
}

ValueId ints(GraphBuilder& b, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return b.constant("", Tensor::from<int64_t>({n}, v));
}

TEST(ShapePropagationTensor, ReshapeFlattenSqueezeKeepSymbols) {
  GraphBuilder b("views");
  const Dim batch = Dim::symbol("batch");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 4, 8});
  ValueId merged = b.op("Reshape", {x, ints(b, {0, -1})});
  ValueId flat = b.op("Flatten", {x}, {{"axis", int64_t{1}}});
  ValueId ones = b.input("ones", DType::kF32, Shape{1, 3, 1});
  ValueId squeezed = b.op("Squeeze", {ones});  // no axes: every dim of 1
  ValueId unsqueezed = b.op("Unsqueeze", {x, ints(b, {0, -1})});
  ValueId bad = b.op("Reshape", {x, ints(b, {-1, -1})});
  for (ValueId v : {merged, flat, squeezed, unsqueezed, bad}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, merged), "[batch,32]");
  EXPECT_EQ(shape_of(*g, flat), "[batch,32]");
  EXPECT_EQ(shape_of(*g, squeezed), "[3]");
  EXPECT_EQ(shape_of(*g, unsqueezed), "[1,batch,4,8,1]");
  EXPECT_EQ(shape_of(*g, bad), "none");
}

TEST(ShapePropagationTensor, ReductionsArgMaxAndGathers) {
  GraphBuilder b("reduce");
  const Dim batch = Dim::symbol("batch");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 4, 8});
  ValueId axes = b.input("axes", DType::kI64, Shape{1});
  ValueId summed = b.op("ReduceSum", {x, ints(b, {-1})}, {{"keepdims", int64_t{0}}});
  ValueId all = b.op("ReduceMax", {x});
  ValueId open = b.op("ReduceMean", {x, axes});  // keepdims: the rank stays
  ValueId arg = b.op("ArgMax", {x}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
  ValueId idx = b.input("idx", DType::kI64, Shape{batch, 2, 8});
  ValueId picked = b.op("GatherElements", {x, idx}, {{"axis", int64_t{1}}});
  // GatherND (ops::gather_nd_shape): rows by tuples per batch row; a tuple
  // length nobody knows leaves the shape unknown.
  ValueId tuples = b.input("tuples", DType::kI64, Shape{batch, 3, 1});
  ValueId rows = b.op("GatherND", {x, tuples}, {{"batch_dims", int64_t{1}}});
  ValueId open_k =
      b.op("GatherND", {x, b.input("open_k", DType::kI64, Shape{2, Dim::symbol("k")})});
  for (ValueId v : {summed, all, open, arg, picked, rows, open_k}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, summed), "[batch,4]");
  EXPECT_EQ(shape_of(*g, all), "[1,1,1]");
  ASSERT_EQ(g->value(open).shape->rank(), 3u);
  EXPECT_TRUE((*g->value(open).shape)[0].is_unknown());
  EXPECT_EQ(shape_of(*g, arg), "[batch,8]");
  EXPECT_EQ(g->value(arg).dtype, DType::kI64);
  EXPECT_EQ(shape_of(*g, picked), "[batch,2,8]");
  EXPECT_EQ(shape_of(*g, rows), "[batch,3,8]");
  EXPECT_EQ(shape_of(*g, open_k), "none");
}

TEST(ShapePropagationTensor, CastAndArgMaxTakeTheirDtype) {
  // A graph built in C++ has no importer to infer dtypes: a backend that keeps
  // an integer block input's dtype (cuda) reads the Cast's target from here.
  GraphBuilder b("casts");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6});
  ValueId ids = b.op("Cast", {x}, {{"to", int64_t{7}}});
  ValueId back = b.op("Cast", {ids}, {{"to", int64_t{1}}});
  ValueId mask = b.op("Cast", {x}, {{"to", int64_t{9}}});
  // A Reshape to a target of unknown length: no rank, so no shape.
  ValueId target = b.input("target", DType::kI64, Shape{Dim::symbol("k")});
  ValueId unshaped = b.op("Reshape", {x, target});
  ValueId arg = b.op("ArgMax", {unshaped}, {{"axis", int64_t{0}}});
  for (ValueId v : {ids, back, mask, arg}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(g->value(ids).dtype, DType::kI64);
  EXPECT_EQ(g->value(back).dtype, DType::kF32);
  EXPECT_EQ(g->value(mask).dtype, DType::kBool);
  EXPECT_EQ(g->value(arg).dtype, DType::kI64);  // known where the shape is not
  EXPECT_EQ(shape_of(*g, ids), "[batch,6]");
}

TEST(ShapePropagationTensor, IndexOutputsAreI64) {
  // TopK's and MaxPool's indices, NonZero's positions: i64 whatever the data's
  // dtype (DGCNN gathers neighbours by TopK's indices; a backend reads them as
  // integers only if the graph says they are).
  GraphBuilder b("indices");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 1, 8, 8});
  auto topk =
      b.op_n("TopK", {b.reshape(x, {-1, 64}), b.constant("k", Tensor::from<int64_t>({1}, {3}))}, 2,
             {{"axis", int64_t{-1}}});
  auto pool = b.op_n("MaxPool", {x}, 2, {{"kernel_shape", std::vector<int64_t>{2, 2}}});
  ValueId nz = b.op("NonZero", {x});
  for (ValueId v : {topk[0], topk[1], pool[0], pool[1], nz}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(g->value(topk[0]).dtype, DType::kF32);
  EXPECT_EQ(g->value(topk[1]).dtype, DType::kI64);
  EXPECT_EQ(g->value(pool[0]).dtype, DType::kF32);
  EXPECT_EQ(g->value(pool[1]).dtype, DType::kI64);
  EXPECT_EQ(g->value(nz).dtype, DType::kI64);
}

TEST(ShapePropagationTensor, TopKTakesKAlongItsAxisAndNonZeroNamesItsLength) {
  // A Mixtral router as TorchScript exports it (no value_info): TopK's
  // outputs, the one_hot mask of its indices and the positions NonZero finds,
  // whose length is a symbol of its own (ops/nonzero.h).
  GraphBuilder b("route");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("tokens"), 4});
  auto top = b.op_n("TopK", {x, b.constant("k", Tensor::from<int64_t>({1}, {2}))}, 2,
                    {{"axis", int64_t{-1}}});
  ValueId hot = b.op("OneHot",
                     {top[1], b.constant("depth", Tensor::from<int64_t>({}, {4})),
                      b.constant("values", Tensor::from<int64_t>({2}, {0, 1}))},
                     {{"axis", int64_t{-1}}});
  ValueId nz = b.op("NonZero", {hot});
  for (ValueId v : {top[0], top[1], nz}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, top[0]), "[tokens,2]");
  EXPECT_EQ(shape_of(*g, top[1]), "[tokens,2]");
  EXPECT_EQ(shape_of(*g, hot), "[tokens,2,4]");
  EXPECT_EQ(shape_of(*g, nz), "[3," + ops::nonzero_length(g->value(nz).name).symbol_name() + "]");
}

TEST(ShapePropagationTensor, OneHotTakesItsValuesTypeAndInsertsTheDepth) {
  // Mixtral's one_hot of TopK's i64 indices: f32 or i64 values, the depth at
  // the (negative) axis.
  GraphBuilder b("one_hot");
  ValueId idx = b.input("idx", DType::kI64, Shape{Dim::symbol("tokens"), 2});
  ValueId depth = b.constant("depth", Tensor::from<int64_t>({}, {8}));
  ValueId last = b.op("OneHot", {idx, depth, b.constant("v", Tensor::from<float>({2}, {0, 1}))},
                      {{"axis", int64_t{-1}}});
  ValueId first = b.op("OneHot", {idx, depth, b.constant("w", Tensor::from<int64_t>({2}, {0, 1}))},
                       {{"axis", int64_t{0}}});
  b.output(last);
  b.output(first);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(g->value(last).dtype, DType::kF32);
  EXPECT_EQ(g->value(first).dtype, DType::kI64);
  ASSERT_TRUE(g->value(last).shape);
  ASSERT_TRUE(g->value(first).shape);
  EXPECT_EQ(*g->value(last).shape, (Shape{Dim::symbol("tokens"), 2, 8}));
  EXPECT_EQ(*g->value(first).shape, (Shape{8, Dim::symbol("tokens"), 2}));
}

TEST(ShapePropagationTensor, SliceAndSplitKeepWhatTheyCanTell) {
  GraphBuilder b("slices");
  const Dim batch = Dim::symbol("batch");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 116, 28});
  // Static axis 1 halved (ShuffleNet's channel split); the symbolic axis whole.
  ValueId half = b.op("Slice", {x, ints(b, {58}), ints(b, {116}), ints(b, {1})});
  ValueId whole = b.op("Slice", {x, ints(b, {0, 1}), ints(b, {INT64_MAX, -1}), ints(b, {0, 2})});
  ValueId flipped =
      b.op("Slice", {x, ints(b, {INT64_MAX}), ints(b, {INT64_MIN}), ints(b, {0}), ints(b, {-1})});
  ValueId part = b.op("Slice", {x, ints(b, {1}), ints(b, {INT64_MAX}), ints(b, {0})});
  ValueId bad = b.op("Slice", {x, ints(b, {0}), ints(b, {1}), ints(b, {3})});  // no axis 3
  const std::vector<ValueId> split =
      b.op_n("Split", {x, ints(b, {16, 100})}, 2, {{"axis", int64_t{1}}});
  for (ValueId v : {half, whole, flipped, part, bad, split[0], split[1]}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, half), "[batch,58,28]");
  EXPECT_EQ(shape_of(*g, whole), "[batch,116,26]");
  EXPECT_EQ(shape_of(*g, flipped), "[batch,116,28]");
  EXPECT_EQ(shape_of(*g, part), "[(batch-1),116,28]");  // named, checked when code runs
  EXPECT_EQ(shape_of(*g, bad), "none");
  EXPECT_EQ(shape_of(*g, split[0]), "[batch,16,28]");
  EXPECT_EQ(shape_of(*g, split[1]), "[batch,100,28]");
}

TEST(ShapePropagationTensor, PadGrowsStaticAxesAndNamesPaddedSymbols) {
  GraphBuilder b("pads");
  const Dim batch = Dim::symbol("batch");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 56, 5});
  // Swin's window padding: H and W padded after, a crop beside it.
  ValueId padded = b.op("Pad", {x, ints(b, {0, 0, 1, 0, 7, -2})});
  ValueId on_batch = b.op("Pad", {x, ints(b, {1, 0, 0, 0, 0, 0})});
  ValueId bad = b.op("Pad", {x, ints(b, {0, 1})});  // pads of the wrong length
  for (ValueId v : {padded, on_batch, bad}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, padded), "[batch,63,4]");
  EXPECT_EQ(shape_of(*g, on_batch), "[(batch+1),56,5]");  // a padded symbol: an expression of it
  EXPECT_EQ(shape_of(*g, bad), "none");
}

TEST(ShapePropagationTensor, ScattersKeepTheirDatasShapeOverAnExportersPlaceholders) {
  // A GAT's softmax sums: ScatterElements into zeros [nodes, heads*batch], read
  // again by Gather; the exporter named the result's dims unk__N.
  GraphBuilder b("scatter");
  const Dim nodes = Dim::symbol("seq"), wide = Dim::symbol("(4*batch)"), e = Dim::symbol("e");
  ValueId data = b.input("data", DType::kF32, Shape{nodes, wide});
  ValueId idx = b.input("idx", DType::kI64, Shape{e, wide});
  ValueId upd = b.input("upd", DType::kF32, Shape{e, wide});
  ValueId summed = b.op("ScatterElements", {data, idx, upd},
                        {{"axis", int64_t{0}}, {"reduction", std::string("add")}});
  ValueId ids = b.input("ids", DType::kI64, Shape{nodes, 3});
  ValueId rows = b.input("rows", DType::kI64, Shape{2, 1});
  ValueId put = b.op("ScatterND", {ids, rows, b.input("vals", DType::kI64, Shape{2, 3})});
  for (ValueId v : {summed, put}) b.output(v);
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  g->value(summed).shape = Shape{Dim::symbol("unk__5"), Dim::symbol("unk__6")};
  passes::propagate_shapes(*g);
  EXPECT_EQ(shape_of(*g, summed), "[seq,(4*batch)]");
  EXPECT_EQ(shape_of(*g, put), "[seq,3]");
  EXPECT_EQ(g->value(put).dtype, DType::kI64);
}

}  // namespace
}  // namespace hone
