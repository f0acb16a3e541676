// Transformers on cuda: shape subgraphs evaluated on the host once per shape
// signature (common/host_eval.h) keep an attention block whole on the device;
// Gather, Slice, Expand and Split run there; precision selects cuBLAS's math mode.
// The partition and configuration checks need no device; the rest skip
// without one, naming why.
#include <cmath>
#include <limits>
#include <map>

#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;
using Ints = std::vector<int64_t>;

Tensor i64s(Ints v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, v);
}

ValueId unsq(GraphBuilder& b, ValueId v) {
  return b.op("Unsqueeze", {v, b.constant("", i64s({0}))});
}

/// One attention block as the torchscript exporter writes it for a symbolic
/// batch: head split and merge by Reshapes of Shape-derived targets, q/k/v by
/// Gather, the 1/sqrt(head dim) scale from Shape, a class token Expand-ed to
/// the batch and Concat-ed in front, and a Slice of the result.
Graph attention(std::mt19937& rng) {
  GraphBuilder b("attention");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6, 16});
  ValueId qkv = b.matmul(x, b.constant("w", uniform(rng, {16, 48}, -0.5f, 0.5f)));
  ValueId shape = b.op("Shape", {x});
  ValueId n = unsq(b, b.op("Gather", {shape, b.constant("", Tensor::scalar<int64_t>(0))}));
  ValueId s = unsq(b, b.op("Gather", {shape, b.constant("", Tensor::scalar<int64_t>(1))}));
  ValueId split = b.concat({n, s, b.constant("", i64s({3, 2, 8}))}, 0);
  ValueId t = b.transpose(b.op("Reshape", {qkv, split}), {2, 0, 3, 1, 4});  // [3, n, 2, 6, 8]
  auto pick = [&](int64_t i) {
    return b.op("Gather", {t, b.constant("", Tensor::scalar<int64_t>(i))});
  };
  ValueId q = pick(0), k = pick(1), v = pick(2);
  ValueId last = b.op("Slice", {b.op("Shape", {q}), b.constant("", i64s({-1})),
                                b.constant("", i64s({std::numeric_limits<int64_t>::max()}))});
  ValueId scale = b.div(b.constant("", Tensor::scalar<float>(1.0f)),
                        b.op("Sqrt", {b.op("Cast", {last}, {{"to", int64_t{1}}})}));
  ValueId p = b.softmax(b.matmul(b.mul(q, scale), b.transpose(k, {0, 1, 3, 2})));
  ValueId o = b.transpose(b.matmul(p, v), {0, 2, 1, 3});  // [n, 6, 2, 8]
  ValueId merged = b.op("Reshape", {o, b.concat({n, s, b.constant("", i64s({-1}))}, 0)});
  ValueId cls = b.op("Expand", {b.constant("cls", uniform(rng, {1, 1, 16})),
                                b.concat({n, b.constant("", i64s({1, 16}))}, 0)});
  ValueId seq = b.concat({cls, merged}, 1);  // [n, 7, 16]
  b.output(seq, "y");
  b.output(b.op("Slice", {seq, b.constant("", i64s({1})), b.constant("", i64s({-1})),
                          b.constant("", i64s({1}))}),
           "body");
  return *std::move(b).build();
}

TEST(CudaShapes, AttentionBlockIsOneCudaBlockWithoutADevice) {
  std::mt19937 rng(1);
  const Graph g = attention(rng);
  CudaBackend be;
  auto part = be.plan(g);
  ASSERT_TRUE(part) << part.error().to_string();
  std::string why;
  for (const auto& [id, reason] : part->fallbacks) why += reason + "\n";
  EXPECT_TRUE(part->fallbacks.empty()) << why;
  ASSERT_EQ(part->blocks.size(), 1u) << part->describe(g);
  EXPECT_TRUE(part->blocks[0].on_backend);
}

TEST(CudaShapes, ShapesComputedFromDataAreRefusedWithTheReason) {
  GraphBuilder b("data_shape");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  ValueId target =
      b.op("Cast", {b.op("ReduceMax", {x}, {{"keepdims", int64_t{0}}})}, {{"to", int64_t{7}}});
  b.output(b.op("Reshape", {b.relu(x), unsq(b, target)}), "y");
  const Graph g = *std::move(b).build();
  CudaBackend be;
  const std::vector<NodeSupport> p = be.propose(g);
  ASSERT_EQ(p.size(), 5u);  // ReduceMax, Cast, Unsqueeze, Relu, Reshape
  EXPECT_FALSE(p[4].supported);
  EXPECT_NE(p[4].reason.find("input 1 (shape) is neither a constant nor computed from shapes"),
            std::string::npos)
      << p[4].reason;
}

/// Where whose condition comes from data (a comparison on the device, bool
/// bytes there), one whose condition is known, and Split are proposed (no
/// device needed).
TEST(CudaShapes, WhereConditionsKnownOrMadeOnTheDevice) {
  GraphBuilder b("where_data", 18);
  ValueId x = b.input("x", DType::kF32, Shape{2, 4});
  ValueId pos = b.op("Greater", {x, b.constant("", Tensor::scalar<float>(0.0f))});
  b.output(b.op("Where", {pos, x, b.constant("", Tensor::scalar<float>(0.0f))}), "y");
  const std::vector<bool> keep = {true, false, true, false};
  ValueId w = b.op("Where", {b.constant("", Tensor::from<bool>({4}, keep)), x, b.relu(x)});
  const auto parts = b.op_n("Split", {w}, 2, {{"axis", int64_t{0}}, {"num_outputs", int64_t{2}}});
  b.output(b.add(parts[0], parts[1]), "z");
  const Graph g = *std::move(b).build();
  CudaBackend be;
  const std::vector<NodeSupport> p = be.propose(g);
  ASSERT_EQ(p.size(), 6u);  // Greater, Where, Relu, Where, Split, Add
  EXPECT_TRUE(p[0].supported) << p[0].reason;
  EXPECT_TRUE(p[1].supported) << p[1].reason;
  EXPECT_TRUE(p[3].supported) << p[3].reason;
  EXPECT_TRUE(p[4].supported) << p[4].reason;
}

/// A config value the backend takes but refuses when it builds, before any
/// device work (these run where no GPU is), with `says` in the message.
void expect_refused_at_build(const char* field, const char* value, const std::string& says) {
  std::mt19937 rng(2);
  CudaBackend be;
  ASSERT_TRUE(be.configure(field, value));
  auto r = be.build(attention(rng));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
}

TEST(CudaShapes, UnknownPrecisionIsRefusedWhenConfigured) {
  // Every backend's precision field is parsed by Backend::configure (hone/precision.h).
  CudaBackend be;
  auto r = be.configure("precision", "fp4");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("unknown precision 'fp4'"), std::string::npos)
      << r.error().message();
  ASSERT_TRUE(be.configure("precision", "f16"));  // the old spelling of fp16
  EXPECT_EQ(be.precision(), Precision::kFp16);
}

TEST(CudaShapes, UnknownGemmSelectionIsRefusedBeforeTheDevice) {
  expect_refused_at_build("gemm_select", "fastest",
                          "gemm_select 'fastest': expected time or reduced");
}

TEST(CudaShapes, UnknownAttentionSelectionIsRefusedBeforeTheDevice) {
  expect_refused_at_build("attention_select", "flash",
                          "attention_select 'flash': expected time, fused or unfused");
}

TEST(CudaShapes, UnknownConvSelectionIsRefusedBeforeTheDevice) {
  expect_refused_at_build("conv_select", "fastest",
                          "conv_select 'fastest': expected time, cudnn or cudnn_nhwc");
}

TEST(CudaShapes, NhwcConvSelectionNeedsAHalfPrecision) {
  expect_refused_at_build("conv_select", "cudnn_nhwc",
                          "conv_select 'cudnn_nhwc' runs convs in bf16 or f16: it needs precision "
                          "bf16 or fp16, not 'fp32'");
}

TEST(CudaShapes, AttentionBlockMatchesTheReferenceAtEveryBatch) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(3);
  const Graph g = attention(rng);
  for (int64_t n : {1, 3}) expect_matches_reference(g, {uniform(rng, {n, 6, 16})}, 1e-4, 1e-5);
}

TEST(CudaShapes, GatherSliceExpandOnTheDevice) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(4);
  GraphBuilder b("index");
  ValueId x = b.input("x", DType::kF32, Shape{4, 5, 6});
  ValueId r = b.relu(x);
  // (Constants stay unnamed: an output renamed to a constant's name would clash.)
  // Indices along a middle axis (copies), a negative one, and a 2-D index tensor.
  b.output(b.op("Gather", {r, b.constant("", i64s({3, -1, 0}))}, {{"axis", int64_t{1}}}), "g1");
  b.output(b.op("Gather", {r, b.constant("", Tensor::from<int64_t>({2, 2}, {0, 2, 3, 1}))}), "g2");
  // Steps, negative steps, clamped ends.
  b.output(b.op("Slice", {r, b.constant("", i64s({0, 5})), b.constant("", i64s({100, 0})),
                          b.constant("", i64s({2, 1})), b.constant("", i64s({2, -2}))}),
           "s1");
  b.output(b.op("Slice", {r, b.constant("", i64s({1})), b.constant("", i64s({3}))}), "s2");
  b.output(b.op("Expand",
                {b.sigmoid(b.op("Slice", {r, b.constant("", i64s({0})), b.constant("", i64s({1})),
                                          b.constant("", i64s({1}))})),
                 b.constant("", i64s({2, 4, 5, 6}))}),
           "e");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {4, 5, 6}, -1.0f, 1.0f)});
}

/// Split as the dynamo exporter writes it for q, k and v (opset 18's
/// num_outputs along the last axis: strided copies), by a `split` input along
/// a middle axis, and along the outermost axis (views of the input).
TEST(CudaShapes, SplitOnTheDevice) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(6);
  GraphBuilder b("split", 18);
  ValueId x = b.input("x", DType::kF32, Shape{2, 5, 12});
  ValueId r = b.relu(x);
  const auto qkv = b.op_n("Split", {r}, 3, {{"axis", int64_t{-1}}, {"num_outputs", int64_t{3}}});
  const auto mid = b.op_n("Split", {r, b.constant("", i64s({1, 4}))}, 2, {{"axis", int64_t{1}}});
  const auto outer = b.op_n("Split", {r}, 2, {{"axis", int64_t{0}}});
  b.output(b.sigmoid(qkv[0]), "q");
  b.output(b.add(qkv[1], qkv[2]), "kv");
  b.output(b.tanh(mid[0]), "m0");
  b.output(b.sigmoid(mid[1]), "m1");
  b.output(b.mul(outer[0], outer[1]), "o");
  const Graph g = *std::move(b).build();
  auto be = expect_matches_reference(g, {uniform(rng, {2, 5, 12}, -1.0f, 1.0f)});
  const std::string plan = plan_text(*be);
  EXPECT_NE(plan.find("split.f32.cuda.strided_copy"), std::string::npos) << plan;
  EXPECT_NE(plan.find("split.f32.cuda.view"), std::string::npos) << plan;
}

/// Where with a known condition, as exporters mask attention scores: a
/// causal mask computed from the input's dims (Range, a comparison: host
/// values) and a bool constant, each uploaded as 0/1 floats for the chain.
TEST(CudaShapes, WhereWithAKnownConditionOnTheDevice) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(7);
  GraphBuilder b("where");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6, 6});
  ValueId r = b.relu(x);
  ValueId seq = b.op("Gather", {b.op("Shape", {r}), b.constant("", Tensor::scalar<int64_t>(2))});
  ValueId ar = b.op("Range", {b.constant("", Tensor::scalar<int64_t>(0)), seq,
                              b.constant("", Tensor::scalar<int64_t>(1))});
  ValueId causal = b.op("LessOrEqual", {ar, b.op("Unsqueeze", {ar, b.constant("", i64s({1}))})});
  ValueId masked = b.op("Where", {causal, r, b.constant("", Tensor::scalar<float>(-1e4f))});
  b.output(b.op("Softmax", {masked}, {{"axis", int64_t{-1}}}), "p");
  const std::vector<bool> keep = {false, true, true, false, true, false};
  ValueId fixed = b.constant("", Tensor::from<bool>({6}, keep));
  b.output(b.sigmoid(b.op("Where", {fixed, b.tanh(r), r})), "w");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 6, 6}, -1.0f, 1.0f)});
}

/// ‖a − b‖ / ‖b‖.
double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = double(a.data<float>()[i]) - double(b.data<float>()[i]);
    num += d * d;
    den += double(b.data<float>()[i]) * double(b.data<float>()[i]);
  }
  return std::sqrt(num / den);
}

TEST(CudaShapes, EachPrecisionRoundsAsItSaysAndStaysWithinItsTolerance) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(5);
  GraphBuilder b("mm");
  ValueId x = b.input("x", DType::kF32, Shape{256, 1024});
  ValueId h = b.matmul(x, b.constant("w", uniform(rng, {1024, 256})));
  // A batched product of two activations, as attention's scores.
  ValueId t = b.op("Reshape", {h, b.constant("", i64s({4, 64, 256}))});
  b.output(h, "y");
  b.output(b.matmul(t, b.transpose(t, {0, 2, 1})), "scores");
  const Graph g = *std::move(b).build();
  const Tensor in = uniform(rng, {256, 1024});
  auto want = eval::Interpreter().run_tensors(g, {in});
  ASSERT_TRUE(want) << want.error().to_string();
  struct Case {
    const char* precision;
    double max_err;       // relative L2 of the product
    const char* product;  // its kernel id
  };
  const Case cases[] = {{"fp32", 1e-5, "matmul.f32.cuda.sgemm"},
                        {"tf32", 2e-3, "matmul.f32.cuda.sgemm"},
                        {"bf16", 1e-2, "matmul.bf16.cuda.gemm_ex"},
                        {"fp16", 2e-3, "matmul.f16.cuda.gemm_ex"},
                        {"f16", 2e-3, "matmul.f16.cuda.gemm_ex_batched"}};
  double strict = 0;
  std::map<std::string, double> worst;
  for (const Case& c : cases) {
    CudaBackend be;
    ASSERT_TRUE(be.configure("precision", c.precision));
    ASSERT_TRUE(be.configure("gemm_select", "reduced"));  // no TF32 candidate: bf16/f16 itself
    ASSERT_TRUE(be.configure("activations", "f32"));      // the products' own kernels
    ASSERT_TRUE(be.build(g));
    auto got = be.infer({in});
    ASSERT_TRUE(got) << got.error().to_string();
    for (size_t o = 0; o < 2; ++o) {
      const double err = rel_l2((*got)[o], (*want)[o]);
      EXPECT_LT(err, c.max_err) << c.precision << " output " << o;
      worst[c.precision] = std::max(worst[c.precision], err);
      if (c.precision == std::string("fp32"))
        strict = std::max(strict, err);
      else
        EXPECT_GT(err, 4 * strict)
            << c.precision << " (" << err << ") should round more than fp32 (" << strict << ")";
    }
    const std::string plan = testing_util::plan_text(be);
    EXPECT_NE(plan.find(c.product), std::string::npos) << c.precision << "\n" << plan;
  }
  // bf16 keeps 8 bits of mantissa, TF32 and f16 11: bf16 really rounds to bf16.
  EXPECT_GT(worst["bf16"], 2 * worst["tf32"]) << worst["bf16"] << " vs " << worst["tf32"];
  EXPECT_GT(worst["bf16"], 2 * worst["fp16"]) << worst["bf16"] << " vs " << worst["fp16"];
}

TEST(CudaShapes, CopiesTakeTheRowTileOrElementKernelAndStayExact) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(8);
  GraphBuilder b("copies");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 40, 64});
  b.output(b.transpose(x, {0, 2, 1, 3}), "rows_float4");        // rows of 64, as float4
  b.output(b.transpose(x, {0, 1, 3, 2}), "tiles");              // 64 x 40 tiles, 6 batches
  b.output(b.transpose(x, {3, 0, 2, 1}), "tiles_outer_batch");  // the contiguous dim moves out
  ValueId odd = b.input("odd", DType::kF32, Shape{5, 33, 17});
  b.output(b.transpose(odd, {1, 0, 2}), "rows_scalar");   // rows of 17: not float4
  b.output(b.transpose(odd, {2, 1, 0}), "tiles_ragged");  // 17 x 33, partial tiles
  b.output(b.transpose(b.input("small", DType::kF32, Shape{2, 3, 5, 7}), {0, 3, 1, 2}),
           "elements");  // dims under 16: one thread per element
  b.output(b.concat({x, x}, 3), "concat_rows");
  // [1, 8200] to [8200, 1] moves an axis of extent 1 only: a view of the
  // block input (ops::transpose_keeps_order), no copy.
  b.output(b.transpose(b.input("long", DType::kF32, Shape{1, 8200}), {1, 0}), "long_row");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g,
                           {uniform(rng, {2, 3, 40, 64}), uniform(rng, {5, 33, 17}),
                            uniform(rng, {2, 3, 5, 7}), uniform(rng, {1, 8200})},
                           0, 0);
}

}  // namespace
}  // namespace hone::cuda
