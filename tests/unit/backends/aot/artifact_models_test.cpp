// Every example model (models/*.onnx: the conv nets, the transformer encoder,
// the LSTM, the MLP) compiled by aot, exported as a native-so artifact and run
// by the standalone runner (tools/native-runner, which links nothing from
// hone) at two sizes of its symbolic dims: its outputs match the reference
// interpreter within 1e-4. The same graph runs through hone (AotBackend::infer)
// in aot_backend tests; this proves the artifact alone reproduces it.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "aot_test_util.h"
#include "hone/npy.h"

namespace hone::aot {
namespace {

namespace fs = std::filesystem;
using testing_util::build_aot;
using testing_util::close;

class AotArtifactModels : public ::testing::TestWithParam<std::string> {};

TEST_P(AotArtifactModels, RunnerMatchesTheReference) {
  const std::string name = GetParam();
  const Graph g = testing_util::load_example(name);
  auto be = build_aot(g);
  ASSERT_TRUE(be);
  const fs::path root = fs::path(HONE_BINARY_DIR) / "aot-test-tmp" / ("artifact_models_" + name);
  fs::remove_all(root);
  const fs::path art = root / "artifact";
  fs::create_directories(art);
  auto ex = be->export_artifact(art);
  ASSERT_TRUE(ex) << ex.error().to_string();
  // Every symbolic dim (batch; seq for the transformer and the LSTM) at 1, then 5.
  for (const int64_t n : {1, 5}) {
    const fs::path io = root / ("io_" + std::to_string(n));
    fs::create_directories(io);
    const std::vector<Tensor> in = testing_util::inputs_for(g, n, static_cast<uint32_t>(n));
    for (size_t i = 0; i < in.size(); ++i)
      ASSERT_TRUE(save_npy(in[i], io / ("input_" + std::to_string(i) + ".npy")));
    const std::string cmd = std::string(HONE_NATIVE_RUNNER) + " " + art.string() + " --inputs " +
                            io.string() + " --outputs " + io.string() + " --threads 1 > " +
                            (io / "runner.log").string() + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto want = eval::Interpreter().run_tensors(g, in);
    ASSERT_TRUE(want) << want.error().to_string();
    for (size_t k = 0; k < want->size(); ++k) {
      auto got = load_npy(io / ("output_" + std::to_string(k) + ".npy"));
      ASSERT_TRUE(got) << got.error().to_string();
      EXPECT_TRUE(close(*got, (*want)[k], 1e-4, 1e-4)) << name << " output " << k << " at " << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, AotArtifactModels,
                         ::testing::Values("mlp", "cnn", "resnet", "mobilenet", "transformer",
                                           "lstm"));

}  // namespace
}  // namespace hone::aot
