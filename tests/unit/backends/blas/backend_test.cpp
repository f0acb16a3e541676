// The blas backend as a whole: registration, fusion (BatchNormalization
// folding, residual epilogues), fallback with reasons, dynamic shapes,
// concurrent inference, threads, failing builds, and the example models.
#include <filesystem>

#include "backends/concurrent_infer.h"
#include "blas_test_util.h"
#include "hone/onnx.h"
#include "hone/registry.h"

namespace hone::blas {
namespace {

using testing_util::build_blas;
using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;
using testing_util::unit_lines;

/// x -> Conv+BN+Relu -> Conv+BN -> Add(residual) -> Relu -> MaxPool -> GAP -> Flatten -> Gemm ->
/// Softmax.
Graph res_block(std::mt19937& rng, Dim batch = Dim::symbol("batch")) {
  GraphBuilder b("resblock");
  auto bn = [&](ValueId v, const std::string& n) {
    return b.op("BatchNormalization",
                {v, b.constant(n + ".s", uniform(rng, {8}, 0.5f, 1.5f)),
                 b.constant(n + ".b", uniform(rng, {8})), b.constant(n + ".m", uniform(rng, {8})),
                 b.constant(n + ".v", uniform(rng, {8}, 0.5f, 1.5f))});
  };
  ValueId x = b.input("x", DType::kF32, Shape{batch, 3, 10, 10});
  ValueId c1 = b.relu(bn(b.conv(x, b.constant("w1", uniform(rng, {8, 3, 3, 3})),
                                b.constant("b1", uniform(rng, {8})), {.pads = {1, 1, 1, 1}}),
                         "bn1"));
  ValueId c2 =
      bn(b.conv(c1, b.constant("w2", uniform(rng, {8, 8, 3, 3})), kNoValue, {.pads = {1, 1, 1, 1}}),
         "bn2");
  ValueId r = b.relu(b.add(c2, c1));
  ValueId p = b.flatten(b.global_average_pool(b.max_pool(r, {2, 2}, {2, 2}, {0, 0, 0, 0})));
  b.output(b.softmax(b.gemm(p, b.constant("wf", uniform(rng, {5, 8})),
                            b.constant("bf", uniform(rng, {5})), {.trans_b = true}),
                     1),
           "y");
  return *std::move(b).build();
}

TEST(BlasBackend, RegisteredWithCapabilities) {
  const auto* e = default_registry().find("blas");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->capabilities.dtypes, std::vector<DType>{DType::kF32});
  EXPECT_TRUE(e->capabilities.dynamic_shapes);
  auto be = default_registry().create("blas");
  ASSERT_TRUE(be);
  EXPECT_EQ((*be)->name(), "blas");
  EXPECT_TRUE((*be)->config().has("threads"));
}

TEST(BlasBackend, BatchNormFoldsAndResidualFusesIntoConv) {
  std::mt19937 rng(1);
  Graph g = res_block(rng, 2);
  // The graph passes would fold the BatchNormalization first; this is the backend's own fold.
  auto be = expect_matches_reference(g, {uniform(rng, {2, 3, 10, 10})}, 2, /*optimize=*/false);
  const std::string plan = plan_text(*be);
  // conv1+bn+relu, conv2+bn+add+relu, maxpool, gap, flatten, gemm, softmax.
  EXPECT_EQ(be->kernel_executions(), 7u) << plan;
  EXPECT_NE(plan.find("(Conv)+BatchNormalization+Relu [conv2d.f32.blas.im2col +bias,relu]"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("(Conv)+BatchNormalization+Add+Relu [conv2d.f32.blas.im2col +bias,add,relu]"),
            std::string::npos)
      << plan;
}

TEST(BlasBackend, RefusedOpFallsBackAndStillMatches) {
  std::mt19937 rng(2);
  GraphBuilder b("mixed");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 6});
  ValueId h =
      b.relu(b.gemm(x, b.constant("w", uniform(rng, {6, 6})), b.constant("c", uniform(rng, {6}))));
  ValueId e = b.op("Cos", {h});  // no blas kernel
  b.output(b.sigmoid(b.matmul(e, b.constant("w2", uniform(rng, {6, 3})))), "y");
  Graph g = *std::move(b).build();
  auto be = build_blas(g);
  const Partition& p = be->partition();
  ASSERT_EQ(p.blocks.size(), 3u) << p.describe(g);
  EXPECT_FALSE(p.blocks[1].on_backend);
  ASSERT_EQ(p.fallbacks.size(), 1u);
  EXPECT_NE(p.fallbacks[0].second.find("no blas kernel for Cos"), std::string::npos)
      << p.fallbacks[0].second;
  std::vector<Tensor> in{uniform(rng, {3, 6})};
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(close((*got)[0], (*eval::Interpreter().run_tensors(g, in))[0]));
  EXPECT_EQ(be->kernel_executions(), 2u);
  EXPECT_EQ(be->fallback_runs(), 0u);
}

TEST(BlasBackend, UnsupportedConfigurationsAreRefusedWithReasons) {
  GraphBuilder b("refusals");
  ValueId x = b.input("x", DType::kF32, Shape{1, 2, 4, 4});
  ValueId i = b.input("i", DType::kI64, Shape{3});
  ValueId x3 = b.input("x3", DType::kF32, Shape{1, 2, 4, 4, 4});
  b.output(b.op("BatchNormalization",
                {x, b.constant("s", Tensor::from<float>({2}, {1, 1})),
                 b.constant("b", Tensor::from<float>({2}, {0, 0})),
                 b.constant("m", Tensor::from<float>({2}, {0, 0})),
                 b.constant("v", Tensor::from<float>({2}, {1, 1}))},
                {{"training_mode", int64_t{1}}}),
           "bn");
  b.output(b.op("Relu", {i}), "r");
  auto pool = b.op_n("MaxPool", {x}, 2, {{"kernel_shape", std::vector<int64_t>{2, 2}}});
  b.output(pool[0], "p");
  b.output(pool[1], "indices");
  b.output(b.op("Conv", {x3, b.constant("w3", Tensor::zeros(DType::kF32, {1, 2, 1, 1, 1}))}), "c3");
  Graph g = *std::move(b).build();
  auto votes = BlasBackend().propose(g);
  ASSERT_EQ(votes.size(), 4u);
  EXPECT_NE(votes[0].reason.find("training_mode"), std::string::npos) << votes[0].reason;
  EXPECT_NE(votes[1].reason.find("i64"), std::string::npos) << votes[1].reason;
  EXPECT_NE(votes[2].reason.find("Indices"), std::string::npos) << votes[2].reason;
  EXPECT_NE(votes[3].reason.find("1-D and 2-D"), std::string::npos) << votes[3].reason;
}

TEST(BlasBackend, DynamicBatchPlansOncePerShape) {
  std::mt19937 rng(3);
  Graph g = res_block(rng);
  auto be = build_blas(g, 2);
  EXPECT_TRUE(be->describe_kernels().empty())
      << "symbolic batch: nothing planned before the first call";
  eval::Interpreter ref;
  for (int round = 0; round < 2; ++round)
    for (int64_t n = 1; n <= 5; ++n) {
      std::vector<Tensor> in{uniform(rng, {n, 3, 10, 10})};
      auto got = be->infer(in);
      ASSERT_TRUE(got) << got.error().to_string();
      EXPECT_TRUE(close((*got)[0], (*ref.run_tensors(g, in))[0])) << "batch " << n;
    }
  EXPECT_EQ(be->kernel_executions(), 70u);  // 7 units x 10 calls
  // 7 units; the two Convs switch to batched SGEMMs from 4 images on (2 threads x 2).
  EXPECT_EQ(unit_lines(*be).size(), 9u) << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("(Conv)+Relu [conv2d.f32.blas.im2col.batched +bias,relu]"),
            std::string::npos)
      << plan_text(*be);
  // One memory line per planned batch size, and the arena grows with the batch.
  EXPECT_EQ(be->describe_kernels().size(), 14u) << plan_text(*be);
  EXPECT_NE(plan_text(*be).find("for block 'resblock_block' [5,3,10,10]: arena"), std::string::npos)
      << plan_text(*be);
  const MemoryFigures m = be->memory_figures();
  EXPECT_GE(m.peak_activation_bytes, 5u * 16 * 10 * 10 * sizeof(float))
      << "a [5,16,10,10] temporary";
  EXPECT_LT(m.peak_activation_bytes, m.naive_activation_bytes);
  EXPECT_EQ(be->fallback_runs(), 0u);
}

TEST(BlasBackend, ConcurrentInferIsBitwiseIdentical) {
  std::mt19937 rng(4);
  Graph g = res_block(rng);
  auto be = build_blas(g, 2);
  std::vector<Tensor> in{uniform(rng, {3, 3, 10, 10})};
  EXPECT_TRUE(backend_test::concurrent_infer_is_bitwise_identical(*be, in));
  EXPECT_EQ(be->executions(), 21u);
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// A zero-sized batch is an empty value (common/empty_values.h): the plan
// has no step, and nothing runs on the reference.
TEST(BlasBackend, EmptyBatchPlansWithoutAStep) {
  GraphBuilder b("empty");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 4});
  b.output(b.relu(x), "y");
  Graph g = *std::move(b).build();
  auto be = build_blas(g);
  auto got = be->infer({Tensor::zeros(DType::kF32, {0, 4})});
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ((*got)[0].shape(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(be->fallback_runs(), 0u);
  EXPECT_EQ(be->kernel_executions(), 0u);
}

TEST(BlasBackend, FailingBuildLeavesOtherBackendsUsable) {
  std::mt19937 rng(5);
  GraphBuilder b("strict");
  ValueId x = b.input("x", DType::kF32, Shape{2, 4});
  b.output(b.op("Cos", {b.relu(x)}), "y");
  Graph bad = *std::move(b).build();
  auto strict = std::make_unique<BlasBackend>();
  ASSERT_TRUE(strict->configure("require_full_compilation", "true"));
  auto r = strict->build(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("Cos"), std::string::npos) << r.error().to_string();
  // A failed infer (wrong input shape) is an error too, not a crash.
  Graph good = res_block(rng, 2);
  auto be = build_blas(good);
  EXPECT_FALSE(be->infer({uniform(rng, {2, 3, 9, 10})}));
  // The same process still builds and runs blas and the reference.
  std::vector<Tensor> in{uniform(rng, {2, 3, 10, 10})};
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref);
  ASSERT_TRUE((*ref)->build(good));
  auto want = (*ref)->infer(in);
  auto got = be->infer(in);
  ASSERT_TRUE(want && got);
  EXPECT_TRUE(close((*got)[0], (*want)[0]));
}

TEST(BlasBackend, ExampleModelsMatchTheReference) {
  std::mt19937 rng(6);
  for (const char* name : {"mlp", "cnn", "resnet", "mobilenet"}) {
    SCOPED_TRACE(name);
    const auto path =
        std::filesystem::path(HONE_SOURCE_DIR) / "models" / (std::string(name) + ".onnx");
    auto g = onnx::load_model(path.string());
    ASSERT_TRUE(g) << g.error().to_string();
    const Value& in = g->value(g->inputs()[0]);
    std::vector<int64_t> dims{3};
    for (size_t i = 1; i < in.shape->rank(); ++i) dims.push_back((*in.shape)[i].value());
    auto be = expect_matches_reference(*g, {uniform(rng, dims)});
    EXPECT_EQ(be->partition().blocks.size(), 1u) << be->partition().describe(*g);
  }
}

}  // namespace
}  // namespace hone::blas
