// The aot backend as a whole: the example models against the reference,
// dynamic batch and its bounds, the compile cache, save/load without a
// compiler, corrupt saves, a missing compiler, and exported artifacts run by
// the standalone runner (which links nothing from hone).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "aot_test_util.h"
#include "backends/aot/toolchain.h"
#include "hone/npy.h"
#include "hone/onnx.h"
#include "hone/registry.h"

namespace hone::aot {
namespace {

namespace fs = std::filesystem;
using testing_util::build_aot;
using testing_util::close;
using testing_util::inputs_for;
using testing_util::load_example;
using testing_util::uniform;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(HONE_BINARY_DIR) / "aot-test-tmp" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* k, const char* v) : key_(k) {
    if (const char* old = std::getenv(k)) old_ = old;
    ::setenv(k, v, 1);
  }
  ~ScopedEnv() { old_ ? (void)::setenv(key_, old_->c_str(), 1) : (void)::unsetenv(key_); }

 private:
  const char* key_;
  std::optional<std::string> old_;
};

class AotModels : public ::testing::TestWithParam<std::string> {};

TEST_P(AotModels, MatchReferenceAtSeveralBatchSizes) {
  const Graph g = load_example(GetParam());
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  // The partition is of the graph the backend planned (the optimized copy
  // when the passes rewrote it): every node of that graph runs compiled.
  const Graph& planned = be->partition().graph ? *be->partition().graph : g;
  EXPECT_EQ(be->partition().nodes_on_backend(), planned.nodes().size())
      << be->partition().describe(planned);
  for (int64_t batch : {1, 3}) {
    const auto in = inputs_for(g, batch, static_cast<uint32_t>(batch));
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE(close((*got)[i], (*want)[i], 1e-4, 1e-4)) << "batch " << batch;
  }
  EXPECT_EQ(be->kernel_executions(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Examples, AotModels,
                         ::testing::Values("mlp", "cnn", "resnet", "mobilenet"));

TEST(AotBackend, DynamicBatchBoundsAndWrongShapes) {
  const Graph g = load_example("mlp");
  auto be = build_aot(g, {{"dim_bounds", "batch=8"}});
  ASSERT_TRUE(be);
  for (int64_t batch = 1; batch <= 8; ++batch)
    ASSERT_TRUE(be->infer(inputs_for(g, batch, 7))) << batch;
  auto over = be->infer(inputs_for(g, 9, 7));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(over.error().message().find("outside the compiled bounds [0, 8]"), std::string::npos)
      << over.error().to_string();
  std::mt19937 rng(1);
  auto wrong = be->infer({uniform(rng, {2, 15})});
  ASSERT_FALSE(wrong);
  auto bad_config = AotBackend().configure("dim_bounds", "batch");  // parsed at build
  EXPECT_TRUE(bad_config);
  AotBackend bad;
  ASSERT_TRUE(bad.configure("dim_bounds", "batch"));
  auto r = bad.build(g);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
}

TEST(AotBackend, ADimTheGraphLeavesUnknownPastItsAssumedBoundRunsOnTheReference) {
  // x's second dim has no name and no bound (as after a Pad inside an If
  // branch): the library assumes default_dim_max for it; a larger one is not
  // an error but a call on the reference, with the same result.
  GraphBuilder b("unknown_dim");
  ValueId x = b.input("x", DType::kF32, Shape{2, Dim::unknown()});
  b.output(b.relu(x), "y");
  const Graph g = *std::move(b).build();
  auto be = build_aot(g, {{"default_dim_max", "8"}});
  ASSERT_TRUE(be);
  std::mt19937 rng(3);
  for (int64_t n : {5, 20}) {
    const Tensor in = uniform(rng, {2, n});
    const uint64_t before = be->kernel_executions();
    auto got = be->infer({in});
    ASSERT_TRUE(got) << n << ": " << got.error().to_string();
    auto want = eval::Interpreter().run_tensors(g, {in});
    ASSERT_TRUE(want);
    EXPECT_TRUE(close((*got)[0], (*want)[0], 0, 0)) << n;
    EXPECT_EQ(be->kernel_executions() > before, n <= 8)
        << n << ": compiled code ran past its bound";
  }
}

TEST(AotBackend, GeneratedSourceIsReadableAndCached) {
  const Graph g = load_example("cnn");
  auto first = build_aot(g);
  ASSERT_TRUE(first);
  const std::string src = first->sources().at(0);
  for (const char* needle :
       {"ARENA_BYTES", "static void step0_conv_relu(const ctx_t* c)", "hone_aot_run", "dnnl_sgemm",
        "#pragma omp parallel for", "d[0] = 'batch', at most 64"})
    EXPECT_NE(src.find(needle), std::string::npos) << needle << "\n" << src.substr(0, 1500);
  const auto plan = first->describe_kernels();
  ASSERT_FALSE(plan.empty());
  // The graph input arrives NCHW: the first conv copies it channels-last.
  EXPECT_EQ(plan[0], "Conv+Relu [layout.f32.aot.nchw_to_nhwc+conv.f32.aot.dnnl_nhwc+post_ops]");
  // The same graph again: the library comes from the cache, the compiler does not run.
  const uint64_t runs = compiler_runs();
  auto second = build_aot(g);
  ASSERT_TRUE(second);
  EXPECT_EQ(compiler_runs(), runs);
  EXPECT_TRUE(second->cache_hits().at(0));
}

TEST(AotBackend, ParallelRegionsHaveASerialTwinAndBothAgree) {
  // Every conditional OpenMP region runs as a plain loop when it would get one
  // thread (libgomp's team of one costs a futex wake per region); with two
  // threads and enough work the parallel copy runs. Both match the reference.
  const Graph g = load_example("transformer");
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string("threads ") + threads);
    auto be = build_aot(g, {{"threads", threads}});
    ASSERT_TRUE(be);
    const std::string src = be->sources().at(0);
    EXPECT_NE(src.find("if (c->nt > 1 && ("), std::string::npos);
    EXPECT_NE(src.find("} else {"), std::string::npos);
    const auto in = inputs_for(g, 8, 5);  // batch 8, seq 8: large enough to fork
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-4, 1e-5));
  }
}

TEST(AotBackend, SaveLoadWithoutCompilerGivesIdenticalOutputs) {
  const Graph g = load_example("resnet");
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  const fs::path dir = fresh_dir("save_resnet");
  ASSERT_TRUE(be->save(dir));
  const auto in = inputs_for(g, 2, 3);
  auto want = be->infer(in);
  ASSERT_TRUE(want);
  const uint64_t runs = compiler_runs();
  ScopedEnv no_cxx("HONE_CXX", "/nonexistent/cc");
  AotBackend fresh;
  auto loaded = fresh.load(g, dir);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_TRUE(fresh.activate());
  auto got = fresh.infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0]));
  EXPECT_EQ(compiler_runs(), runs);
  EXPECT_EQ(fresh.kernel_executions(), 1u);
}

TEST(AotBackend, CorruptSavesAreRejected) {
  const Graph g = load_example("mlp");
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  const fs::path dir = fresh_dir("save_corrupt");
  ASSERT_TRUE(be->save(dir));
  {
    std::ofstream f(dir / "block_0" / "model.so", std::ios::binary | std::ios::trunc);
    f << "not a shared library";
  }
  AotBackend a;
  auto r = a.load(g, dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << r.error().to_string();
  // A save of another graph does not load for this one.
  const fs::path other = fresh_dir("save_other");
  auto cnn = build_aot(load_example("cnn"));
  ASSERT_TRUE(cnn);
  ASSERT_TRUE(cnn->save(other));
  AotBackend b;
  auto r2 = b.load(g, other);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code(), ErrorCode::kCorrupt) << r2.error().to_string();
}

TEST(AotBackend, ASaveFromAnotherRuntimeNamesBothRuntimes) {
  // What an older hone's save looks like: another runtime named, and a
  // source this hone would not generate.
  const Graph g = load_example("mlp");
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  const fs::path dir = fresh_dir("save_old_runtime");
  ASSERT_TRUE(be->save(dir));
  const fs::path meta = dir / "block_0" / "block.json";
  std::string text;
  {
    std::ifstream f(meta);
    text.assign(std::istreambuf_iterator<char>(f), {});
  }
  const size_t rt = text.find("\"runtime\"");
  const size_t src = text.find("\"model.c\"");
  ASSERT_NE(rt, std::string::npos) << text;
  ASSERT_NE(src, std::string::npos) << text;
  // Both values are quoted strings after the key: swap their first characters.
  const size_t rt_value = text.find('"', text.find(':', rt)) + 1;
  text.replace(rt_value, 4, "abi0");
  const size_t src_value = text.find('"', text.find(':', src)) + 1;
  text[src_value] = text[src_value] == '0' ? '1' : '0';
  {
    std::ofstream f(meta, std::ios::trunc);
    f << text;
  }
  AotBackend a;
  auto r = a.load(g, dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << r.error().to_string();
  EXPECT_NE(r.error().message().find("generated with aot runtime abi0"), std::string::npos)
      << r.error().to_string();
  EXPECT_NE(r.error().message().find("tune the model again"), std::string::npos)
      << r.error().to_string();
}

TEST(AotBackend, MissingCompilerIsUnsupportedHardwareAndOthersStillWork) {
  const Graph g = load_example("cnn");
  {
    ScopedEnv no_cxx("HONE_CXX", "/nonexistent");
    auto be = default_registry().create("aot");
    ASSERT_TRUE(be);
    auto r = (*be)->build(g);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::kUnsupportedHardware);
    EXPECT_NE(r.error().message().find("no C++ compiler"), std::string::npos)
        << r.error().to_string();
  }
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref);
  ASSERT_TRUE((*ref)->build(g));
  EXPECT_TRUE((*ref)->infer(inputs_for(g, 2, 1)));
}

TEST(AotBackend, ExportedArtifactRunsInTheStandaloneRunner) {
  const Graph g = load_example("mobilenet");
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  const fs::path art = fresh_dir("artifact_mobilenet");
  auto ex = be->export_artifact(art);
  ASSERT_TRUE(ex) << ex.error().to_string();
  for (const char* f : {"model.so", "weights.bin", "model.json", "model.c", "compile.log"})
    EXPECT_TRUE(fs::exists(art / f)) << f;
  std::ifstream mj(art / "model.json");
  const std::string meta((std::istreambuf_iterator<char>(mj)), std::istreambuf_iterator<char>());
  for (const char* needle : {"\"format\": \"native-so\"", "\"batch_axis\": 0", "\"cpu_features\"",
                             "\"compiler\"", "libdnnl.so.2", "\"batch\""})
    EXPECT_NE(meta.find(needle), std::string::npos) << needle;
  const fs::path io = fresh_dir("artifact_mobilenet_io");
  const auto in = inputs_for(g, 3, 11);
  ASSERT_TRUE(save_npy(in[0], io / "input_0.npy"));
  const std::string cmd = std::string(HONE_NATIVE_RUNNER) + " " + art.string() + " --inputs " +
                          io.string() + " --outputs " + io.string() + " --threads 1 > " +
                          (io / "runner.log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto got = load_npy(io / "output_0.npy");
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want);
  EXPECT_TRUE(close(*got, (*want)[0], 1e-4, 1e-4));
  // A bad input is a clear error from the runner, not a crash.
  std::mt19937 rng(2);
  ASSERT_TRUE(save_npy(uniform(rng, {1, 3, 31, 32}), io / "input_0.npy"));
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
}

TEST(AotBackend, ExportNeedsTheWholeGraphCompiled) {
  GraphBuilder b("partial");
  const ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  const ValueId h = b.relu(x);
  b.output(b.op("Hardmax", {h}, {}, "hardmax"), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  std::mt19937 rng(3);
  EXPECT_TRUE(be->infer({uniform(rng, {2, 3})}));  // the fallback runs Hardmax
  auto r = be->export_artifact(fresh_dir("artifact_partial"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("'hardmax' (Hardmax)"), std::string::npos)
      << r.error().to_string();
}

}  // namespace
}  // namespace hone::aot

namespace hone::aot {
namespace {

TEST(AotBackend, BlockItCannotLowerRunsOnTheReference) {
  // (batch*6)/4 is not a division aot can prove exact, so the block falls back.
  GraphBuilder b("unprovable");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 6});
  b.output(b.relu(b.reshape(b.relu(x), {-1, 4})), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  ASSERT_EQ(be->lowering_fallbacks().size(), 1u);
  std::mt19937 rng(4);
  const std::vector<Tensor> in{uniform(rng, {2, 6})};
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(*g, in);
  ASSERT_TRUE(want);
  EXPECT_TRUE(close((*got)[0], (*want)[0]));
  auto r = be->export_artifact(fresh_dir("artifact_unprovable"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("could not lower"), std::string::npos)
      << r.error().to_string();
}

}  // namespace
}  // namespace hone::aot
