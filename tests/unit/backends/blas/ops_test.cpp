// The blas kernels' own behaviour: Gemm epilogues, MatMul with shared
// weights as one tall GEMM, a chain of layout ops, fused element-wise chains.
// Each op's cases on their own run from the op-case table
// (tests/unit/ops/op_cases_*.cpp) on every backend that claims them.
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

}  // namespace
}  // namespace hone::blas
