// The cuda backend's ops against the reference interpreter, on the GPU.
// Every test skips, with the reason, on a machine without a CUDA device.
#include <cstring>
#include <thread>

#include "backends/cuda/cudnn_api.h"
#include "cuda_test_util.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;

using Ints = std::vector<int64_t>;

TEST(CudaOps, GemmTransposesAlphaBetaBroadcastC) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(1);
  GraphBuilder b("gemm");
  ValueId a = b.input("a", DType::kF32, Shape{7, 5});
  b.output(b.gemm(a, b.constant("w", uniform(rng, {9, 7})), b.constant("c", uniform(rng, {9})),
                  {.trans_a = true, .trans_b = true, .alpha = 0.5f, .beta = 2.0f}),
           "y");
  ValueId a2 = b.input("a2", DType::kF32, Shape{33, 17});
  ValueId c2 = b.input("c2", DType::kF32, Shape{33, 1});
  b.output(b.gemm(a2, b.constant("w2", uniform(rng, {17, 40})), c2), "y2");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(
      g, {uniform(rng, {7, 5}), uniform(rng, {33, 17}), uniform(rng, {33, 1})});
  EXPECT_NE(plan_text(*be).find("gemm.f32.cuda.sgemm +c"), std::string::npos) << plan_text(*be);
}

TEST(CudaOps, MatMulTallBatchedAndBroadcastLoop) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(2);
  GraphBuilder b("mm");
  ValueId x = b.input("x", DType::kF32, Shape{3, 50, 32});
  b.output(b.matmul(x, b.constant("w", uniform(rng, {32, 24}))), "tall");
  ValueId y = b.input("y", DType::kF32, Shape{3, 32, 6});
  b.output(b.matmul(x, y), "batched");
  ValueId p = b.input("p", DType::kF32, Shape{2, 1, 3, 4});
  ValueId q = b.input("q", DType::kF32, Shape{5, 4, 6});
  b.output(b.matmul(p, q), "loop");
  ValueId v = b.input("v", DType::kF32, Shape{4});
  b.output(b.matmul(b.matmul(v, q), b.input("u", DType::kF32, Shape{6})), "vectors");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(
      g, {uniform(rng, {3, 50, 32}), uniform(rng, {3, 32, 6}), uniform(rng, {2, 1, 3, 4}),
          uniform(rng, {5, 4, 6}), uniform(rng, {4}), uniform(rng, {6})});
  for (const char* k : {"matmul.f32.cuda.sgemm]", "sgemm_batched", "sgemm_loop"})
    EXPECT_NE(plan_text(*be).find(k), std::string::npos) << k << "\n" << plan_text(*be);
}

TEST(CudaOps, MatMulBiasIsOneUnitInEveryPrecision) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(12);
  GraphBuilder b("mmbias");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 50, 96});
  // Weights scaled by about 1/sqrt(K) keep the outputs near 1, so an element
  // tolerance measures each precision's rounding rather than the outputs' size.
  ValueId h = b.add(b.matmul(x, b.constant("w", uniform(rng, {96, 72}, -0.1f, 0.1f))),
                    b.constant("bias", uniform(rng, {72})));
  // A bias [1, 40] on the left of the Add, then a Relu the chain keeps.
  ValueId y = b.add(b.constant("b2", uniform(rng, {1, 40})),
                    b.matmul(h, b.constant("w2", uniform(rng, {72, 40}, -0.12f, 0.12f))));
  b.output(b.op("Relu", {y}), "y");
  Graph g = *std::move(b).build();
  const std::pair<const char*, double> cases[] = {
      {"fp32", 1e-4}, {"tf32", 5e-3}, {"bf16", 5e-2}, {"fp16", 1e-2}};
  for (const auto& [precision, tol] : cases) {
    SCOPED_TRACE(precision);
    for (int64_t n : {1, 5}) {
      auto be = expect_matches_reference(g, {uniform(rng, {n, 50, 96})}, tol, tol,
                                         {{"precision", precision}, {"gemm_epilogue", "true"}});
      const std::string plan = plan_text(*be);
      EXPECT_NE(plan.find("(MatMul)+Add ["), std::string::npos) << plan;
      // cuBLASLt's epilogue (any algorithm of its heuristic: "cublaslt+bias[.hN]")
      // or the bias broadcast into the output.
      EXPECT_TRUE(plan.find("cublaslt+bias") != std::string::npos ||
                  plan.find(" +bias]") != std::string::npos)
          << plan;
      EXPECT_EQ(plan.find("nvrtc[add"), std::string::npos) << plan;
    }
  }
  auto apart = expect_matches_reference(g, {uniform(rng, {2, 50, 96})}, 1e-4, 1e-5,
                                        {{"gemm_epilogue", "false"}});
  EXPECT_NE(plan_text(*apart).find("nvrtc[add"), std::string::npos) << plan_text(*apart);
  // Gemm(transB) with a bias C: the epilogue, or the broadcast copy of C, timed.
  GraphBuilder gb("gemmbias");
  ValueId x2 = gb.input("x", DType::kF32, Shape{Dim::symbol("n"), 96});
  gb.output(gb.gemm(x2, gb.constant("w", uniform(rng, {80, 96}, -0.1f, 0.1f)),
                    gb.constant("c", uniform(rng, {80})), {.trans_b = true}),
            "y");
  Graph gg = *std::move(gb).build();
  for (const auto& [precision, tol] : cases) {
    SCOPED_TRACE(precision);
    auto be = expect_matches_reference(gg, {uniform(rng, {64, 96})}, tol, tol,
                                       {{"precision", precision}, {"gemm_epilogue", "true"}});
    const std::string plan = plan_text(*be);
    EXPECT_TRUE(plan.find("cublaslt+bias") != std::string::npos ||
                plan.find(" +c]") != std::string::npos)
        << plan;
  }
}

TEST(CudaOps, MlpKeepsItsHiddenActivationInHalfPrecision) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(13);
  // Linear, GELU as exporters write it (x * 0.5 * (1 + erf(x / sqrt 2))), Linear;
  // or CLIP's quick GELU, x * sigmoid(1.702 x), which is not GELU to 1e-3.
  auto mlp = [&](bool hidden_out, bool quick = false) {
    GraphBuilder b("mlp");
    ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 20, 64});
    ValueId h = b.add(b.matmul(x, b.constant("w1", uniform(rng, {64, 128}, -0.12f, 0.12f))),
                      b.constant("b1", uniform(rng, {128})));
    ValueId e = b.op("Erf", {b.op("Div", {h, b.scalar_f32("sqrt2", 1.41421356f)})});
    ValueId gl =
        quick ? b.mul(h, b.sigmoid(b.mul(h, b.scalar_f32("k", 1.702f))))
              : b.mul(b.mul(h, b.add(e, b.scalar_f32("one", 1.0f))), b.scalar_f32("half", 0.5f));
    b.output(b.add(b.matmul(gl, b.constant("w2", uniform(rng, {128, 48}, -0.09f, 0.09f))),
                   b.constant("b2", uniform(rng, {48}))),
             "y");
    if (hidden_out) b.output(gl, "hidden");
    return *std::move(b).build();
  };
  const Graph g = mlp(false);
  const std::pair<const char*, double> cases[] = {{"bf16", 5e-2}, {"fp16", 1e-2}};
  for (const auto& [precision, tol] : cases) {
    SCOPED_TRACE(precision);
    for (int64_t n : {1, 3}) {
      auto be = expect_matches_reference(g, {uniform(rng, {n, 20, 64})}, tol, tol,
                                         {{"precision", precision}});
      const std::string plan = plan_text(*be);
      // The passes have made the erf expression one Gelu node, which the
      // first product's epilogue applies (cuBLASLt's tanh form).
      EXPECT_NE(plan.find(std::string("mlp.") + (precision[1] == 'f' ? "bf16" : "f16") +
                          ".cuda.cublaslt+bias+gelu_epilogue[gelu as tanh GELU]+cublaslt+bias"),
                std::string::npos)
          << plan;
    }
    // Quick GELU keeps its own kernel between the products.
    auto quick = expect_matches_reference(mlp(false, true), {uniform(rng, {2, 20, 64})}, tol, tol,
                                          {{"precision", precision}});
    EXPECT_NE(plan_text(*quick).find("+nvrtc["), std::string::npos) << plan_text(*quick);
    EXPECT_EQ(plan_text(*quick).find("gelu_epilogue"), std::string::npos) << plan_text(*quick);
  }
  // Strict fp32 keeps the products apart; so does a hidden value read outside.
  auto f32 = expect_matches_reference(g, {uniform(rng, {2, 20, 64})});
  EXPECT_EQ(plan_text(*f32).find("mlp."), std::string::npos) << plan_text(*f32);
  auto seen = expect_matches_reference(mlp(true), {uniform(rng, {2, 20, 64})}, 5e-2, 5e-2,
                                       {{"precision", "bf16"}});
  EXPECT_EQ(plan_text(*seen).find("mlp."), std::string::npos) << plan_text(*seen);
}

TEST(CudaOps, ConvPadsStridesDilationsGroupsBias) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(3);
  GraphBuilder b("conv");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6, 13, 11});
  b.output(
      b.conv(x, b.constant("w", uniform(rng, {8, 6, 3, 3})), b.constant("b", uniform(rng, {8})),
             {.strides = {2, 1}, .pads = {1, 0, 2, 1}, .dilations = {1, 2}}),
      "plain");
  b.output(b.conv(x, b.constant("wg", uniform(rng, {4, 3, 3, 2})), kNoValue, {.group = 2}),
           "grouped");
  b.output(b.conv(x, b.constant("wd", uniform(rng, {6, 1, 3, 3})),
                  b.constant("bd", uniform(rng, {6})), {.pads = {1, 1, 1, 1}, .group = 6}),
           "depthwise");
  b.output(
      b.conv(x, b.constant("w1", uniform(rng, {5, 6, 1, 1})), b.constant("b1", uniform(rng, {5}))),
      "pointwise");
  b.output(b.op("Conv", {x, b.constant("ws", uniform(rng, {3, 6, 4, 3}))},
                {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}),
           "same");
  Graph g = *std::move(b).build();
  // The im2col + cuBLAS candidate (what runs where cuDNN is absent).
  auto be =
      expect_matches_reference(g, {uniform(rng, {2, 6, 13, 11})}, 1e-4, 1e-5, {{"cudnn", "false"}});
  EXPECT_NE(plan_text(*be).find("cuDNN not used: cudnn=false"), std::string::npos)
      << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("conv2d.f32.cuda.im2col+sgemm"), std::string::npos)
      << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("conv2d.f32.cuda.sgemm]"), std::string::npos) << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("conv2d.f32.cuda.depthwise"), std::string::npos) << plan_text(*be);
}

TEST(CudaOps, OneDimensionalConvAndPool) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(4);
  GraphBuilder b("conv1d");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 17});
  ValueId c = b.op(
      "Conv", {x, b.constant("w", uniform(rng, {4, 3, 5})), b.constant("b", uniform(rng, {4}))},
      {{"pads", Ints{2, 1}}, {"strides", Ints{2}}});
  b.output(b.op("MaxPool", {c}, {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}}), "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 17})});
}

TEST(CudaOps, ConvEpilogueChainIsOneKernel) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(5);
  GraphBuilder b("epilogue");
  ValueId x = b.input("x", DType::kF32, Shape{1, 4, 9, 9});
  ValueId c =
      b.conv(x, b.constant("w", uniform(rng, {4, 4, 3, 3})), kNoValue, {.pads = {1, 1, 1, 1}});
  ValueId h = b.add(c, b.constant("bias", uniform(rng, {4, 1, 1})));
  b.output(b.relu(b.add(h, x)), "y");  // residual join, then the activation
  Graph g = *std::move(b).build();
  // hone's passes fold the per-channel Add into the Conv's bias; the residual
  // Add and the Relu join the Conv's unit: one cuDNN call, or on the im2col
  // path the SGEMM and one epilogue pass.
  for (const char* dnn : {"true", "false"}) {
    auto be =
        expect_matches_reference(g, {uniform(rng, {1, 4, 9, 9})}, 1e-4, 1e-5, {{"cudnn", dnn}});
    EXPECT_EQ(be->kernel_executions(), 1u) << "one unit, cudnn=" << dnn << "\n" << plan_text(*be);
    EXPECT_NE(plan_text(*be).find("+add+relu"), std::string::npos) << plan_text(*be);
  }
}

TEST(CudaOps, CudnnConvolutionsFuseBiasResidualAndRelu) {
  HONE_REQUIRE_CUDA();
  if (auto dnn = Cudnn::get(); !dnn) GTEST_SKIP() << dnn.error().message();
  std::mt19937 rng(15);
  GraphBuilder b("cudnn");
  ValueId x = b.input("x", DType::kF32, Shape{3, 8, 14, 14});
  // A bottleneck: 1x1, 3x3 stride 1, 1x1 with the residual Add and Relu;
  // then a strided conv without Relu, a grouped and a depthwise conv, and a 1-D one.
  ValueId h = b.relu(
      b.conv(x, b.constant("w1", uniform(rng, {4, 8, 1, 1})), b.constant("b1", uniform(rng, {4}))));
  h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {4, 4, 3, 3})),
                    b.constant("b2", uniform(rng, {4})), {.pads = {1, 1, 1, 1}}));
  h = b.relu(b.add(
      b.conv(h, b.constant("w3", uniform(rng, {8, 4, 1, 1})), b.constant("b3", uniform(rng, {8}))),
      x));
  b.output(h, "block");
  b.output(b.conv(h, b.constant("ws", uniform(rng, {6, 8, 3, 3})),
                  b.constant("bs", uniform(rng, {6})), {.strides = {2, 2}, .pads = {1, 1, 1, 1}}),
           "strided");
  b.output(b.relu(b.conv(h, b.constant("wg", uniform(rng, {8, 2, 3, 3})), kNoValue,
                         {.pads = {1, 1, 1, 1}, .group = 4})),
           "grouped_relu_no_bias");
  b.output(b.conv(h, b.constant("wd", uniform(rng, {8, 1, 5, 5})),
                  b.constant("bd", uniform(rng, {8})), {.pads = {2, 2, 2, 2}, .group = 8}),
           "depthwise");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);  // as model loading does: the residual Add's shapes are known
  for (const char* precision : {"fp32", "tf32"}) {
    const double tol = std::string(precision) == "fp32" ? 1e-4 : 5e-3;
    auto be = expect_matches_reference(g, {uniform(rng, {3, 8, 14, 14})}, tol, tol,
                                       {{"precision", precision}, {"conv_select", "cudnn"}});
    const std::string plan = plan_text(*be);
    EXPECT_NE(plan.find("convolutions: cuDNN "), std::string::npos) << plan;
    EXPECT_EQ(plan.find("im2col"), std::string::npos) << plan;
    EXPECT_NE(plan.find("conv2d.f32.cuda.cudnn[algo "), std::string::npos) << plan;
    EXPECT_NE(plan.find("+add+relu"), std::string::npos) << plan;
    // Six convs, each one unit with its fused Add/Relu: nothing else runs.
    EXPECT_EQ(be->kernel_executions(), 6u) << plan;
  }
  // Unfused (a plain cuDNN conv, then hone's epilogue) and chosen by timing
  // per geometry: the same results, whichever candidate wins.
  expect_matches_reference(g, {uniform(rng, {3, 8, 14, 14})}, 1e-4, 1e-5,
                           {{"conv_select", "cudnn"}, {"cudnn_fused", "false"}});
  auto timed = expect_matches_reference(g, {uniform(rng, {3, 8, 14, 14})});
  EXPECT_EQ(timed->kernel_executions(), 6u) << plan_text(*timed);
  // bf16 on im2col + GEMM: columns and weights as bf16, summed in f32. Outputs
  // reach a few units after four chained convs, each rounding its operands to
  // 8 bits (2^-9 relative): errors of a few hundredths are bf16's, a wrong
  // index or a lost bias is off by whole units.
  constexpr double kBf16Rtol = 5e-2, kBf16Atol = 2e-1;
  auto bf16 = expect_matches_reference(g, {uniform(rng, {3, 8, 14, 14})}, kBf16Rtol, kBf16Atol,
                                       {{"precision", "bf16"}, {"cudnn", "false"}});
  // And timed against TF32 per shape (gemm_select=time, the default): either wins, same results.
  expect_matches_reference(g, {uniform(rng, {3, 8, 14, 14})}, kBf16Rtol, kBf16Atol,
                           {{"precision", "bf16"}, {"gemm_select", "time"}});
  const std::string bp = plan_text(*bf16);
  EXPECT_NE(bp.find("conv2d.bf16.cuda.im2col+gemm_ex"), std::string::npos) << bp;
  EXPECT_NE(bp.find("conv2d.bf16.cuda.gemm_ex+relu"), std::string::npos) << bp;  // the 1x1
}

TEST(CudaOps, ElementwiseChainBroadcastsAndInlinesScalars) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(6);
  GraphBuilder b("chain");
  ValueId x = b.input("x", DType::kF32, Shape{3, 1, 6});
  ValueId y = b.input("y", DType::kF32, Shape{4, 1});
  ValueId h = b.mul(b.add(x, b.constant("c", uniform(rng, {6}))), y);  // broadcasts to [3,4,6]
  h = b.sub(b.scalar_f32("one", 1.0f), b.sigmoid(h));
  h = b.op("Clip", {b.op("LeakyRelu", {h}, {{"alpha", 0.2f}}), b.scalar_f32("lo", -0.1f),
                    b.scalar_f32("hi", 0.7f)});
  b.output(b.div(b.tanh(h), b.constant("d", uniform(rng, {3, 4, 1}, 1.0f, 2.0f))), "z");
  Graph g = *std::move(b).build();
  auto be = expect_matches_reference(g, {uniform(rng, {3, 1, 6}), uniform(rng, {4, 1})});
  EXPECT_EQ(be->kernel_executions(), 1u) << plan_text(*be);
}

TEST(CudaOps, UnaryAndBinaryOps) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(7);
  GraphBuilder b("acts");
  ValueId x = b.input("x", DType::kF32, Shape{5, 8});
  for (const char* op :
       {"Relu", "Sigmoid", "Tanh", "Elu", "Selu", "HardSigmoid", "HardSwish", "Softplus",
        "Softsign", "Exp", "Abs", "Neg", "Erf", "Floor", "Ceil", "Sin", "Cos"})
    b.output(b.op(op, {x}), std::string("y_") + op);
  b.output(b.op("Gelu", {x}, {{"approximate", std::string("tanh")}}), "gelu_tanh");
  b.output(b.gelu(x), "gelu_erf");
  b.output(b.op("Sqrt", {b.op("Abs", {x})}), "sqrt_abs");
  b.output(b.op("Log", {b.op("Exp", {x})}), "log_exp");
  b.output(b.op("Reciprocal", {b.add(b.op("Abs", {x}), b.scalar_f32("e", 0.5f))}), "recip");
  ValueId r = b.input("r", DType::kF32, Shape{8});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "PRelu"})
    b.output(b.op(op, {x, r}), std::string("b_") + op);
  b.output(b.op("Pow", {b.op("Abs", {x}), b.scalar_f32("p", 1.5f)}), "pow");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {5, 8}, -3.0f, 3.0f), uniform(rng, {8}, 0.5f, 2.0f)});
}

TEST(CudaOps, Pools) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(8);
  GraphBuilder b("pools");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 9, 8});
  b.output(b.op("MaxPool", {x},
                {{"kernel_shape", Ints{3, 2}},
                 {"strides", Ints{2, 2}},
                 {"pads", Ints{1, 0, 1, 1}},
                 {"ceil_mode", int64_t{1}}}),
           "max");
  b.output(b.op("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 3}}}),
           "max_dil");
  b.output(b.op("AveragePool", {x},
                {{"kernel_shape", Ints{3, 3}},
                 {"strides", Ints{2, 1}},
                 {"pads", Ints{1, 1, 1, 1}},
                 {"count_include_pad", int64_t{1}}}),
           "avg_pad");
  b.output(b.op("AveragePool", {x}, {{"kernel_shape", Ints{2, 3}}, {"pads", Ints{1, 1, 0, 1}}}),
           "avg");
  b.output(b.global_average_pool(x), "gap");
  b.output(b.op("GlobalMaxPool", {x}), "gmp");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 9, 8})});
}

TEST(CudaOps, SoftmaxLayerNormReductions) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(9);
  GraphBuilder b("norms");
  ValueId x = b.input("x", DType::kF32, Shape{2, 5, 300});
  b.output(b.softmax(x, 1), "sm");
  b.output(b.softmax(x, -1), "sm_last");
  b.output(b.op("LogSoftmax", {x}, {{"axis", int64_t{-1}}}), "lsm");
  b.output(
      b.layer_norm(x, b.constant("s", uniform(rng, {300})), b.constant("bb", uniform(rng, {300}))),
      "ln");
  b.output(b.layer_norm(x, b.constant("s2", uniform(rng, {5, 300})), kNoValue, 1, 1e-3f), "ln2");
  b.output(b.op("ReduceMean", {x}, {{"axes", Ints{1, 2}}, {"keepdims", int64_t{0}}}), "mean");
  b.output(b.op("ReduceSum", {x, b.constant("ax", Tensor::from<int64_t>({1}, {-2}))}), "sum");
  b.output(b.op("ReduceMax", {x}, {{"axes", Ints{2}}}), "max");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 5, 300}, -4.0f, 4.0f)}, 1e-4, 1e-4);
}

TEST(CudaOps, ResidualAddAndLayerNormAreOneUnit) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(13);
  GraphBuilder b("addln");
  const Dim n = Dim::symbol("n");
  ValueId x = b.input("x", DType::kF32, Shape{n, 9, 64});
  ValueId y = b.input("y", DType::kF32, Shape{n, 9, 64});
  // Pre-norm: the sum feeds the LayerNormalization and, later, the next
  // residual Add, so the unit keeps it as an output of its own.
  ValueId s1 = b.add(x, y);
  ValueId l1 =
      b.layer_norm(s1, b.constant("g1", uniform(rng, {64})), b.constant("b1", uniform(rng, {64})));
  ValueId h = b.matmul(l1, b.constant("w", uniform(rng, {64, 64}, -0.2f, 0.2f)));
  // Post-norm: this sum is read by the LayerNormalization alone (no bias).
  ValueId s2 = b.add(s1, h);
  b.output(b.layer_norm(s2, b.constant("g2", uniform(rng, {64})), kNoValue), "post");
  // Rows too long for the one-warp kernel, and a sum that is a block output.
  ValueId u = b.input("u", DType::kF32, Shape{n, 5, 1030});
  ValueId v = b.input("v", DType::kF32, Shape{n, 5, 1030});
  ValueId s3 = b.add(u, v);
  b.output(b.layer_norm(s3, b.constant("g3", uniform(rng, {1030})),
                        b.constant("b3", uniform(rng, {1030}))),
           "long");
  b.output(s3, "sum");
  // Operands whose shapes differ (a broadcast): summed first, then normalised.
  ValueId q = b.input("q", DType::kF32, Shape{1, 9, 64});
  b.output(b.layer_norm(b.add(x, q), b.constant("g4", uniform(rng, {64})), kNoValue), "bcast");
  Graph g = *std::move(b).build();
  for (int64_t batch : {1, 3}) {
    auto be = expect_matches_reference(
        g,
        {uniform(rng, {batch, 9, 64}, -2.0f, 2.0f), uniform(rng, {batch, 9, 64}),
         uniform(rng, {batch, 5, 1030}), uniform(rng, {batch, 5, 1030}), uniform(rng, {1, 9, 64})},
        1e-4, 1e-4);
    const std::string plan = plan_text(*be);
    EXPECT_NE(plan.find("add+layernorm.f32.cuda.warp"), std::string::npos) << plan;
    EXPECT_NE(plan.find("add+layernorm.f32.cuda.rows"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("nvrtc[add"), std::string::npos) << plan;
    // The device's time of the run is accounted (events around the steps).
    ASSERT_TRUE(be->device_nanoseconds().has_value());
    EXPECT_GT(*be->device_nanoseconds(), 0u);
  }
}

TEST(CudaOps, ElementwiseChainsFourAtATimeWhereRowsAllow) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(14);
  GraphBuilder b("wide");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 9, 64});
  b.output(b.gelu(x), "y_gelu");                                         // flat
  b.output(b.add(x, b.constant("bias", uniform(rng, {64}))), "y_bias");  // contiguous along rows
  ValueId c = b.input("c", DType::kF32, Shape{Dim::symbol("n"), 8, 6, 4});
  b.output(b.mul(c, b.constant("ch", uniform(rng, {8, 1, 1}))),
           "y_channel");                                                    // constant along rows
  b.output(b.mul(c, b.constant("col", uniform(rng, {6, 1}))), "y_column");  // rows of 4
  ValueId o = b.input("o", DType::kF32, Shape{Dim::symbol("n"), 3, 5});
  b.output(b.sigmoid(b.add(o, b.constant("ob", uniform(rng, {5})))), "y_odd");  // scalar kernel
  // A large output (over 4 MiB) comes back through the pinned buffer.
  ValueId big = b.input("big", DType::kF32, Shape{Dim::symbol("n"), 1100, 1024});
  b.output(b.relu(big), "big_relu");
  Graph g = *std::move(b).build();
  for (int64_t batch : {1, 2})
    expect_matches_reference(
        g, {uniform(rng, {batch, 9, 64}, -3.0f, 3.0f), uniform(rng, {batch, 8, 6, 4}),
            uniform(rng, {batch, 3, 5}), uniform(rng, {batch, 1100, 1024})});
}

TEST(CudaOps, LayoutOpsAndViews) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(10);
  GraphBuilder b("layout");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 5});
  ValueId t = b.transpose(x, {0, 2, 3, 1});
  ValueId c = b.concat({t, b.constant("k", uniform(rng, {2, 4, 5, 2})), t}, -1);
  b.output(b.reshape(c, {0, -1, 8}), "r");
  b.output(b.flatten(b.relu(x), 2), "f");
  b.output(b.flatten(b.relu(x), -3), "f_neg");
  ValueId u =
      b.op("Unsqueeze", {b.sigmoid(x), b.constant("ua", Tensor::from<int64_t>({2}, {0, -1}))});
  b.output(b.op("Squeeze", {u, b.constant("sa", Tensor::from<int64_t>({1}, {0}))}), "s");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 4, 5})});
}

TEST(CudaOps, DynamicBatchPlansPerShape) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(11);
  GraphBuilder b("dyn");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 16});
  b.output(b.softmax(b.relu(b.matmul(x, b.constant("w", uniform(rng, {16, 10}))))), "y");
  Graph g = *std::move(b).build();
  for (int64_t n : {1, 7, 64}) expect_matches_reference(g, {uniform(rng, {n, 16})});
  auto be = expect_matches_reference(g, {uniform(rng, {3, 16})});
  auto again = be->infer({uniform(rng, {5, 16})});
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ((*again)[0].shape(), (Ints{5, 10}));
}

TEST(CudaOps, RefusedNodesRunOnTheReferenceBetweenGpuBlocks) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(12);
  GraphBuilder b("mixed");
  ValueId x = b.input("x", DType::kF32, Shape{4, 6});
  ValueId h = b.relu(b.matmul(x, b.constant("w", uniform(rng, {6, 6}))));
  ValueId r = b.op("Hardmax", {h}, {{"axis", int64_t{1}}});  // no cuda kernel
  b.output(b.sigmoid(b.matmul(r, b.constant("w2", uniform(rng, {6, 3})))), "y");
  Graph g = *std::move(b).build();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  const Tensor in = uniform(rng, {4, 6}, -2.0f, 2.0f);
  auto want = eval::Interpreter().run_tensors(g, {in});
  auto got = be.infer({in});
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(testing_util::close((*got)[0], (*want)[0]));
  // MatMul and Relu; then, after the refused Hardmax, MatMul and Sigmoid.
  EXPECT_EQ(be.kernel_executions(), 4u) << plan_text(be);
}

TEST(CudaOps, DepthwiseKernelsMatchTheReferenceAtEveryTapAndStride) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(15);
  // Widths that are no multiple of 4 (the four-outputs-a-thread kernels' last
  // group), pads on one side only, stride 2, the fused Relu; then geometries
  // the one-output kernel keeps (dilation, 3x5 taps, stride 3).
  struct Geo {
    int64_t k, s, pad_begin, pad_end;
    bool relu;
  };
  for (const Geo& geo : {Geo{3, 1, 1, 1, true}, Geo{3, 2, 1, 0, false}, Geo{5, 1, 2, 2, true},
                         Geo{5, 2, 2, 1, false}, Geo{7, 1, 3, 3, false}, Geo{7, 2, 0, 3, true}}) {
    SCOPED_TRACE("k " + std::to_string(geo.k) + " s " + std::to_string(geo.s));
    GraphBuilder b("dw");
    ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 5, 17, 23});
    ValueId c = b.conv(x, b.constant("w", uniform(rng, {5, 1, geo.k, geo.k})),
                       b.constant("b", uniform(rng, {5})),
                       {.strides = {geo.s, geo.s},
                        .pads = {geo.pad_begin, geo.pad_begin, geo.pad_end, geo.pad_end},
                        .group = 5});
    b.output(geo.relu ? b.relu(c) : c, "y");
    const Graph g = *std::move(b).build();
    auto be = expect_matches_reference(g, {uniform(rng, {3, 5, 17, 23})}, 1e-5, 1e-6,
                                       {{"cudnn_depthwise", "false"}});
    EXPECT_NE(plan_text(*be).find("conv2d.f32.cuda.depthwise"), std::string::npos)
        << plan_text(*be);
  }
  GraphBuilder b("dw_other");
  ValueId x = b.input("x", DType::kF32, Shape{2, 4, 19, 14});
  b.output(b.conv(x, b.constant("w1", uniform(rng, {4, 1, 3, 3})), kNoValue,
                  {.pads = {2, 2, 2, 2}, .dilations = {2, 2}, .group = 4}),
           "dilated");
  b.output(b.conv(x, b.constant("w2", uniform(rng, {4, 1, 3, 5})), kNoValue,
                  {.pads = {1, 2, 1, 2}, .group = 4}),
           "oblong");
  b.output(b.conv(x, b.constant("w3", uniform(rng, {4, 1, 3, 3})), kNoValue,
                  {.strides = {3, 3}, .group = 4}),
           "stride3");
  expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 4, 19, 14})}, 1e-5, 1e-6,
                           {{"cudnn_depthwise", "false"}});
}

TEST(CudaOps, PinnedInputsGoInOneCopyAndGiveTheSameBits) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(14);
  GraphBuilder b("pinned");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 64, 1024});
  b.output(b.relu(b.matmul(x, b.constant("w", uniform(rng, {1024, 32})))), "y");
  Graph g = *std::move(b).build();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  auto drv = Driver::get();
  ASSERT_TRUE(drv);
  const Driver* d = *drv;
  for (int64_t n : {1, 9}) {  // 256 KiB (one copy either way) and 2.25 MiB (staged if pageable)
    const Tensor in = uniform(rng, {n, 64, 1024});
    auto pinned = be.allocate_host(DType::kF32, {n, 64, 1024});
    ASSERT_TRUE(pinned) << pinned.error().to_string();
    EXPECT_TRUE(is_pinned(*d, pinned->raw(), pinned->nbytes()));
    EXPECT_FALSE(is_pinned(*d, in.raw(), in.nbytes()));
    std::memcpy(pinned->raw(), in.raw(), in.nbytes());
    auto a = be.infer({in});
    auto c = be.infer({*pinned});
    ASSERT_TRUE(a && c);
    EXPECT_TRUE((*a)[0].bitwise_equal((*c)[0]));
    auto want = eval::Interpreter().run_tensors(g, {in});
    ASSERT_TRUE(want);
    EXPECT_TRUE(testing_util::close((*c)[0], (*want)[0]));
  }
}

TEST(CudaOps, LargeOutputsArePageLockedAndTheirBlocksReused) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(15);
  GraphBuilder b("pinned_out");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 64, 256});
  ValueId h = b.relu(b.matmul(x, b.constant("w", uniform(rng, {256, 1024}))));
  b.output(h, "big");  // n * 256 KiB
  b.output(b.flatten(b.global_average_pool(b.reshape(h, {0, 64, 32, 32}))), "small");
  Graph g = *std::move(b).build();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  const Driver* d = *Driver::get();
  for (int64_t n : {1, 6}) {  // 256 KiB (ordinary memory) and 1.5 MiB (page-locked)
    const Tensor in = uniform(rng, {n, 64, 256});
    auto want = eval::Interpreter().run_tensors(g, {in});
    ASSERT_TRUE(want);
    const void* first = nullptr;
    for (int run = 0; run < 3; ++run) {
      auto got = be.infer({in});
      ASSERT_TRUE(got) << got.error().to_string();
      EXPECT_EQ(is_pinned(*d, (*got)[0].raw(), (*got)[0].nbytes()), n == 6);
      EXPECT_FALSE(is_pinned(*d, (*got)[1].raw(), (*got)[1].nbytes()));
      EXPECT_TRUE(testing_util::close((*got)[0], (*want)[0]));
      EXPECT_TRUE(testing_util::close((*got)[1], (*want)[1]));
      // The output dropped at the end of a run is the next run's block.
      if (n == 6 && run == 0) first = (*got)[0].raw();
      if (n == 6 && run > 0) EXPECT_EQ((*got)[0].raw(), first);
    }
  }
}

TEST(CudaOps, ConcurrentInferencesAgree) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(13);
  GraphBuilder b("threads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 3, 16, 16});
  ValueId c = b.relu(b.conv(x, b.constant("w", uniform(rng, {8, 3, 3, 3})),
                            b.constant("b", uniform(rng, {8})), {.pads = {1, 1, 1, 1}}));
  b.output(b.flatten(b.global_average_pool(c)), "y");
  Graph g = *std::move(b).build();
  CudaBackend be;
  ASSERT_TRUE(be.build(g));
  std::vector<Tensor> ins, want;
  for (int i = 0; i < 8; ++i) {
    ins.push_back(uniform(rng, {1 + i % 3, 3, 16, 16}));
    want.push_back((*eval::Interpreter().run_tensors(g, {ins.back()}))[0]);
  }
  std::vector<std::string> errors(ins.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ins.size(); ++i)
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 5; ++rep) {
        auto got = be.infer({ins[i]});
        if (!got)
          errors[i] = got.error().to_string();
        else if (!testing_util::close((*got)[0], want[i]))
          errors[i] = "mismatch on input " + std::to_string(i);
      }
    });
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
}

}  // namespace
}  // namespace hone::cuda
