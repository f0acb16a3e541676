// Artifacts on every backend: export a tuned package's deployable artifact
// to a new folder and run it with its own runtime, not hone: the ONNX
// artifact through ONNX Runtime (npm onnxruntime-node), a native shared
// library through the standalone runner (tools/native-runner).
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/export.h"
#include "hone/npy.h"
#include "hone/package.h"

namespace hone::functional {
namespace {

namespace fs = std::filesystem;

class Artifacts : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& ch : name)
      if (ch == '/') ch = '_';
    dir_ = fs::temp_directory_path() / ("hone-artifacts-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  /// Tunes the conv net pinned to the row's backend.
  std::optional<TunedModel> tuned_conv(const BackendCase& c, Graph* g) {
    Seeded s = seeded(61);
    *g = conv_net(s);
    std::vector<Sample> samples;
    for (int64_t b : {1, 3}) samples.push_back(sample_from(*g, s.inputs(*g, {{"batch", b}})));
    auto t = tune(*g, samples, *pinned_strategy(c), quick_tune_options());
    EXPECT_TRUE(t) << t.error().to_string();
    if (!t) return std::nullopt;
    return std::move(*t);
  }

  /// Writes `x` as input_<i>.npy under dir_/in.
  fs::path write_inputs(const std::vector<Tensor>& x) {
    const fs::path in = dir_ / "in";
    fs::create_directories(in);
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_TRUE(save_npy(x[i], in / ("input_" + std::to_string(i) + ".npy")));
    return in;
  }

  fs::path dir_;
};

/// Runs `cmd` with its output in `log`; on failure the message holds the log.
testing::AssertionResult ran(const std::string& cmd, const fs::path& log) {
  const int st = std::system((cmd + " > " + log.string() + " 2>&1").c_str());
  if (st == 0) return testing::AssertionSuccess();
  std::ifstream in(log);
  return testing::AssertionFailure() << cmd << "\nexited " << st << ":\n"
                                     << std::string(std::istreambuf_iterator<char>(in), {});
}

ExportOptions onnx_format() {
  ExportOptions o;
  o.format = "onnx";
  return o;
}

/// The command running an ONNX model in ONNX Runtime (MODEL --inputs DIR
/// --outputs DIR follow): npm's onnxruntime-node under Node, else Python's
/// onnxruntime (the GPU machine has no Node); "" when neither is here.
std::string ort_runner() {
  const fs::path ort = fs::path(HONE_SOURCE_DIR) / "bench/peers/ort";
  if (fs::exists(ort / "node_modules/onnxruntime-node") &&
      std::system("node --version > /dev/null 2>&1") == 0)
    return "node " + (ort / "run.js").string();
  if (std::system("python3 -c 'import numpy, onnxruntime' > /dev/null 2>&1") == 0)
    return "python3 " + (ort / "run.py").string();
  return "";
}
const char* const kNoOrt =
    "ONNX Runtime is not here: neither onnxruntime-node under Node (bench/peers/ort/install.sh) "
    "nor Python's onnxruntime";

testing::AssertionResult deploy_record_is_complete(const fs::path& dir, const std::string& format) {
  std::ifstream in(dir / "deploy.json");
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return testing::AssertionFailure() << "deploy.json is not JSON";
  if (j.value("format", "") != format)
    return testing::AssertionFailure() << "format " << j.value("format", "");
  if (!j.contains("files") || j["files"].empty())
    return testing::AssertionFailure() << "no files listed";
  for (const auto& [file, sum] : j["files"].items())
    if (!fs::exists(dir / file) || sum.get<std::string>().size() != 64)
      return testing::AssertionFailure()
             << "listed file " << file << " missing or without a SHA-256";
  if (j.value("max_batch_measured", 0) < 1) return testing::AssertionFailure() << "no max batch";
  if (!j.contains("inputs") || j["inputs"].empty())
    return testing::AssertionFailure() << "no input specs";
  return testing::AssertionSuccess();
}

HONE_MATRIX_TEST_P(Artifacts, OnnxArtifactRunsInOnnxRuntime, "artifacts.onnx") {
  const BackendCase& c = GetParam();
  const std::string runner = ort_runner();
  if (runner.empty()) HONE_SKIP(kNoOrt);
  Graph g;
  auto tuned = tuned_conv(c, &g);
  ASSERT_TRUE(tuned);
  auto rec = export_artifact(*tuned, dir_ / "onnx", onnx_format());
  ASSERT_TRUE(rec) << rec.error().to_string();
  EXPECT_TRUE(deploy_record_is_complete(dir_ / "onnx", "onnx"));
  Seeded s(8);
  const auto x = s.inputs(g, {{"batch", 2}});
  const fs::path in = write_inputs(x);
  const std::string cmd = runner + " " + (dir_ / "onnx" / "model.onnx").string() + " --inputs " +
                          in.string() + " --outputs " + (dir_ / "ort").string();
  ASSERT_TRUE(ran(cmd, dir_ / "ort.log"));
  auto ort = load_npy(dir_ / "ort" / "output_0.npy");
  ASSERT_TRUE(ort) << ort.error().to_string();
  auto mine = tuned->infer_flat(x);
  ASSERT_TRUE(mine);
  EXPECT_TRUE((Tolerance{1e-4, 1e-5}.assert_close(*ort, (*mine)[0])));
  // Exporting over a folder that has files is refused and changes nothing.
  auto again = export_artifact(*tuned, dir_ / "onnx", onnx_format());
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message().find("already exists"), std::string::npos);
  EXPECT_TRUE(deploy_record_is_complete(dir_ / "onnx", "onnx"));
}

HONE_MATRIX_TEST_P(Artifacts, OwnArtifactRunsWithoutHone, "artifacts.export",
                   "artifacts.run-standalone", "artifacts.native-so") {
  const BackendCase& c = GetParam();
  if (!c.has("export"))
    HONE_SKIP("backend '" + c.key +
              "' has no deployable artifact of its own (its packages export as ONNX)");
  Graph g;
  auto tuned = tuned_conv(c, &g);
  ASSERT_TRUE(tuned);
  const fs::path out = dir_ / "artifact";
  auto rec = export_artifact(*tuned, out, {});
  ASSERT_TRUE(rec) << rec.error().to_string();
  EXPECT_EQ(rec->format, c.artifact_format);
  EXPECT_TRUE(deploy_record_is_complete(out, c.artifact_format));
  // A package loaded elsewhere exports the same artifact (its saved state is
  // all it has: the folder it was loaded from is gone by then).
  ASSERT_TRUE(save(*tuned, dir_ / "m.hone"));
  LoadOptions lo;
  lo.registry = &case_registry();
  auto loaded = load(dir_ / "m.hone", lo);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  auto again = export_artifact(*loaded, dir_ / "artifact2", {});
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->files, rec->files)
      << "the loaded package's artifact differs from the tuned model's";
  Seeded s(9);
  const auto x = s.inputs(g, {{"batch", 2}});
  const fs::path in = write_inputs(x);
  std::string cmd;
  if (c.artifact_format == "onnx") {
    const std::string runner = ort_runner();
    if (runner.empty()) HONE_SKIP(kNoOrt);
    cmd = runner + " " + (out / "model.onnx").string();
  } else if (c.artifact_format == "native-so") {
    cmd = std::string(HONE_NATIVE_RUNNER) + " " + out.string();
  } else {
    FAIL() << "no standalone runner known for artifact format '" << c.artifact_format << "'";
  }
  cmd += " --inputs " + in.string() + " --outputs " + (dir_ / "out").string();
  ASSERT_TRUE(ran(cmd, dir_ / "run.log"));
  auto got = load_npy(dir_ / "out" / "output_0.npy");
  ASSERT_TRUE(got) << got.error().to_string();
  auto mine = tuned->infer_flat(x);
  ASSERT_TRUE(mine);
  EXPECT_TRUE((Tolerance{1e-4, 1e-5}.assert_close(*got, (*mine)[0])));
}

HONE_WITH_BACKENDS(Artifacts);

}  // namespace
}  // namespace hone::functional
