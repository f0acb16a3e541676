// Existing ONNX models on every backend: hone's own exporter with inline and
// external weights read back, and control flow (If, Loop) from the ONNX
// backend test data, checked against the outputs stored with it.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/onnx.h"

namespace hone::functional {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeData = "/usr/share/libonnx-testdata/data/node";

class Onnx : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    dir_ =
        fs::temp_directory_path() / ("hone_functional_onnx_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  /// Exports `g`, imports it again and checks the backend on the imported
  /// model against the reference on the original graph.
  void round_trip(const BackendCase& c, const Graph& g, const onnx::SaveOptions& options,
                  const std::vector<Tensor>& inputs) {
    const fs::path file = dir_ / (g.name() + ".onnx");
    ASSERT_TRUE(onnx::save_model(g, file, options)) << g.name();
    auto loaded = onnx::load_model(file);
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    EXPECT_EQ(loaded->parameter_count(), g.parameter_count());
    auto be = build_backend(c, *loaded);
    ASSERT_TRUE(be) << be.error().to_string();
    EXPECT_TRUE(matches_reference(c, g, inputs, **be)) << g.name();
  }

  fs::path dir_;
};

HONE_MATRIX_TEST_P(Onnx, InlineWeightsRoundTrip, "onnx.inline-weights", "onnx.exported-by-hone") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(41);
  Graph g = conv_net(s);
  round_trip(c, g, {}, s.inputs(g, {{"batch", 2}}));
  // Inline: one file, no weights file next to it.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

HONE_MATRIX_TEST_P(Onnx, ExternalWeightsRoundTrip, "onnx.external-weights",
                   "onnx.exported-by-hone") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(42);
  Graph g = attention_block(s);
  onnx::SaveOptions options;
  options.external_data = true;
  options.external_threshold_bytes = 256;
  round_trip(c, g, options, s.inputs(g, {{"batch", 2}, {"seq", 5}}));
  const fs::path weights = dir_ / (g.name() + ".weights");
  ASSERT_TRUE(fs::exists(weights)) << "no external weights file " << weights;
  EXPECT_GT(fs::file_size(weights), fs::file_size(dir_ / (g.name() + ".onnx")));
}

/// Runs an ONNX backend-test folder on the backend and compares with the
/// outputs stored next to the model.
void run_test_folder(const BackendCase& c, const fs::path& folder) {
  auto g = onnx::load_model(folder / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_backend(c, *g);
  ASSERT_TRUE(be) << folder << ": " << be.error().to_string();
  const fs::path data = folder / "test_data_set_0";
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    auto v = onnx::load_data_file(data / ("input_" + std::to_string(i) + ".pb"));
    ASSERT_TRUE(v) << v.error().to_string();
    inputs.push_back(v->tensor);
  }
  auto outs = (*be)->infer(inputs);
  ASSERT_TRUE(outs) << folder << ": " << outs.error().to_string();
  ASSERT_EQ(outs->size(), g->outputs().size());
  for (size_t i = 0; i < outs->size(); ++i) {
    auto want = onnx::load_data_file(data / ("output_" + std::to_string(i) + ".pb"));
    ASSERT_TRUE(want) << want.error().to_string();
    EXPECT_TRUE(c.tolerance.assert_close((*outs)[i], want->tensor)) << folder << " output " << i;
  }
}

HONE_MATRIX_TEST_P(Onnx, IfAndLoopSubgraphs, "onnx.control-flow") {
  const BackendCase& c = GetParam();
  if (!fs::exists(kNodeData / "test_if" / "model.onnx"))
    HONE_SKIP("the ONNX backend test data (Debian package libonnx-testdata) is not installed");
  run_test_folder(c, kNodeData / "test_if");
  run_test_folder(c, kNodeData / "test_loop11");
}

// Models of the opsets after libonnx's (23 to 25): a grouped-query decoder
// block (RMSNormalization, RotaryEmbedding, causal Attention, with and
// without a KV cache), against the outputs ONNX Runtime 1.30 computed
// (tests/conformance/newer_opsets).
HONE_MATRIX_TEST_P(Onnx, NewerOpsetDecoderBlocks, "onnx.newer-opsets") {
  const BackendCase& c = GetParam();
  const fs::path data = fs::path(HONE_SOURCE_DIR) / "tests/conformance/newer_opsets/data";
  for (const char* name : {"model_decoder_block23_prefill", "model_decoder_block24_decode_cache",
                           "model_decoder_block25_interleaved_cache"})
    run_test_folder(c, data / name);
}

HONE_WITH_BACKENDS(Onnx);

}  // namespace
}  // namespace hone::functional
