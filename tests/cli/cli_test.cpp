// Runs the `hone` binary as a user would and checks exit codes, files and
// messages. The example models come from models/ (made by tools/make-models).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_fixture.h"
#include "eval/interpreter.h"
#include "hone/npy.h"
#include "hone/onnx.h"

namespace {

namespace fs = std::filesystem;
using hone_cli_test::Cli;
using hone_cli_test::Ran;
using hone_cli_test::slurp;

TEST_F(Cli, VersionAndUsage) {
  auto v = hone("--version");
  EXPECT_EQ(v.code, 0);
  // The second line says whether distributed tuning (MPI) is in this build.
  EXPECT_TRUE(v.out.starts_with("hone 0.1.0\ndistributed tuning (mpirun): ")) << v.out;
  EXPECT_EQ(hone("").code, 2);            // no command
  EXPECT_EQ(hone("run").code, 2);         // no model
  EXPECT_EQ(hone("frobnicate").code, 2);  // unknown command
  EXPECT_EQ(hone("--threads -3 backends").code, 2);
  auto lvl = hone("--log-level loud backends");
  EXPECT_EQ(lvl.code, 2);
  EXPECT_NE(lvl.err.find("loud"), std::string::npos) << lvl.err;
}

TEST_F(Cli, BackendsListsTheReference) {
  auto r = hone("backends");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("reference"), std::string::npos);
  auto j = hone("backends --json");
  ASSERT_EQ(j.code, 0) << j.err;
  auto parsed = nlohmann::json::parse(j.out);
  ASSERT_TRUE(parsed.is_array());
  bool found = false;
  for (const auto& e : parsed) found |= e["name"] == "reference";
  EXPECT_TRUE(found);
}

TEST_F(Cli, InspectShowsTheMlp) {
  auto r = hone("inspect " + model("mlp.onnx"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("f32[batch,16]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("probs"), std::string::npos) << r.out;
  auto j = hone("inspect --json " + model("mlp.onnx"));
  ASSERT_EQ(j.code, 0) << j.err;
  auto m = nlohmann::json::parse(j.out);
  // fc1 16x32 + 32, fc2 32x8 + 8
  EXPECT_EQ(m["parameters"]["count"], 16 * 32 + 32 + 32 * 8 + 8);
  EXPECT_EQ(m["parameters"]["bytes"], 4 * (16 * 32 + 32 + 32 * 8 + 8));
  EXPECT_EQ(m["inputs"][0]["name"], "x");
  EXPECT_EQ(m["inputs"][0]["shape"][0], "batch");
  EXPECT_EQ(m["inputs"][0]["shape"][1], 16);
  EXPECT_EQ(m["ops"][0]["op"], "Gemm");  // the most frequent op comes first
  EXPECT_EQ(m["ops"][0]["count"], 2);
  EXPECT_EQ(m["nodes"], 4);
}

TEST_F(Cli, InspectListsNodesWithShapesBeforeAndAfterThePasses) {
  // The transformer's LayerNorm is spelt out in ReduceMean/Sub/Pow/... nodes;
  // the passes fuse it, and --nodes shows each graph's nodes with shapes.
  auto loaded = hone("inspect " + model("transformer.onnx") + " --nodes");
  ASSERT_EQ(loaded.code, 0) << loaded.err;
  EXPECT_NE(loaded.out.find("nodes of the loaded graph"), std::string::npos) << loaded.out;
  EXPECT_EQ(loaded.out.find("(LayerNormalization):"), std::string::npos) << loaded.out;
  auto opt = hone("inspect " + model("transformer.onnx") + " --passes --nodes");
  ASSERT_EQ(opt.code, 0) << opt.err;
  EXPECT_NE(opt.out.find("nodes of the optimized graph"), std::string::npos) << opt.out;
  EXPECT_NE(opt.out.find("(LayerNormalization): "), std::string::npos) << opt.out;
  EXPECT_NE(opt.out.find("(constant) f32[512,128] -> "), std::string::npos) << opt.out;
  EXPECT_NE(opt.out.find("f32[batch,seq,128]"), std::string::npos) << opt.out;
}

TEST_F(Cli, InspectShowsTheBackendsPartition) {
  auto r = hone("inspect " + model("mlp.onnx") + " --backend onednn");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("partition on onednn: 4 of 4 nodes, 1 block"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Gemm x2"), std::string::npos) << r.out;

  // Raising min_block_size above the graph's size sends every node back, with the reason.
  auto j =
      hone("inspect --json " + model("mlp.onnx") + " --backend onednn --config min_block_size=10");
  ASSERT_EQ(j.code, 0) << j.err;
  auto m = nlohmann::json::parse(j.out);
  EXPECT_EQ(m["partition"]["backend"], "onednn");
  EXPECT_EQ(m["partition"]["nodes_on_backend"], 0);
  ASSERT_EQ(m["partition"]["fallbacks"].size(), 4u);
  EXPECT_NE(m["partition"]["fallbacks"][0]["reason"].get<std::string>().find("min_block_size"),
            std::string::npos)
      << j.out;
  EXPECT_EQ(m["partition"]["blocks"][0]["runs_on"], "fallback");

  auto bad = hone("inspect " + model("mlp.onnx") + " --backend nope");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("nope"), std::string::npos) << bad.err;
  auto bad_field = hone("inspect " + model("mlp.onnx") + " --backend onednn --config warp=9");
  EXPECT_NE(bad_field.code, 0);
  EXPECT_NE(bad_field.err.find("warp"), std::string::npos) << bad_field.err;
}

TEST_F(Cli, RunAndBenchTakeBackendConfig) {
  // A field the backend declares changes what runs: optimize=false leaves the graph as imported.
  auto ok = hone("bench " + model("mlp.onnx") +
                 " --backend onednn --config optimize=false --batch 2 --iters 3 --warmup 1 --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  auto r = hone("run " + model("mlp.onnx") +
                " --backend onednn --config min_block_size=1 --random-inputs 3 --dim batch=2");
  EXPECT_EQ(r.code, 0) << r.err;
  // Unknown fields and malformed settings are named.
  auto bad_field = hone("bench " + model("mlp.onnx") + " --backend onednn --config warp=9");
  EXPECT_NE(bad_field.code, 0);
  EXPECT_NE(bad_field.err.find("warp"), std::string::npos) << bad_field.err;
  auto malformed =
      hone("run " + model("mlp.onnx") + " --backend onednn --config warp --random-inputs 1");
  EXPECT_NE(malformed.code, 0);
  EXPECT_NE(malformed.err.find("expected FIELD=VALUE"), std::string::npos) << malformed.err;
}

// aot sizes its buffers by bounds: bench, like run, bounds them by the inputs
// it runs (a batch of 100 is past aot's default bound of 64), unless
// --config gives bounds, which are then kept.
TEST_F(Cli, BenchBoundsAotByItsInputs) {
  auto r = hone("bench " + model("mlp.onnx") + " --backend aot --batch 100 --iters 2 --warmup 1");
  EXPECT_EQ(r.code, 0) << r.err;
  auto given = hone("bench " + model("mlp.onnx") +
                    " --backend aot --config dim_bounds=batch=8 --batch 100 --iters 2 --warmup 1");
  EXPECT_NE(given.code, 0);
  EXPECT_NE(given.err.find("outside the compiled bounds [0, 8]"), std::string::npos) << given.err;
}

// Figures are what was measured; only their consistency is asserted here.
TEST_F(Cli, BenchReportsPercentilesInOrder) {
  auto r = hone("bench " + model("mlp.onnx") +
                " --backend onednn --batch 4 --iters 20 --warmup 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["batch"], 4);
  EXPECT_EQ(j["iters"], 20);
  EXPECT_EQ(j["executions"], 22);  // warm-up and timed runs all ran on onednn's own path
  EXPECT_GT(j["p50_ms"].get<double>(), 0.0);
  EXPECT_LE(j["min_ms"].get<double>(), j["p50_ms"].get<double>());
  EXPECT_LE(j["p50_ms"].get<double>(), j["p90_ms"].get<double>());
  EXPECT_LE(j["p90_ms"].get<double>(), j["p99_ms"].get<double>());
  EXPECT_LE(j["p99_ms"].get<double>(), j["max_ms"].get<double>());
  EXPECT_GT(j["throughput_per_s"].get<double>(), 0.0);
  auto text = hone("bench " + model("cnn.onnx") + " --iters 3");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("latency  p50"), std::string::npos) << text.out;
  auto bad = hone("bench " + model("mlp.onnx") + " --iters 0");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--iters"), std::string::npos) << bad.err;
  // A fixed-shape model cannot be batched: throughput would count samples it never ran.
  ::hone::Graph fixed("fixed");
  fixed.add_output(fixed.add_node(
      "Relu", {fixed.add_input("x", ::hone::DType::kF32, ::hone::Shape{2, 3})}, 1)[0]);
  ASSERT_TRUE(::hone::onnx::save_model(fixed, dir_ / "fixed.onnx"));
  auto unbatchable = hone("bench " + (dir_ / "fixed.onnx").string() + " --batch 4");
  EXPECT_EQ(unbatchable.code, 2);
  EXPECT_NE(unbatchable.err.find("no input of the model has a symbolic leading dim"),
            std::string::npos)
      << unbatchable.err;
  auto unknown = hone("bench " + model("mlp.onnx") + " --dim seq=4");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no dimension named 'seq'"), std::string::npos) << unknown.err;
}

// --io device needs a backend with a device: a host backend says so; a wrong mode is a usage error.
TEST_F(Cli, BenchIoDeviceNeedsADeviceBackend) {
  auto host = hone("bench " + model("mlp.onnx") + " --backend onednn --io host --iters 2 --json");
  ASSERT_EQ(host.code, 0) << host.err;
  EXPECT_EQ(nlohmann::json::parse(host.out)["io"], "host");
  auto device = hone("bench " + model("mlp.onnx") + " --backend onednn --io device --iters 2");
  EXPECT_EQ(device.code, 1);
  EXPECT_NE(device.err.find("backend 'onednn' runs on the host"), std::string::npos) << device.err;
  auto bad = hone("bench " + model("mlp.onnx") + " --io gpu");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--io 'gpu': expected host or device"), std::string::npos) << bad.err;
  auto both = hone("bench " + model("mlp.onnx") + " --io device --pageable-inputs");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--pageable-inputs is for --io host"), std::string::npos) << both.err;
}

// `hone run --io device` takes the device-resident path; on a host backend it says why it cannot.
TEST_F(Cli, RunIoDeviceNeedsADeviceBackend) {
  auto device =
      hone("run " + model("mlp.onnx") + " --backend onednn --random-inputs 1 --io device");
  EXPECT_EQ(device.code, 1);
  EXPECT_NE(device.err.find("backend 'onednn' runs on the host"), std::string::npos) << device.err;
  EXPECT_NE(device.err.find("while copying input 0 to the device"), std::string::npos)
      << device.err;
  auto bad = hone("run " + model("mlp.onnx") + " --random-inputs 1 --io gpu");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--io 'gpu': expected host or device"), std::string::npos) << bad.err;
}

TEST_F(Cli, RunWritesOutputsThatAreProbabilities) {
  const fs::path out = dir_ / "out";
  auto r = hone("run " + model("mlp.onnx") + " --random-inputs 1 --dim batch=3 --outputs " +
                out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("output 0 'probs': f32[3,8]"), std::string::npos) << r.out;
  auto manifest = nlohmann::json::parse(slurp(out / "outputs.json"));
  ASSERT_EQ(manifest.size(), 1u);
  EXPECT_EQ(manifest[0]["name"], "probs");
  EXPECT_EQ(manifest[0]["dtype"], "f32");
  EXPECT_EQ(manifest[0]["shape"], nlohmann::json({3, 8}));
  EXPECT_EQ(manifest[0]["file"], "output_0.npy");
  auto probs = hone::load_npy(out / "output_0.npy");
  ASSERT_TRUE(probs) << probs.error().to_string();
  ASSERT_EQ(probs->shape(), (std::vector<int64_t>{3, 8}));
  for (int row = 0; row < 3; ++row) {  // softmax rows sum to one
    double sum = 0;
    for (int k = 0; k < 8; ++k) sum += probs->data<float>()[row * 8 + k];
    EXPECT_NEAR(sum, 1.0, 1e-5) << row;
  }
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_NE(e.path().extension(), ".tmp") << "left a temporary file " << e.path();
}

TEST_F(Cli, RandomInputsDependOnlyOnTheSeed) {
  auto a =
      hone("run " + model("cnn.onnx") + " --random-inputs 7 --outputs " + (dir_ / "a").string());
  auto b =
      hone("run " + model("cnn.onnx") + " --random-inputs 7 --outputs " + (dir_ / "b").string());
  auto c =
      hone("run " + model("cnn.onnx") + " --random-inputs 8 --outputs " + (dir_ / "c").string());
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(slurp(dir_ / "a/output_0.npy"), slurp(dir_ / "b/output_0.npy"));
  EXPECT_NE(slurp(dir_ / "a/output_0.npy"), slurp(dir_ / "c/output_0.npy"));
}

TEST_F(Cli, RunFromInputFilesMatchesTheInterpreter) {
  hone::Tensor x = hone::Tensor::zeros(hone::DType::kF32, {2, 16});
  for (int i = 0; i < 32; ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  fs::create_directories(dir_ / "in");
  ASSERT_TRUE(hone::save_npy(x, dir_ / "in/input_0.npy"));
  auto r = hone("run " + model("mlp.onnx") + " --inputs " + (dir_ / "in").string() + " --outputs " +
                (dir_ / "out").string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto got = hone::load_npy(dir_ / "out/output_0.npy");
  ASSERT_TRUE(got);

  auto g = hone::onnx::load_model(model("mlp.onnx"));
  ASSERT_TRUE(g) << g.error().to_string();
  auto want = hone::eval::Interpreter().run_tensors(*g, {x});
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE(got->bitwise_equal((*want)[0]));
}

TEST_F(Cli, MissingModelIsAnErrorNamingIt) {
  auto r = hone("run /no/such/model.onnx --random-inputs 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("/no/such/model.onnx"), std::string::npos) << r.err;
}

TEST_F(Cli, MissingInputFileIsAnErrorNamingBothCandidates) {
  fs::create_directories(dir_ / "empty");
  auto r = hone("run " + model("mlp.onnx") + " --inputs " + (dir_ / "empty").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("input 0 'x'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("input_0.pb"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("input_0.npy"), std::string::npos) << r.err;
}

TEST_F(Cli, BadDimIsAUsageError) {
  auto no_eq = hone("run " + model("mlp.onnx") + " --random-inputs 1 --dim batch");
  EXPECT_EQ(no_eq.code, 2);
  EXPECT_NE(no_eq.err.find("NAME=VALUE"), std::string::npos) << no_eq.err;
  auto not_int = hone("run " + model("mlp.onnx") + " --random-inputs 1 --dim batch=two");
  EXPECT_EQ(not_int.code, 2);
  EXPECT_NE(not_int.err.find("'two' is not a non-negative integer"), std::string::npos)
      << not_int.err;
  auto unknown = hone("run " + model("mlp.onnx") + " --random-inputs 1 --dim seq=4");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no dimension named 'seq'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("batch"), std::string::npos) << unknown.err;
}

TEST_F(Cli, WrongInputShapeNamesTheInputAndAxis) {
  fs::create_directories(dir_ / "in");
  ASSERT_TRUE(
      hone::save_npy(hone::Tensor::zeros(hone::DType::kF32, {2, 15}), dir_ / "in/input_0.npy"));
  auto r = hone("run " + model("mlp.onnx") + " --inputs " + (dir_ / "in").string() + " --outputs " +
                (dir_ / "out").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("'x'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("axis 1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out/output_0.npy"));
}

TEST_F(Cli, UnknownBackendIsAnErrorListingTheKnownOnes) {
  auto r = hone("run " + model("mlp.onnx") + " --random-inputs 1 --backend warp-drive");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no backend named 'warp-drive'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("reference"), std::string::npos) << r.err;
  auto c = hone("conformance " + model("") + " --backend warp-drive");
  EXPECT_EQ(c.code, 1);
}

TEST_F(Cli, InputsAndRandomInputsTogetherIsAUsageError) {
  auto r = hone("run " + model("mlp.onnx") + " --random-inputs 1 --inputs " + dir_.string());
  EXPECT_EQ(r.code, 2);
  auto none = hone("run " + model("mlp.onnx"));
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("--random-inputs"), std::string::npos) << none.err;
}

}  // namespace
