// The blas non-conv kernels against the reference: Gemm/MatMul with
// broadcasting, pools, Softmax, LayerNormalization, reductions, layout ops,
// and fused element-wise chains.
#include "blas_test_util.h"

namespace hone::blas {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;

TEST(BlasOps, GemmTransposesAlphaBetaBroadcastC) {
  std::mt19937 rng(1);
  GraphBuilder b("gemm");
  ValueId a = b.input("a", DType::kF32, Shape{7, 5});
  b.output(b.gemm(a, b.constant("w", uniform(rng, {9, 7})), b.constant("c", uniform(rng, {9})),
                  {.trans_a = true, .trans_b = true, .alpha = 0.5f, .beta = 2.0f}),
           "y");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(g, {uniform(rng, {7, 5})});
  EXPECT_NE(plan_text(*be).find("gemm.f32.blas.sgemm +add"), std::string::npos) << plan_text(*be);
}

TEST(BlasOps, GemmRuntimeC) {
  std::mt19937 rng(2);
  GraphBuilder b("gemmc");
  ValueId a = b.input("a", DType::kF32, Shape{33, 17});
  ValueId c = b.input("c", DType::kF32, Shape{33, 1});
  b.output(b.gemm(a, b.constant("w", uniform(rng, {17, 40})), c), "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {33, 17}), uniform(rng, {33, 1})});
}

TEST(BlasOps, MatMulBatchedBroadcasting) {
  std::mt19937 rng(3);
  GraphBuilder b("mm");
  ValueId x = b.input("x", DType::kF32, Shape{2, 1, 3, 4});
  ValueId y = b.input("y", DType::kF32, Shape{5, 4, 6});
  b.output(b.matmul(x, y), "z");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 1, 3, 4}), uniform(rng, {5, 4, 6})});
}

TEST(BlasOps, MatMulOneDimensionalOperands) {
  std::mt19937 rng(4);
  GraphBuilder b("mm1");
  ValueId v = b.input("v", DType::kF32, Shape{4});
  ValueId m = b.input("m", DType::kF32, Shape{3, 4, 5});
  ValueId u = b.input("u", DType::kF32, Shape{5});
  b.output(b.matmul(b.matmul(v, m), u), "z");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {4}), uniform(rng, {3, 4, 5}), uniform(rng, {5})});
}

TEST(BlasOps, MatMulSharedWeightsRunsAsOneTallGemmWithResidual) {
  std::mt19937 rng(5);
  GraphBuilder b("mmres");
  ValueId x = b.input("x", DType::kF32, Shape{3, 50, 32});
  ValueId h = b.add(b.matmul(x, b.constant("w", uniform(rng, {32, 32}))),
                    b.constant("bias", uniform(rng, {32})));
  b.output(b.relu(b.add(h, x)), "y");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(g, {uniform(rng, {3, 50, 32})});
  EXPECT_EQ(be->kernel_executions(), 1u) << "MatMul, bias, residual and Relu are one unit\n"
                                         << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("matmul.f32.blas.sgemm +add,add,relu"), std::string::npos)
      << plan_text(*be);
}

TEST(BlasOps, Pools) {
  std::mt19937 rng(6);
  GraphBuilder b("pools");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 9, 8});
  b.output(b.op("MaxPool", {x},
                {{"kernel_shape", std::vector<int64_t>{3, 2}},
                 {"strides", std::vector<int64_t>{2, 2}},
                 {"pads", std::vector<int64_t>{1, 0, 1, 1}},
                 {"ceil_mode", int64_t{1}}}),
           "max");
  b.output(b.op("AveragePool", {x},
                {{"kernel_shape", std::vector<int64_t>{3, 3}},
                 {"strides", std::vector<int64_t>{2, 1}},
                 {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                 {"count_include_pad", int64_t{1}}}),
           "avg_pad");
  b.output(b.op("AveragePool", {x},
                {{"kernel_shape", std::vector<int64_t>{2, 3}},
                 {"pads", std::vector<int64_t>{1, 1, 0, 1}},
                 {"dilations", std::vector<int64_t>{2, 1}}}),
           "avg");
  b.output(b.global_average_pool(x), "gap");
  b.output(b.op("GlobalMaxPool", {x}), "gmp");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 9, 8})});
}

TEST(BlasOps, OneDimensionalPool) {
  std::mt19937 rng(7);
  GraphBuilder b("pool1d");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 11});
  b.output(b.op("MaxPool", {x},
                {{"kernel_shape", std::vector<int64_t>{3}}, {"strides", std::vector<int64_t>{2}}}),
           "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 11})});
}

TEST(BlasOps, SoftmaxLayerNormReductions) {
  std::mt19937 rng(8);
  GraphBuilder b("norms");
  ValueId x = b.input("x", DType::kF32, Shape{2, 5, 7});
  b.output(b.softmax(x, 1), "sm");
  b.output(b.op("LogSoftmax", {x}, {{"axis", int64_t{-1}}}), "lsm");
  b.output(b.layer_norm(x, b.constant("s", uniform(rng, {7})), b.constant("bb", uniform(rng, {7}))),
           "ln");
  b.output(b.layer_norm(x, b.constant("s2", uniform(rng, {5, 7})), kNoValue, 1, 1e-3f), "ln2");
  b.output(
      b.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}}),
      "mean");
  b.output(b.op("ReduceSum", {x, b.constant("ax", Tensor::from<int64_t>({1}, {-2}))}), "sum");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 5, 7}, -4.0f, 4.0f)});
}

TEST(BlasOps, LayoutOps) {
  std::mt19937 rng(9);
  GraphBuilder b("layout");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 5});
  ValueId t = b.transpose(x, {0, 2, 3, 1});
  ValueId c = b.concat({t, b.constant("k", uniform(rng, {2, 4, 5, 2})), t}, -1);
  b.output(b.reshape(c, {0, -1, 8}), "r");
  b.output(b.flatten(x, 2), "f");
  ValueId u = b.op("Unsqueeze", {x, b.constant("ua", Tensor::from<int64_t>({2}, {0, -1}))});
  b.output(b.op("Squeeze", {u, b.constant("sa", Tensor::from<int64_t>({1}, {0}))}), "s");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 4, 5})});
}

TEST(BlasOps, ElementwiseChainIsOneKernelWithBroadcasting) {
  std::mt19937 rng(10);
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape{3, 1, 6});
  ValueId y = b.input("y", DType::kF32, Shape{4, 1});
  ValueId h = b.mul(b.add(x, b.constant("c", uniform(rng, {6}))), y);  // broadcasts to [3,4,6]
  h = b.sub(b.scalar_f32("one", 1.0f), b.sigmoid(h));                  // reversed operand
  h = b.op("Clip", {b.op("LeakyRelu", {h}, {{"alpha", 0.2f}}), b.scalar_f32("lo", -0.1f),
                    b.scalar_f32("hi", 0.7f)});
  b.output(b.div(b.tanh(h), b.constant("d", uniform(rng, {3, 4, 1}, 1.0f, 2.0f))), "z");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(g, {uniform(rng, {3, 1, 6}), uniform(rng, {4, 1})});
  EXPECT_EQ(be->kernel_executions(), 1u) << plan_text(*be);
  EXPECT_NE(
      plan_text(*be).find("eltwise.f32.blas.fused(add,mul,sigmoid,sub,leaky_relu,clip,tanh,div)"),
      std::string::npos)
      << plan_text(*be);
}

TEST(BlasOps, GeluPatternFusesIntoOneChain) {
  std::mt19937 rng(11);
  GraphBuilder b("gelu");
  ValueId x = b.input("x", DType::kF32, Shape{4, 33});
  b.output(b.gelu(b.matmul(x, b.constant("w", uniform(rng, {33, 16})))), "y");
  Graph g = *std::move(b).build();
  const std::vector<Tensor> in{uniform(rng, {4, 33}, -3.0f, 3.0f)};
  // With the graph passes on, the pattern becomes one Gelu node: the MatMul's epilogue.
  auto fused = expect_matches_reference(g, in);
  EXPECT_EQ(fused->kernel_executions(), 1u) << plan_text(*fused);
  EXPECT_NE(plan_text(*fused).find("[matmul.f32.blas.sgemm +gelu]"), std::string::npos)
      << plan_text(*fused);
  auto be = expect_matches_reference(g, in, 2, /*optimize=*/false);
  // Without them, the erf form (Div, Erf, Add, Mul, Mul) reads x twice, so it cannot be the
  // MatMul's epilogue, but it is still one pass over the data.
  EXPECT_EQ(be->kernel_executions(), 2u) << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("eltwise.f32.blas.fused(div,erf,add,mul,mul)"), std::string::npos)
      << plan_text(*be);
}

TEST(BlasOps, UnaryActivations) {
  std::mt19937 rng(12);
  GraphBuilder b("acts");
  ValueId x = b.input("x", DType::kF32, Shape{5, 8});
  for (const char* op :
       {"Elu", "Selu", "HardSigmoid", "HardSwish", "Softplus", "Exp", "Abs", "Neg", "Erf"})
    b.output(b.op(op, {x}), std::string("y_") + op);
  b.output(b.op("Gelu", {x}, {{"approximate", std::string("tanh")}}), "gelu_tanh");
  b.output(b.op("Sqrt", {b.op("Abs", {x})}), "sqrt_abs");
  b.output(b.op("PRelu", {x, b.constant("slope", uniform(rng, {8}))}), "prelu");
  b.output(b.op("Pow", {b.op("Abs", {x}), b.scalar_f32("p", 1.5f)}), "pow");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {5, 8}, -3.0f, 3.0f)});
}

TEST(BlasOps, StandaloneBatchNormalization) {
  std::mt19937 rng(13);
  GraphBuilder b("bn");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 4});
  b.output(
      b.op("BatchNormalization",
           {b.relu(x), b.constant("s", uniform(rng, {3})), b.constant("b", uniform(rng, {3})),
            b.constant("m", uniform(rng, {3})), b.constant("v", uniform(rng, {3}, 0.5f, 2.0f))}),
      "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 4, 4})});
}

}  // namespace
}  // namespace hone::blas
