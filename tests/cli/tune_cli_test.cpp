// `hone tune`, `infer`, `describe`, `export` and `bench` on a package, run as
// a user would: files written, exit codes, and messages for bad input.
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "hone/npy.h"

namespace {

namespace fs = std::filesystem;
using hone_cli_test::Cli;
using hone_cli_test::slurp;

// --threads is a global option: it goes before the command.
constexpr const char* kQuick = " --backends onednn --no-cache";

TEST_F(Cli, TuneWritesAPackageThatInferDescribeBenchAndExportUse) {
  const fs::path pkg = dir_ / "mlp.hone";
  auto t =
      hone("--threads 1 tune " + model("mlp.onnx") + " -o " + pkg.string() + kQuick + " --report " +
           (dir_ / "r.json").string() + " --html " + (dir_ / "r.html").string());
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("onednn"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("chose "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("saved " + pkg.string()), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("[2/2] onednn: profile batch 8"), std::string::npos)
      << "plain progress lines off a terminal:\n"
      << t.err;
  ASSERT_TRUE(fs::exists(pkg));
  auto report = nlohmann::json::parse(slurp(dir_ / "r.json"), nullptr, false);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["batch_sizes"], nlohmann::json({1, 8}));
  EXPECT_NE(slurp(dir_ / "r.html").find("<svg"), std::string::npos);

  auto inf = hone("infer " + pkg.string() + " --random-inputs 3 --dim batch=2 --outputs " +
                  (dir_ / "out").string());
  ASSERT_EQ(inf.code, 0) << inf.err;
  EXPECT_NE(inf.out.find("output 0 'probs': f32[2,8]"), std::string::npos) << inf.out;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "output_0.npy"));
  // The same inputs through `hone run` on the reference agree.
  auto run = hone("run " + model("mlp.onnx") + " --random-inputs 3 --dim batch=2 --outputs " +
                  (dir_ / "ref").string());
  ASSERT_EQ(run.code, 0) << run.err;
  auto a = hone::load_npy(dir_ / "out" / "output_0.npy");
  auto b = hone::load_npy(dir_ / "ref" / "output_0.npy");
  ASSERT_TRUE(a && b);
  for (int64_t i = 0; i < a->numel(); ++i)
    EXPECT_NEAR(a->data<float>()[i], b->data<float>()[i], 1e-5);

  auto d = hone("describe " + pkg.string());
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.out.find("manifest.json"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("this machine matches"), std::string::npos) << d.out;
  auto dj = hone("describe --json " + pkg.string());
  ASSERT_EQ(dj.code, 0) << dj.err;
  EXPECT_FALSE(nlohmann::json::parse(dj.out, nullptr, false).is_discarded());

  auto bench = hone("bench " + pkg.string() + " --batch 4 --iters 5 --warmup 1 --json");
  ASSERT_EQ(bench.code, 0) << bench.err;
  auto bj = nlohmann::json::parse(bench.out, nullptr, false);
  ASSERT_FALSE(bj.is_discarded()) << bench.out;
  EXPECT_EQ(bj["executions"], 6);

  auto ex = hone("export " + pkg.string() + " --format onnx -o " + (dir_ / "art").string());
  ASSERT_EQ(ex.code, 0) << ex.err;
  EXPECT_TRUE(fs::exists(dir_ / "art" / "model.onnx"));
  EXPECT_TRUE(fs::exists(dir_ / "art" / "deploy.json"));
  auto again = hone("export " + pkg.string() + " --format onnx -o " + (dir_ / "art").string());
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  auto nosuch = hone("export " + pkg.string() + " --format native-so -o " + (dir_ / "so").string());
  EXPECT_EQ(nosuch.code, 1);
  EXPECT_NE(nosuch.err.find("no 'native-so' artifact"), std::string::npos) << nosuch.err;
  EXPECT_FALSE(fs::exists(dir_ / "so")) << "a failed export leaves no folder";
}

TEST_F(Cli, TuneDryRunBuildsNothingAndWritesNothing) {
  auto r = hone("--threads 1 tune " + model("cnn.onnx") +
                " --dry-run --strategy max-throughput+search" + kQuick);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("candidate onednn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing was built"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(dir_) || !fs::exists(dir_ / "out.hone"));
  // Global options may follow the command too.
  auto after = hone("tune " + model("mlp.onnx") + " --dry-run --threads 1");
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_NE(after.out.find("threads 1,"), std::string::npos) << after.out;
}

TEST_F(Cli, TuneAndInferRejectBadInput) {
  EXPECT_EQ(hone("--threads 1 tune " + model("mlp.onnx")).code, 2);  // no -o
  auto strat = hone("--threads 1 tune " + model("mlp.onnx") + " -o x.hone --strategy fastest");
  EXPECT_EQ(strat.code, 2);
  EXPECT_NE(strat.err.find("unknown strategy 'fastest'"), std::string::npos) << strat.err;
  auto dim = hone("--threads 1 tune " + model("mlp.onnx") + " -o x.hone --dim batch=9:1");
  EXPECT_EQ(dim.code, 2);
  EXPECT_NE(dim.err.find("batch=9:1"), std::string::npos) << dim.err;
  auto missing = hone("--threads 1 tune " + (dir_ / "nope.onnx").string() + " -o x.hone");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("nope.onnx"), std::string::npos);
  // A package that is not one, and a truncated one.
  std::ofstream(dir_ / "junk.hone") << "not a zip at all";
  auto junk = hone("infer " + (dir_ / "junk.hone").string() + " --random-inputs 1");
  EXPECT_EQ(junk.code, 1);
  EXPECT_NE(junk.err.find("junk.hone"), std::string::npos) << junk.err;
  const fs::path pkg = dir_ / "ok.hone";
  ASSERT_EQ(hone("--threads 1 tune " + model("mlp.onnx") + " -o " + pkg.string() + kQuick).code, 0);
  const std::string bytes = slurp(pkg);
  std::ofstream(dir_ / "cut.hone", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  auto cut = hone("describe " + (dir_ / "cut.hone").string());
  EXPECT_EQ(cut.code, 1);
  EXPECT_NE(cut.err.find("cut.hone"), std::string::npos) << cut.err;
  auto wrong = hone("infer " + pkg.string() + " --random-inputs 1 --dim batch=99");
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("batch"), std::string::npos) << wrong.err;
}

TEST_F(Cli, TuneLearnsBoundsFromASamplesFolder) {
  // Two samples of the MLP's input, batch 1 and batch 3, as sample folders.
  for (auto [name, batch] : {std::pair<const char*, int64_t>{"a", 1}, {"b", 3}}) {
    fs::create_directories(dir_ / "samples" / name);
    hone::Tensor x = hone::Tensor::zeros(hone::DType::kF32, {batch, 16});
    for (int64_t i = 0; i < x.numel(); ++i)
      x.data<float>()[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
    ASSERT_TRUE(hone::save_npy(x, dir_ / "samples" / name / "input_0.npy"));
  }
  const fs::path pkg = dir_ / "s.hone";
  auto t = hone("--threads 1 tune " + model("mlp.onnx") + " -o " + pkg.string() + " --samples " +
                (dir_ / "samples").string() + kQuick);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("      3 "), std::string::npos) << "measured at batch 3:\n" << t.out;
  auto d = hone("describe " + pkg.string());
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.out.find("min 1"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("max 3"), std::string::npos) << d.out;
  // A sample folder with a file of the wrong shape is an error naming it.
  fs::create_directories(dir_ / "bad" / "a");
  ASSERT_TRUE(hone::save_npy(hone::Tensor::zeros(hone::DType::kF32, {2, 5}),
                             dir_ / "bad" / "a" / "input_0.npy"));
  auto bad = hone("--threads 1 tune " + model("mlp.onnx") + " -o " + (dir_ / "x.hone").string() +
                  " --samples " + (dir_ / "bad").string() + kQuick);
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("axis 1"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.hone"));
}

}  // namespace
