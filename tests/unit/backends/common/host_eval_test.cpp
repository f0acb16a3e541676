// The host evaluation of shape subgraphs every compiling backend shares
// (common/host_eval.h): which nodes are host nodes under each policy, and
// what evaluating them gives from dims and constants alone.
#include "backends/common/host_eval.h"

#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "backends/common/static_dims.h"
#include "hone/graph_builder.h"

namespace hone::host_eval {
namespace {

using Ints = std::vector<int64_t>;

Tensor i64s(Ints v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

const Node& producer(const Graph& g, ValueId v) {
  return g.node(g.value(v).producer);
}

/// Evaluates every host node of `g` in order, as a backend's plan does, with
/// `dims` as the dims of the graph's inputs; returns what each value became.
std::map<ValueId, Tensor> evaluate_all(const Graph& g, Policy p, const std::vector<Ints>& dims) {
  std::map<ValueId, Tensor> known;
  std::map<ValueId, Ints> dims_of;
  for (size_t i = 0; i < dims.size(); ++i) dims_of[g.inputs()[i]] = dims[i];
  Env env;
  env.dims = [&](ValueId v) -> const Ints* {
    auto it = dims_of.find(v);
    return it == dims_of.end() ? nullptr : &it->second;
  };
  env.value = [&](ValueId v) -> const Tensor* {
    if (auto it = known.find(v); it != known.end()) return &it->second;
    return g.value(v).initializer ? &*g.value(v).initializer : nullptr;
  };
  for (const Node& n : g.nodes()) {
    if (!host_node(g, n, p)) continue;
    auto outs = evaluate(g, n, env);
    EXPECT_TRUE(outs) << outs.error().to_string();
    if (!outs) break;
    known[n.outputs[0]] = (*outs)[0];
    dims_of[n.outputs[0]] = (*outs)[0].shape();
  }
  return known;
}

TEST(HostEval, AttentionReshapeChainIsEvaluatedFromDims) {
  // x [batch, seq, 24] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1, 2, 12])):
  // the head split an exporter writes when the batch is symbolic.
  GraphBuilder b("heads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 24});
  ValueId h = b.relu(x);
  ValueId shape = b.op("Shape", {x});
  ValueId batch = b.op("Gather", {shape, b.constant("zero", Tensor::scalar<int64_t>(0))});
  ValueId u = b.op("Unsqueeze", {batch, b.constant("ax", i64s({0}))});
  ValueId target = b.concat({u, b.constant("rest", i64s({-1, 2, 12}))}, 0);
  ValueId r = b.op("Reshape", {h, target});
  b.output(r, "y");
  Graph g = *std::move(b).build();
  for (Policy p : {Policy::kIntegers, Policy::kAnyDtype}) {
    EXPECT_TRUE(host_node(g, producer(g, shape), p));
    EXPECT_TRUE(host_node(g, producer(g, target), p));
    EXPECT_TRUE(host_value(g, target, p));
    EXPECT_FALSE(host_node(g, producer(g, h), p)) << "Relu reads data";
    EXPECT_FALSE(host_node(g, producer(g, r), p)) << "Reshape's input 0 is data";
  }
  auto known = evaluate_all(g, Policy::kIntegers, {{5, 7, 24}});
  ASSERT_TRUE(known.count(target));
  EXPECT_EQ(known[target].span<int64_t>().size(), 4u);
  EXPECT_EQ(Ints(known[target].span<int64_t>().begin(), known[target].span<int64_t>().end()),
            (Ints{5, -1, 2, 12}));
  // Another signature, other values: nothing is cached across signatures.
  known = evaluate_all(g, Policy::kIntegers, {{2, 3, 24}});
  EXPECT_EQ(known[target].span<int64_t>()[0], 2);
}

TEST(HostEval, ACountCappedByAConstantIsAHostValue) {
  // TopK's K as torchvision's detectors compute it: min(count, 300) by ReduceMin
  // over Concat(Unsqueeze(Gather(Shape(scores), 0)), [300]).
  GraphBuilder b("topk_k");
  ValueId scores = b.input("scores", DType::kF32, Shape{Dim::symbol("n")});
  ValueId count =
      b.op("Gather", {b.op("Shape", {scores}), b.constant("zero", Tensor::scalar<int64_t>(0))});
  ValueId both = b.concat(
      {b.op("Unsqueeze", {count, b.constant("ax", i64s({0}))}), b.constant("cap", i64s({300}))}, 0);
  ValueId k = b.op("ReduceMin", {both}, {{"keepdims", int64_t{1}}});
  ValueId most = b.op("ReduceMax", {both}, {{"keepdims", int64_t{1}}});
  auto topk = b.op_n("TopK", {scores, k}, 2, {});
  b.output(topk[0], "top");
  b.output(most, "most");
  Graph g = *std::move(b).build();
  for (Policy p : {Policy::kIntegers, Policy::kAnyDtype}) {
    EXPECT_TRUE(host_value(g, k, p));
    EXPECT_TRUE(host_value(g, most, p));
    EXPECT_FALSE(host_node(g, producer(g, topk[0]), p)) << "TopK reads data";
  }
  for (const auto& [n, want] : std::vector<std::pair<int64_t, int64_t>>{{1000, 300}, {42, 42}}) {
    auto known = evaluate_all(g, Policy::kIntegers, {{n}});
    ASSERT_TRUE(known.count(k) && known.count(most));
    EXPECT_EQ(known[k].span<int64_t>()[0], want);
    EXPECT_EQ(known[most].span<int64_t>()[0], std::max<int64_t>(n, 300));
  }
}

TEST(HostEval, AttentionScaleIsAHostValueOnlyUnderAnyDtype) {
  // 1 / sqrt(head dim): Shape -> Slice(-1:) -> Cast(f32) -> Sqrt -> Div(1, .), as the
  // scaled-dot-product-attention export writes it.
  GraphBuilder b("scale");
  ValueId q = b.input("q", DType::kF32, Shape{Dim::symbol("batch"), 4, 10, 16});
  ValueId shape = b.op("Shape", {q});
  ValueId last = b.op("Slice", {shape, b.constant("s", i64s({-1})),
                                b.constant("e", i64s({std::numeric_limits<int64_t>::max()}))});
  ValueId f = b.op("Cast", {last}, {{"to", int64_t{1}}});
  ValueId scale = b.div(b.constant("one", Tensor::scalar<float>(1.0f)), b.op("Sqrt", {f}));
  b.output(b.mul(q, scale), "y");
  Graph g = *std::move(b).build();
  EXPECT_TRUE(host_node(g, producer(g, last), Policy::kIntegers));
  EXPECT_FALSE(host_node(g, producer(g, f), Policy::kIntegers)) << "a cast to f32";
  EXPECT_FALSE(host_value(g, scale, Policy::kIntegers));
  EXPECT_TRUE(host_value(g, scale, Policy::kAnyDtype));
  auto known = evaluate_all(g, Policy::kAnyDtype, {{3, 4, 10, 16}});
  ASSERT_TRUE(known.count(scale));
  ASSERT_EQ(known[scale].dtype(), DType::kF32);
  EXPECT_FLOAT_EQ(known[scale].data<float>()[0], 0.25f);
}

TEST(HostEval, MaskFromRangeAndWhereUnderAnyDtype) {
  // A causal-style mask [seq, seq] built from the sequence length alone.
  GraphBuilder b("mask");
  ValueId x = b.input("x", DType::kF32, Shape{1, Dim::symbol("seq"), 8});
  ValueId seq = b.op("Gather", {b.op("Shape", {x}), b.constant("one", Tensor::scalar<int64_t>(1))});
  ValueId r = b.op("Range", {b.constant("zero", Tensor::scalar<int64_t>(0)), seq,
                             b.constant("step", Tensor::scalar<int64_t>(1))});
  ValueId rows = b.op("Unsqueeze", {r, b.constant("ax", i64s({1}))});
  ValueId ge = b.op("GreaterOrEqual", {rows, r});
  ValueId mask = b.op("Where", {ge, b.constant("z", Tensor::scalar<float>(0.0f)),
                                b.constant("m", Tensor::scalar<float>(-1e9f))});
  b.output(b.add(x, b.op("ReduceSum", {mask, b.constant("ra", i64s({1}))})), "y");
  Graph g = *std::move(b).build();
  EXPECT_FALSE(host_node(g, producer(g, ge), Policy::kIntegers)) << "a bool result";
  EXPECT_TRUE(host_value(g, mask, Policy::kAnyDtype));
  auto known = evaluate_all(g, Policy::kAnyDtype, {{1, 3, 8}});
  ASSERT_TRUE(known.count(mask));
  const Tensor& m = known[mask];
  ASSERT_EQ(m.shape(), (Ints{3, 3}));
  EXPECT_FLOAT_EQ(m.data<float>()[0 * 3 + 1], -1e9f);  // row 0 < column 1
  EXPECT_FLOAT_EQ(m.data<float>()[2 * 3 + 1], 0.0f);
}

TEST(HostEval, AnIdentityOfTheSequencesSizeUnderAnyDtype) {
  // XLNet's torch.eye(qlen): EyeLike(ConstantOfShape(Concat(seq, seq))).
  GraphBuilder b("eye");
  ValueId x = b.input("x", DType::kF32, Shape{1, Dim::symbol("seq")});
  ValueId seq = b.op("Gather", {b.op("Shape", {x}), b.constant("one", i64s({1}))});
  ValueId zeros = b.op("ConstantOfShape", {b.op("Concat", {seq, seq}, {{"axis", int64_t{0}}})});
  ValueId eye = b.op("EyeLike", {zeros});
  b.output(b.op("MatMul", {x, eye}), "y");
  Graph g = *std::move(b).build();
  EXPECT_FALSE(host_value(g, eye, Policy::kIntegers)) << "an f32 result";
  EXPECT_TRUE(host_value(g, eye, Policy::kAnyDtype));
  auto known = evaluate_all(g, Policy::kAnyDtype, {{1, 3}});
  ASSERT_TRUE(known.count(eye));
  const Tensor& e = known[eye];
  ASSERT_EQ(e.shape(), (Ints{3, 3}));
  for (int64_t i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(e.data<float>()[i], i % 4 == 0 ? 1.0f : 0.0f);
}

TEST(HostEval, AConstantTableResizedToSizesFromDimsUnderAnyDtype) {
  // DINOv2's positions: a constant [1, C, 4, 4] table resized bilinearly to
  // the image's side // 2 (sizes Concat-ed from Shape), then added to data.
  GraphBuilder b("positions");
  ValueId x = b.input("x", DType::kF32, Shape{1, 2, Dim::symbol("side"), Dim::symbol("side")});
  std::vector<float> t(2 * 4 * 4);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(i);
  ValueId table = b.constant("table", Tensor::from<float>({1, 2, 4, 4}, t));
  ValueId hw =
      b.op("Slice", {b.op("Shape", {x}), b.constant("s", i64s({2})), b.constant("e", i64s({4}))});
  ValueId half = b.op("Div", {hw, b.constant("two", i64s({2}))});
  ValueId sizes = b.op("Concat", {b.constant("nc", i64s({1, 2})), half}, {{"axis", int64_t{0}}});
  ValueId none = b.constant("none", Tensor::zeros(DType::kF32, {0}));
  ValueId resized = b.op("Resize", {table, none, none, sizes}, {{"mode", std::string("linear")}});
  b.output(b.add(x, b.op("Resize", {resized, none, none, b.op("Shape", {x})},
                         {{"mode", std::string("nearest")}})),
           "y");
  Graph g = *std::move(b).build();
  g.opsets()[""] = 13;
  EXPECT_FALSE(host_value(g, resized, Policy::kIntegers)) << "an f32 result";
  EXPECT_TRUE(host_value(g, resized, Policy::kAnyDtype));
  auto known = evaluate_all(g, Policy::kAnyDtype, {{1, 2, 16, 16}});
  ASSERT_TRUE(known.count(resized));
  ASSERT_EQ(known[resized].shape(), (Ints{1, 2, 8, 8}));
  // 4 -> 8, half-pixel: output 0 reads input 0 alone (clamped), output 7 input 3.
  EXPECT_FLOAT_EQ(known[resized].data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(known[resized].data<float>()[2 * 64 - 1], 31.0f);
}

TEST(HostEval, ValuesComputedFromDataAreNotHostValues) {
  GraphBuilder b("data");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  ValueId idx = b.op("Cast", {x}, {{"to", int64_t{7}}});  // data turned into integers
  ValueId flat = b.op("Reshape", {idx, b.constant("s", i64s({-1}))});
  b.output(b.op("Shape", {flat}), "shape");
  b.output(flat, "flat");
  Graph g = *std::move(b).build();
  for (Policy p : {Policy::kIntegers, Policy::kAnyDtype}) {
    EXPECT_FALSE(host_value(g, idx, p));
    EXPECT_FALSE(host_value(g, flat, p));
    // Shape reads only dims: it is a host node whatever its input holds.
    EXPECT_TRUE(host_node(g, g.nodes().back(), p));
  }
}

TEST(HostEval, ShapeRangeAndUnknownDimsAreReported) {
  GraphBuilder b("shape15", 15);
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 5});
  ValueId s = b.op("Shape", {x}, {{"start", int64_t{1}}, {"end", int64_t{-1}}});
  b.output(s, "s");
  Graph g = *std::move(b).build();
  const Node& n = producer(g, s);
  const Ints dims = {2, 3, 4, 5};
  Env env;
  env.dims = [&](ValueId) { return &dims; };
  env.value = [](ValueId) -> const Tensor* { return nullptr; };
  auto out = evaluate(g, n, env);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(Ints((*out)[0].span<int64_t>().begin(), (*out)[0].span<int64_t>().end()), (Ints{3, 4}));
  env.dims = [](ValueId) -> const Ints* { return nullptr; };
  auto missing = evaluate(g, n, env);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kInternal);
  EXPECT_NE(missing.error().message().find("'x'"), std::string::npos) << missing.error().message();
}

TEST(HostEval, DeepSharedShapeSubgraphsAreHostNodes) {
  // 40 levels, each reading the previous level through two paths
  // (a diamond per level: 2^40 paths to the Shape at the top), then a mask
  // made from the result as swin_t's shifted windows make theirs (Equal,
  // Not, Cast to bool, Where): deeper than the old bound of 24, and walked
  // once per node.
  GraphBuilder b("deep");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
  ValueId v = b.op("Shape", {x});
  for (int i = 0; i < 40; ++i) {
    ValueId a = b.op("Mul", {v, b.constant("", i64s({1, 1}))});
    ValueId c = b.op("Sub", {v, b.constant("", i64s({0, 0}))});
    v = b.op("Add", {b.op("Sub", {a, c}), c});  // a - c + c
  }
  ValueId eq = b.op("Equal", {v, b.constant("four", i64s({4, 4}))});
  ValueId keep = b.op("Cast", {b.op("Not", {eq})}, {{"to", int64_t{9}}});
  ValueId mask =
      b.op("Where", {keep, b.constant("neg", Tensor::from<float>({2}, {-100.0f, -100.0f})),
                     b.constant("zero", Tensor::from<float>({2}, {0.0f, 0.0f}))});
  b.output(b.add(b.relu(x), mask), "y");
  const Graph g = *std::move(b).build();
  EXPECT_TRUE(host_node(g, producer(g, mask), Policy::kAnyDtype));
  EXPECT_FALSE(host_node(g, producer(g, mask), Policy::kIntegers));  // f32 and bool results
  EXPECT_TRUE(host_node(g, producer(g, v), Policy::kIntegers));
  const auto known = evaluate_all(g, Policy::kAnyDtype, {{3, 4}});
  ASSERT_TRUE(known.count(mask));
  const Tensor& m = known.at(mask);
  ASSERT_EQ(m.numel(), 2);
  EXPECT_EQ(m.data<float>()[0], -100.0f);  // dims [3, 4]: 3 != 4, kept
  EXPECT_EQ(m.data<float>()[1], 0.0f);
}

// A block whose Reshape target another block computed: the integer input is
// known (its values travel in the plan key), so what reads it is a host node;
// an input only Shape reads is dims-only; a Where's condition read as data is
// not known.
TEST(HostEval, KnownInputsMakeHostNodesAndTravelInTheKey) {
  GraphBuilder b("block");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6});
  ValueId ids = b.input("ids", DType::kI64, Shape{2, 3});
  ValueId dims = b.input("dims", DType::kI64, Shape{1});
  ValueId mask = b.input("mask", DType::kBool, Shape{2, 6});
  ValueId target = b.concat({b.op("Shape", {ids}, {{"end", int64_t{1}}}), dims}, 0);
  b.output(b.op("Reshape", {x, target}), "y");
  b.output(b.op("Where", {mask, x, b.scalar_f32("z", 0.0f)}), "w");
  const Graph g = *std::move(b).build();
  EXPECT_EQ(dims_only_inputs(g), (std::vector<bool>{false, true, false, false}));
  const Known known =
      known_inputs(g, [](const Node& n, size_t i) { return n.op_type == "Where" && i == 0; });
  EXPECT_FALSE(known[static_cast<size_t>(x)]);
  EXPECT_FALSE(known[static_cast<size_t>(ids)]);  // dims only
  EXPECT_TRUE(known[static_cast<size_t>(dims)]);
  EXPECT_FALSE(known[static_cast<size_t>(mask)]);  // read as data
  const Node& concat = producer(g, target);
  EXPECT_FALSE(host_node(g, concat, Policy::kIntegers));
  EXPECT_TRUE(host_node(g, concat, Policy::kIntegers, known));
  // The key: dims, then {index, dtype, values} of each input taken.
  const std::vector<Tensor> in{Tensor::zeros(DType::kF32, {2, 6}),
                               Tensor::zeros(DType::kI64, {2, 3}), i64s({6}),
                               Tensor::zeros(DType::kBool, {2, 6})};
  ShapeSignature key = signature_of(in);
  ASSERT_TRUE(append_values(key, in, {false, false, true, false}, 64));
  EXPECT_FALSE(append_values(key, in, {true, false, false, false}, 64));  // f32 is no known value
  auto values = values_of_key(key, in.size());
  ASSERT_TRUE(values) << values.error().to_string();
  ASSERT_EQ(values->size(), 1u);
  EXPECT_EQ((*values)[0].first, 2u);
  EXPECT_EQ((*values)[0].second.data<int64_t>()[0], 6);
  // ints(): the values, or an error naming what is missing or not an integer.
  Env env;
  env.value = [&](ValueId v) -> const Tensor* { return v == dims ? &in[2] : nullptr; };
  const Node& reshape = producer(g, g.outputs()[0]);
  auto missing = ints(reshape, 1, env, "Reshape shape");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("Reshape shape is not known"), std::string::npos);
  env.value = [&](ValueId) -> const Tensor* { return &in[0]; };
  auto f32 = ints(reshape, 1, env, "Reshape shape");
  ASSERT_FALSE(f32);
  EXPECT_EQ(f32.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hone::host_eval
