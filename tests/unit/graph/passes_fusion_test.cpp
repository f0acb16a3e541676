// BatchNormalization folding, bias fusion and transpose elimination: each
// rewrite keeps the outputs on the reference, and near-misses stay as they are.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

ValueId batch_norm(GraphBuilder& b, std::mt19937& rng, ValueId x, int64_t c) {
  return b.op("BatchNormalization",
              {x, b.constant("", uniform(rng, {c}, 0.5f, 1.5f)), b.constant("", uniform(rng, {c})),
               b.constant("", uniform(rng, {c})), b.constant("", uniform(rng, {c}, 0.5f, 1.5f))},
              {{"epsilon", 1e-3f}});
}

TEST(PassesBatchNorm, FoldsIntoConvWithAndWithoutBias) {
  std::mt19937 rng(1);
  GraphBuilder b("conv_bn");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 3, 6, 6});
  ValueId c1 = b.conv(x, b.constant("w1", uniform(rng, {4, 3, 3, 3})),
                      b.constant("b1", uniform(rng, {4})), {.pads = {1, 1, 1, 1}});
  ValueId h = b.relu(batch_norm(b, rng, c1, 4));
  // Grouped (depthwise) and bias-less: weights are scaled per output channel all the same.
  ValueId c2 = b.conv(h, b.constant("w2", uniform(rng, {4, 1, 3, 3})), kNoValue, {.group = 4});
  b.output(batch_norm(b, rng, c2, 4), "y");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fold_batch_norm(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 2);
  EXPECT_EQ(count_op(*out, "BatchNormalization"), 0u);
  EXPECT_EQ(count_op(*out, "Conv"), 2u);
  EXPECT_EQ(out->value(out->outputs()[0]).name, "y");
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3, 6, 6})}));
}

TEST(PassesBatchNorm, ConvOutputWithAnotherReaderIsNotFolded) {
  std::mt19937 rng(2);
  GraphBuilder b("conv_bn_shared");
  ValueId x = b.input("x", DType::kF32, Shape{1, 2, 4, 4});
  ValueId c = b.conv(x, b.constant("w", uniform(rng, {2, 2, 1, 1})), kNoValue);
  b.output(b.add(batch_norm(b, rng, c, 2), c), "y");  // c is also read by the Add
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fold_batch_norm(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
  EXPECT_EQ(count_op(*out, "BatchNormalization"), 1u);
}

TEST(PassesBatchNorm, FoldsIntoGemmButNotWithRuntimeWeights) {
  std::mt19937 rng(3);
  GraphBuilder b("gemm_bn");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 5});
  ValueId w = b.input("w", DType::kF32, Shape{5, 3});
  ValueId g1 = b.gemm(x, b.constant("wt", uniform(rng, {3, 5})), b.constant("c", uniform(rng, {3})),
                      {.trans_b = true, .beta = 0.5f});
  b.output(batch_norm(b, rng, g1, 3), "y1");
  ValueId g2 = b.gemm(x, w, kNoValue);  // B is an input: nothing to fold into
  b.output(batch_norm(b, rng, g2, 3), "y2");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fold_batch_norm(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 1);
  EXPECT_EQ(count_op(*out, "BatchNormalization"), 1u);
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {4, 5}), uniform(rng, {5, 3})}));
}

/// Pad of `x` (opset 11+: pads as an i64 input) with an optional fill.
ValueId pad(GraphBuilder& b, ValueId x, std::vector<int64_t> pads, float fill = 0.0f,
            const char* mode = "constant") {
  const auto n = static_cast<int64_t>(pads.size());
  return b.op("Pad", {x, b.constant("", Tensor::from<int64_t>({n}, pads)), b.scalar_f32("", fill)},
              {{"mode", std::string(mode)}});
}

TEST(PassesPad, ZeroSpatialPadFoldsIntoConvPads) {
  std::mt19937 rng(21);
  GraphBuilder b("pad_conv");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 3, 9, 9});
  // tf2onnx's "same" padding of a strided conv: bottom/right only, then pads 0.
  ValueId c1 = b.conv(pad(b, x, {0, 0, 0, 0, 0, 0, 1, 1}),
                      b.constant("w1", uniform(rng, {4, 3, 3, 3})), kNoValue, {.strides = {2, 2}});
  // Asymmetric pad added to the Conv's own pads.
  ValueId c2 = b.conv(pad(b, b.relu(c1), {0, 0, 2, 0, 0, 0, 1, 3}),
                      b.constant("w2", uniform(rng, {2, 4, 3, 3})),
                      b.constant("b2", uniform(rng, {2})), {.pads = {1, 1, 0, 1}});
  b.output(c2, "y");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_pad(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 2);
  EXPECT_EQ(count_op(*out, "Pad"), 0u);
  for (const Node& n : out->nodes()) {
    if (n.op_type == "Conv" && n.inputs.size() > 2) {
      EXPECT_EQ(n.attr_ints("pads"), (std::vector<int64_t>{3, 1, 1, 4}));
    }
  }
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3, 9, 9})}));
}

TEST(PassesPad, PadsThatAreNotZerosOnSpatialAxesStay) {
  std::mt19937 rng(22);
  GraphBuilder b("pad_miss");
  ValueId x = b.input("x", DType::kF32, Shape{1, 2, 5, 5});
  ValueId w = b.constant("w", uniform(rng, {2, 2, 3, 3}));
  b.output(b.conv(pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}, 0.5f), w, kNoValue), "fill");
  b.output(b.conv(pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, "reflect"), w, kNoValue), "reflect");
  ValueId shared = pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1});
  b.output(b.add(shared, shared), "read_twice");
  b.output(b.conv(shared, w, kNoValue), "shared");
  ValueId w3 = b.constant("w3", uniform(rng, {2, 3, 3, 3}));
  b.output(b.conv(pad(b, x, {0, 1, 0, 0, 0, 0, 0, 0}), w3, kNoValue), "channels");
  b.output(b.op("Conv", {pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}), w},
                {{"auto_pad", std::string("SAME_UPPER")}}),
           "same");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_pad(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 0);
  EXPECT_EQ(count_op(*out, "Pad"), 5u);
}

TEST(PassesPad, ZeroSpatialPadFoldsIntoAveragePoolCountingThePads) {
  // PyTorch's export of avg_pool2d(x, 3, 1, padding=1) (count_include_pad):
  // Pad, then AveragePool without pads. Near-misses stay: a pool whose own
  // pads do not count, ceil_mode, a pad as wide as the window, a non-zero fill.
  std::mt19937 rng(23);
  GraphBuilder b("pad_pool");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 3, 9, 9});
  using V = std::vector<int64_t>;
  auto pool = [&](ValueId in, std::map<std::string, Attribute> extra) {
    extra["kernel_shape"] = V{3, 3};
    return b.op("AveragePool", {in}, std::move(extra));
  };
  b.output(pool(pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}), {}), "torch");
  b.output(pool(pad(b, x, {0, 0, 0, 2, 0, 0, 1, 0}),
                {{"pads", V{1, 0, 0, 0}}, {"count_include_pad", int64_t{1}}, {"strides", V{2, 2}}}),
           "added");
  b.output(pool(pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}), {{"pads", V{1, 1, 1, 1}}}), "own_uncounted");
  b.output(pool(pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}), {{"ceil_mode", int64_t{1}}}), "ceil");
  b.output(pool(pad(b, x, {0, 0, 3, 0, 0, 0, 0, 0}), {}), "whole_window");
  b.output(pool(pad(b, x, {0, 0, 1, 1, 0, 0, 1, 1}, 0.5f), {}), "fill");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_pad(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 2);
  EXPECT_EQ(count_op(*out, "Pad"), 4u);
  size_t counted = 0;
  for (const Node& n : out->nodes())
    if (n.op_type == "AveragePool" && n.inputs[0] == g.inputs()[0]) {
      EXPECT_EQ(n.attr_int("count_include_pad", 0), 1);
      const V pads = n.attr_ints("pads");
      EXPECT_TRUE(pads == (V{1, 1, 1, 1}) || pads == (V{1, 2, 1, 0})) << pads.size();
      ++counted;
    }
  EXPECT_EQ(counted, 2u);
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3, 9, 9})}));
}

TEST(PassesBias, ConvAddBecomesConvBiasAndFullSizeAddStays) {
  std::mt19937 rng(4);
  GraphBuilder b("conv_add");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 3, 5, 5});
  ValueId c1 = b.conv(x, b.constant("w1", uniform(rng, {4, 3, 3, 3})), kNoValue);
  ValueId y1 = b.add(b.constant("bias", uniform(rng, {1, 4, 1, 1})), c1);  // constant first
  ValueId c2 =
      b.conv(y1, b.constant("w2", uniform(rng, {4, 4, 1, 1})), b.constant("b2", uniform(rng, {4})));
  ValueId y2 = b.add(c2, b.constant("more", uniform(rng, {4, 1, 1})));
  // Near-miss: a constant as large as the output is no bias.
  ValueId c3 = b.conv(y2, b.constant("w3", uniform(rng, {2, 4, 1, 1})), kNoValue);
  b.output(b.add(c3, b.constant("full", uniform(rng, {1, 2, 3, 3}))), "y");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_bias(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 2);
  EXPECT_EQ(count_op(*out, "Add"), 1u);
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3, 5, 5})}));
}

TEST(PassesBias, MatMulAddOfMatricesBecomesGemmButBatchedMatMulStays) {
  std::mt19937 rng(5);
  GraphBuilder b("mm_add");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 6});
  ValueId h = b.relu(b.add(b.matmul(x, b.constant("w", uniform(rng, {6, 4}))),
                           b.constant("b", uniform(rng, {4}))));
  b.output(h, "h");
  ValueId s = b.input("s", DType::kF32, Shape{2, Dim::symbol("n"), 6});
  b.output(b.add(b.matmul(s, b.constant("w3", uniform(rng, {6, 4}))),
                 b.constant("b3", uniform(rng, {4}))),
           "batched");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = fuse_bias(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 1);
  EXPECT_EQ(count_op(*out, "Gemm"), 1u);
  EXPECT_EQ(count_op(*out, "MatMul"), 1u);
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {3, 6}), uniform(rng, {2, 3, 6})}));
}

TEST(PassesTranspose, CancellingPairsGoAndOthersMerge) {
  std::mt19937 rng(6);
  GraphBuilder b("transposes");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4});
  ValueId t = b.transpose(b.transpose(x, {0, 2, 1}), {0, 2, 1});  // cancels, read by Relu
  ValueId r = b.relu(t);
  b.output(b.transpose(b.transpose(r, {1, 0, 2}), {1, 0, 2}),
           "same");  // cancels into a graph output
  b.output(b.transpose(b.transpose(r, {2, 0, 1}), {0, 2, 1}), "merged");  // one Transpose [2,1,0]
  ValueId shared = b.transpose(x, {2, 1, 0});  // read twice: the pair stays
  b.output(b.transpose(shared, {1, 0, 2}), "kept");
  b.output(b.sigmoid(shared), "other");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = eliminate_transposes(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 3);
  EXPECT_EQ(count_op(*out, "Transpose"), 3u);  // merged, and the kept pair
  EXPECT_EQ(count_op(*out, "Identity"), 1u);   // keeps the name 'same'
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3, 4})}, 0.0, /*bitwise=*/true));
}

TEST(PassesTranspose, TransposedMatMulOperandsBecomeGemmFlags) {
  std::mt19937 rng(7);
  GraphBuilder b("mm_t");
  ValueId a = b.input("a", DType::kF32, Shape{5, 3});
  ValueId w = b.input("w", DType::kF32, Shape{4, 5});
  b.output(b.matmul(b.transpose(a, {1, 0}), b.transpose(w, {1, 0})), "y");
  // Near-miss: a batched operand (rank 3) is no Gemm.
  ValueId s = b.input("s", DType::kF32, Shape{2, 5, 3});
  b.output(b.matmul(b.transpose(s, {0, 2, 1}), a), "z");
  Graph g = *std::move(b).build();
  PassStats st;
  auto out = eliminate_transposes(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.rewritten, 1);
  ASSERT_EQ(count_op(*out, "Gemm"), 1u);
  for (const Node& n : out->nodes())
    if (n.op_type == "Gemm") {
      EXPECT_EQ(n.attr_int("transA", 0), 1);
      EXPECT_EQ(n.attr_int("transB", 0), 1);
    }
  EXPECT_EQ(count_op(*out, "Transpose"), 1u);
  EXPECT_TRUE(
      same_outputs(g, *out, {uniform(rng, {5, 3}), uniform(rng, {4, 5}), uniform(rng, {2, 5, 3})}));
}

TEST(PassesTranspose, TransposedConstantWeightsFoldAndIdentitiesGo) {
  std::mt19937 rng(8);
  GraphBuilder b("w_t");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 4});
  ValueId wt = b.transpose(b.constant("w", uniform(rng, {3, 4})), {1, 0});
  b.output(b.matmul(b.op("Identity", {x}), wt), "y");
  Graph g = *std::move(b).build();
  PassStats st;
  auto folded = fold_constants(g, &st);
  ASSERT_TRUE(folded) << folded.error().to_string();
  auto out = eliminate_transposes(*folded, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(st.folded, 1);
  EXPECT_EQ(st.rewritten, 1);
  ASSERT_EQ(out->nodes().size(), 1u);
  EXPECT_EQ(out->nodes()[0].op_type, "MatMul");
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 4})}, 0.0, /*bitwise=*/true));
}

TEST(PassesTranspose, DropoutThatDropsNothingGoes) {
  // Not training (no training_mode, or a constant false), or a ratio of 0 in
  // training mode (torchvision's attention dropout exported from eval mode):
  // the identity. A training Dropout with a ratio above 0 stays.
  std::mt19937 rng(9);
  auto graph = [](std::vector<Tensor> extra) {
    GraphBuilder b("dropout");
    ValueId x = b.input("x", DType::kF32, Shape{2, 3});
    std::vector<ValueId> ins{x};
    for (size_t i = 0; i < extra.size(); ++i)
      ins.push_back(b.constant("c" + std::to_string(i), std::move(extra[i])));
    b.output(b.relu(b.op("Dropout", ins)), "y");
    return *std::move(b).build();
  };
  auto flag = [](bool on) {
    Tensor t = Tensor::zeros(DType::kBool, {});
    t.data<uint8_t>()[0] = on ? 1 : 0;
    return t;
  };
  struct Case {
    const char* what;
    std::vector<Tensor> extra;
    bool goes;
  };
  std::vector<Case> cases;
  cases.push_back({"no inputs but x", {}, true});
  cases.push_back({"ratio 0.3, not training", {Tensor::scalar(0.3f), flag(false)}, true});
  cases.push_back({"ratio 0, training", {Tensor::scalar(0.0f), flag(true)}, true});
  cases.push_back({"ratio 0.3, training", {Tensor::scalar(0.3f), flag(true)}, false});
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    Graph g = graph(std::move(c.extra));
    PassStats st;
    auto out = eliminate_transposes(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, "Dropout"), c.goes ? 0u : 1u);
    if (c.goes) {
      EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3})}, 0.0, true));
    }
  }
}

TEST(PassesTranspose, CastToItsOwnTypeGoes) {
  // llama's softmax(x.float()).type_as(x) of an f32 x: two Casts f32 -> f32.
  // A Cast that changes the type stays.
  std::mt19937 rng(10);
  GraphBuilder b("casts");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  ValueId same = b.op("Cast", {x}, {{"to", int64_t{1}}});              // FLOAT
  ValueId wide = b.op("Cast", {b.relu(same)}, {{"to", int64_t{11}}});  // DOUBLE
  b.output(b.op("Cast", {wide}, {{"to", int64_t{1}}}), "y");
  const Graph g = *std::move(b).build();
  PassStats st;
  auto out = eliminate_transposes(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(count_op(*out, "Cast"), 2u);
  EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 3})}, 0.0, true));
}

}  // namespace
}  // namespace hone
