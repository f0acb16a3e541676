// Where a new user looks first: every command's --help ends with examples,
// `hone tune` writes its HTML report next to the package by default, and
// `hone export --format triton` adds a model to a Triton repository.
#include "cli/cli_fixture.h"

namespace {

namespace fs = std::filesystem;
using hone_cli_test::Cli;
using hone_cli_test::slurp;

TEST_F(Cli, EveryHelpGivesAnExample) {
  auto top = hone("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("Examples:"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("hone tune models/mlp.onnx"), std::string::npos) << top.out;
  for (const char* cmd : {"inspect", "run", "backends", "conformance", "bench", "tune", "infer",
                          "describe", "export", "inspect-run"}) {
    auto r = hone(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_NE(r.out.find("Examples:\n  hone " + std::string(cmd)), std::string::npos)
        << cmd << " --help:\n"
        << r.out;
  }
}

TEST_F(Cli, TuneWritesItsHtmlReportNextToThePackage) {
  const fs::path pkg = dir_ / "mlp.hone";
  auto t = hone("--threads 1 tune " + model("mlp.onnx") + " -o " + pkg.string() +
                " --backends onednn --no-cache");
  ASSERT_EQ(t.code, 0) << t.err;
  const fs::path html = dir_ / "mlp.report.html";
  EXPECT_NE(t.out.find("report: " + html.string()), std::string::npos) << t.out;
  const std::string page = slurp(html);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("onednn"), std::string::npos);
  EXPECT_NE(page.find("passed: worst output"), std::string::npos);  // correctness figures
  EXPECT_NE(page.find("ref rel L2"), std::string::npos);            // per-output table

  const fs::path quiet = dir_ / "quiet.hone";
  auto q = hone("--threads 1 tune " + model("mlp.onnx") + " -o " + quiet.string() +
                " --backends onednn --no-cache --no-html");
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_FALSE(fs::exists(dir_ / "quiet.report.html"));
  EXPECT_EQ(q.out.find("report:"), std::string::npos) << q.out;
}

TEST_F(Cli, TuneDrawsAProgressBarWithAnEstimateOnATerminal) {
  // script(1) (util-linux) gives the command a terminal.
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string cmd = std::string(HONE_CLI_PATH) + " --threads 1 tune " + model("mlp.onnx") +
                          " -o " + (dir_ / "t.hone").string() +
                          " --backends reference,onednn --no-cache --no-html";
  auto r = hone_shell("script -qec '" + cmd + "' /dev/null");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\r\033[K[2/"), std::string::npos) << "redrawn in place:\n" << r.out;
  EXPECT_NE(r.out.find("########"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" s left "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tune: [1/"), std::string::npos) << "no plain lines on a terminal";
}

TEST_F(Cli, ExportTritonAddsAModelAndNeverOverwritesOne) {
  const fs::path pkg = dir_ / "mlp.hone";
  ASSERT_EQ(hone("--threads 1 tune " + model("mlp.onnx") + " -o " + pkg.string() +
                 " --backends onednn --no-cache --no-html")
                .code,
            0);
  const fs::path repo = dir_ / "repo";
  auto e = hone("export " + pkg.string() + " --format triton -o " + repo.string());
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("max_batch_size 8, dynamic batching on"), std::string::npos) << e.out;
  const std::string config = slurp(repo / "mlp" / "config.pbtxt");
  EXPECT_NE(config.find("name: \"mlp\""), std::string::npos) << config;
  EXPECT_NE(config.find("max_batch_size: 8"), std::string::npos) << config;
  EXPECT_TRUE(fs::exists(repo / "mlp" / "1" / "model.onnx"));
  auto again = hone("export " + pkg.string() + " --format triton -o " + repo.string());
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  auto named = hone("export " + pkg.string() + " --format triton --name mlp2 -o " + repo.string());
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_TRUE(fs::exists(repo / "mlp2" / "config.pbtxt"));
  auto misuse =
      hone("export " + pkg.string() + " --format onnx --name x -o " + (dir_ / "o").string());
  EXPECT_EQ(misuse.code, 2) << misuse.err;
  // A folder named with a trailing slash is the same folder.
  auto slash =
      hone("export " + pkg.string() + " --format onnx -o " + (dir_ / "onnx").string() + "/");
  ASSERT_EQ(slash.code, 0) << slash.err;
  EXPECT_TRUE(fs::exists(dir_ / "onnx" / "model.onnx"));
  auto repo_slash = hone("export " + pkg.string() + " --format triton --name m3 -o " +
                         (dir_ / "repo2").string() + "/");
  ASSERT_EQ(repo_slash.code, 0) << repo_slash.err;
  EXPECT_TRUE(fs::exists(dir_ / "repo2" / "m3" / "config.pbtxt"));
}

}  // namespace
