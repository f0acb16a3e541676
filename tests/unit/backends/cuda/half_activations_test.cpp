// Half-precision activations on the cuda backend (storage.h): under
// precision=bf16/fp16 with activations=half a conv net keeps its values in
// bf16/f16 NHWC from its first conv to its end, with one conversion in and
// one out (listed in the kernel plan with the reason), and matches the f64
// reference within the precision's bound; fp32 and tf32 plan as before. The
// GPU tests skip, with the reason, on a machine without a CUDA device or
// cuDNN; the storage helpers' test runs anywhere.
#include <cmath>
#include <cstdio>

#include "backends/cuda/cudnn_api.h"
#include "backends/cuda/storage.h"
#include "cuda_test_util.h"
#include "eval/kernel_util.h"
#include "hone/correctness.h"
#include "passes/shape_propagation.h"

namespace hone::cuda {
namespace {

using testing_util::close;
using testing_util::f64_truth;
using testing_util::plan_text;
using testing_util::uniform;
using testing_util::weights;

using Ints = std::vector<int64_t>;
using Settings = std::vector<std::pair<std::string, std::string>>;

constexpr int64_t kN = 4;

/// A small ResNet/MobileNet-like net: a strided stem conv and MaxPool, a
/// residual block (its Add and Relu in the second conv's unit), two 1x1
/// branches joined by Concat, a swish chain, a squeeze-excite gate (global
/// pool, 1x1 conv, Sigmoid, broadcast Mul), a last conv whose output leaves
/// the block, and its global pool, Flatten and Gemm.
Graph conv_net() {
  std::mt19937 rng(7);
  GraphBuilder b("half_net");
  auto bias = [&](const char* name, int64_t m) {
    return b.constant(name, uniform(rng, {m}, -0.2f, 0.2f));
  };
  auto conv = [&](ValueId x, const char* w, Ints dims, ValueId bv, GraphBuilder::ConvOptions o) {
    return b.conv(x, b.constant(w, weights(rng, dims)), bv, std::move(o));
  };
  ValueId x = b.input("x", DType::kF32, Shape{kN, 3, 32, 32});
  ValueId stem = b.relu(conv(x, "w_stem", {16, 3, 3, 3}, bias("b_stem", 16),
                             {.strides = {2, 2}, .pads = {1, 1, 1, 1}}));
  ValueId pooled = b.max_pool(stem, {3, 3}, {2, 2}, {1, 1, 1, 1});  // [N, 16, 8, 8]
  ValueId h = b.relu(conv(pooled, "w_a", {16, 16, 3, 3}, bias("b_a", 16), {.pads = {1, 1, 1, 1}}));
  ValueId res = b.relu(
      b.add(conv(h, "w_b", {16, 16, 3, 3}, bias("b_b", 16), {.pads = {1, 1, 1, 1}}), pooled));
  ValueId left = b.relu(conv(res, "w_l", {8, 16, 1, 1}, bias("b_l", 8), {}));
  ValueId right = conv(res, "w_r", {8, 16, 1, 1}, bias("b_r", 8), {});
  ValueId cat = b.concat({left, right}, 1);         // [N, 16, 8, 8]
  ValueId swish = b.mul(b.sigmoid(cat), cat);       // a two-operand chain
  ValueId squeezed = b.global_average_pool(swish);  // [N, 16, 1, 1]
  ValueId gate = b.sigmoid(conv(squeezed, "w_se", {16, 16, 1, 1}, bias("b_se", 16), {}));
  ValueId excited = b.mul(swish, gate);  // broadcast over H, W
  ValueId features =
      conv(excited, "w_out", {24, 16, 3, 3}, bias("b_out", 24), {.pads = {1, 1, 1, 1}});
  b.output(features, "features");
  ValueId flat = b.flatten(b.global_average_pool(features));  // a view of [N, 24, 1, 1]
  b.output(
      b.gemm(flat, b.constant("w_fc", weights(rng, {10, 24})), bias("b_fc", 10), {.trans_b = true}),
      "logits");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);  // as model loading does: the residual Add's shapes are known
  return g;
}

std::vector<Tensor> net_inputs() {
  std::mt19937 rng(8);
  return {uniform(rng, {kN, 3, 32, 32})};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// Builds `g` on cuda with `settings`, runs `inputs` and checks every output
/// against the f64 truth within `tol`; no fallback, every node on cuda.
std::unique_ptr<CudaBackend> run_checked(const Graph& g, const std::vector<Tensor>& inputs,
                                         const Settings& settings, const Tolerance& tol) {
  auto be = std::make_unique<CudaBackend>();
  for (const auto& [k, v] : settings) EXPECT_TRUE(be->configure(k, v)) << k << "=" << v;
  auto built = be->build(g);
  EXPECT_TRUE(built) << built.error().to_string();
  if (!built) return be;
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  const std::vector<Tensor> want = f64_truth(g, inputs);
  auto got = be->infer(inputs);
  EXPECT_TRUE(got) << got.error().to_string() << "\n" << plan_text(*be);
  if (!got) return be;
  EXPECT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size() && i < got->size(); ++i)
    EXPECT_TRUE(close((*got)[i], want[i], tol.rtol, tol.atol)) << "output " << i << "\n"
                                                               << plan_text(*be);
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block fell back to the reference\n" << plan_text(*be);
  return be;
}

TEST(CudaHalfActivations, ConvNetRunsInHalfNhwcFromInputToOutput) {
  HONE_REQUIRE_CUDNN();
  const Graph g = conv_net();
  const std::tuple<const char*, const char*, Precision> cases[] = {
      {"bf16", "bf16", Precision::kBf16}, {"fp16", "f16", Precision::kFp16}};
  for (const auto& [precision, type, p] : cases) {
    SCOPED_TRACE(precision);
    auto be = run_checked(g, net_inputs(), {{"precision", precision}, {"activations", "half"}},
                          Tolerance::for_precision(p));
    const std::string plan = plan_text(*be);
    std::printf("[   INFO   ] %s kernel plan:\n%s\n", precision, plan.c_str());
    const std::string t = type;
    // One conversion in (the input, to the stem conv), one for each output
    // (the conv output, and the logits, which the Gemm writes half with its
    // bias in cuBLASLt's epilogue).
    EXPECT_EQ(count(plan, "convert '"), 3u) << plan;
    EXPECT_EQ(count(plan, "convert 'x' f32 NCHW -> " + t + " NHWC"), 1u) << plan;
    EXPECT_EQ(count(plan, "convert 'features' " + t + " NHWC -> f32 NCHW (block output)"), 1u)
        << plan;
    // Every conv reads and writes half NHWC; the rest read it directly.
    // 1x1 ones as one GEMM each.
    EXPECT_EQ(count(plan, "conv2d." + t + ".cuda.cudnn_nhwc_io[algo "), 4u) << plan;
    EXPECT_EQ(count(plan, "conv2d." + t + ".cuda.gemm_ex_nhwc"), 3u) << plan;
    EXPECT_NE(plan.find("]+add+relu]"), std::string::npos) << plan;
    EXPECT_EQ(count(plan, "maxpool." + t + ".cuda.nhwc]"), 1u) << plan;
    EXPECT_EQ(count(plan, "globalavgpool." + t + ".cuda.nhwc]"), 2u) << plan;
    EXPECT_EQ(count(plan, "concat." + t + ".cuda.strided_copy nhwc]"), 1u) << plan;
    EXPECT_GE(count(plan, "eltwise." + t + ".cuda.nvrtc["), 2u) << plan;
    EXPECT_EQ(count(plan, "gemm." + t + ".cuda.cublaslt+bias half_io]"), 1u) << plan;
    EXPECT_EQ(count(plan, "convert 'logits' " + t + " -> f32 (block output)"), 1u) << plan;
    EXPECT_EQ(plan.find(".f32.cuda"), std::string::npos) << plan;
  }
}

TEST(CudaHalfActivations, PatchConvIsAGatherOfItsPatchesAndOneGemm) {
  HONE_REQUIRE_CUDNN();
  // A ViT/Swin patch embedding (window == stride, unpadded): 3 channels in
  // 4x4 patches, then a second one of 2x2 patches over 8 channels with a
  // residual Add and Relu fused into its unit.
  std::mt19937 rng(11);
  GraphBuilder b("patches");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 32, 24});
  ValueId p4 = b.conv(x, b.constant("w4", weights(rng, {8, 3, 4, 4})),
                      b.constant("b4", uniform(rng, {8}, -0.2f, 0.2f)), {.strides = {4, 4}});
  ValueId p2 = b.conv(p4, b.constant("w2", weights(rng, {8, 8, 2, 2})),
                      b.constant("b2", uniform(rng, {8}, -0.2f, 0.2f)), {.strides = {2, 2}});
  ValueId pooled = b.max_pool(p4, {2, 2}, {2, 2}, {0, 0, 0, 0});
  b.output(b.relu(b.add(p2, pooled)), "y");  // [2, 8, 4, 3]
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  std::mt19937 in_rng(12);
  const std::vector<Tensor> inputs = {uniform(in_rng, {2, 3, 32, 24})};
  for (const auto& [precision, type, p] : {std::tuple{"bf16", "bf16", Precision::kBf16},
                                           std::tuple{"fp16", "f16", Precision::kFp16}}) {
    SCOPED_TRACE(precision);
    auto be = run_checked(g, inputs, {{"precision", precision}, {"activations", "half"}},
                          Tolerance::for_precision(p));
    const std::string plan = plan_text(*be);
    EXPECT_EQ(count(plan, std::string("conv2d.") + type + ".cuda.patches+gemm_ex_nhwc"), 2u)
        << plan;
    EXPECT_EQ(count(plan, "patches+gemm_ex_nhwc+add+relu"), 1u) << plan;
    EXPECT_EQ(plan.find("cudnn_nhwc"), std::string::npos) << plan;
  }
}

TEST(CudaHalfActivations, Fp32Tf32AndF32ActivationsPlanAsBefore) {
  HONE_REQUIRE_CUDNN();
  const Graph g = conv_net();
  // The setting changes nothing outside bf16/fp16 (plain: its default,
  // auto; asked: half), and under bf16 activations=f32 keeps tensors f32
  // between steps: no conversion steps.
  for (const char* precision : {"fp32", "tf32"}) {
    SCOPED_TRACE(precision);
    // What this test is about is the plans and their bits; through seven
    // convs of small outputs TF32's rounding reaches about 1% (measured on an
    // H100), past the one-product bound Tolerance gives tf32, so its outputs
    // are held to bf16's.
    const Tolerance tol = Tolerance::for_precision(
        std::string(precision) == "fp32" ? Precision::kFp32 : Precision::kBf16);
    auto plain = run_checked(g, net_inputs(), {{"precision", precision}}, tol);
    auto asked =
        run_checked(g, net_inputs(), {{"precision", precision}, {"activations", "half"}}, tol);
    EXPECT_EQ(plan_text(*plain), plan_text(*asked));
    EXPECT_EQ(plan_text(*asked).find("convert '"), std::string::npos) << plan_text(*asked);
    auto a = plain->infer(net_inputs());
    auto b = asked->infer(net_inputs());
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(testing_util::same_bits(*a, *b)) << "the same plan computed other bits";
  }
  auto bf16 = run_checked(g, net_inputs(), {{"precision", "bf16"}, {"activations", "f32"}},
                          Tolerance::for_precision(Precision::kBf16));
  EXPECT_EQ(plan_text(*bf16).find("convert '"), std::string::npos) << plan_text(*bf16);
  EXPECT_EQ(plan_text(*bf16).find("nhwc_io"), std::string::npos) << plan_text(*bf16);
}

TEST(CudaHalfActivations, AReaderWithoutAHalfKernelGetsAConversionNamingIt) {
  HONE_REQUIRE_CUDNN();
  std::mt19937 rng(9);
  GraphBuilder b("softmax_after_conv");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8, 6, 6});
  ValueId y = b.relu(b.conv(x, b.constant("w", weights(rng, {8, 8, 3, 3})),
                            b.constant("bias", uniform(rng, {8})), {.pads = {1, 1, 1, 1}}));
  b.output(b.softmax(y, 1), "probs");  // no half kernel: reads y as f32 NCHW
  b.output(b.max_pool(y, {2, 2}, {2, 2}, {0, 0, 0, 0}), "pooled");  // reads y half
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  auto be =
      run_checked(g, {uniform(rng, {2, 8, 6, 6})}, {{"precision", "bf16"}, {"activations", "half"}},
                  Tolerance::for_precision(Precision::kBf16));
  const std::string plan = plan_text(*be);
  EXPECT_EQ(count(plan, "convert '"), 3u) << plan;  // x in; y for Softmax; pooled out
  EXPECT_NE(plan.find("bf16 NHWC -> f32 NCHW (read by "), std::string::npos) << plan;
  EXPECT_NE(plan.find("(Softmax): no bf16 kernel)"), std::string::npos) << plan;
  EXPECT_NE(plan.find("softmax.f32.cuda"), std::string::npos) << plan;
  EXPECT_NE(plan.find("maxpool.bf16.cuda.nhwc]"), std::string::npos) << plan;
}

TEST(CudaStorage, ChannelsLastOrderAndNames) {
  // Rank 4 is channels-last unless one channel or one position makes it
  // the row-major order too; other ranks are row-major.
  EXPECT_FALSE(channels_last_is_row_major({2, 3, 4, 5}));
  EXPECT_TRUE(channels_last_is_row_major({2, 3, 1, 1}));
  EXPECT_TRUE(channels_last_is_row_major({2, 1, 4, 5}));
  EXPECT_TRUE(channels_last_is_row_major({2, 3, 4}));
  EXPECT_TRUE(channels_last_is_row_major({6, 7}));
  EXPECT_EQ(channels_last_dims({2, 3, 4, 5}), (dims_t{2, 4, 5, 3}));
  EXPECT_EQ(channels_last_dims({3, 1, 1}), (dims_t{1, 1, 1, 3}));
  EXPECT_EQ(channels_last_dims({5}), (dims_t{1, 1, 5, 1}));
  EXPECT_EQ(half_dtype(kCudaR16BF), DType::kBF16);
  EXPECT_EQ(half_dtype(kCudaR16F), DType::kF16);
  EXPECT_EQ(storage_name(Storage::kHalf, kCudaR16BF, {1, 2, 3, 4}), "bf16 NHWC");
  EXPECT_EQ(storage_name(Storage::kHalf, kCudaR16F, {1, 2}), "f16");
  EXPECT_EQ(storage_name(Storage::kF32, kCudaR16BF, {1, 2, 3, 4}), "f32 NCHW");
}

}  // namespace
}  // namespace hone::cuda
