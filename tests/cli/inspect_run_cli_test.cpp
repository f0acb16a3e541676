// `hone inspect-run`: over a model with sample folders or random inputs, and
// over a pipeline description; bad descriptions and options are clear errors
// that write nothing.
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.h"
#include "hone/npy.h"
#include "hone/tensor.h"

namespace hone_cli_test {
namespace {

nlohmann::json read_json(const fs::path& p) {
  return nlohmann::json::parse(slurp(p));
}

TEST_F(Cli, InspectRunOverAModelWithSampleFolders) {
  // Two sample folders of batch 2 and 5: the page shows both shapes and axis 0 varying.
  for (int64_t b : {2, 5}) {
    const fs::path d = dir_ / ("s" + std::to_string(b));
    fs::create_directories(d);
    std::vector<float> x(static_cast<size_t>(b * 16), 0.25f);
    ASSERT_TRUE(hone::save_npy(hone::Tensor::from<float>({b, 16}, x), d / "input_0.npy"));
  }
  const fs::path page = dir_ / "run.html";
  Ran r = hone("inspect-run " + model("mlp.onnx") + " --inputs " + (dir_ / "s2").string() +
               " --inputs " + (dir_ / "s5").string() + " --calls 4 -o " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 calls"), std::string::npos) << r.out;
  auto j = read_json(dir_ / "run.json");
  const auto& root = j.at("root");
  EXPECT_EQ(root.at("state"), "inspecting");
  EXPECT_EQ(root.at("calls"), 4);
  EXPECT_EQ(root.at("inputs")[0].at("shapes"), nlohmann::json::parse("[[2,16],[5,16]]"));
  EXPECT_EQ(root.at("inputs")[0].at("varied_axes"), nlohmann::json::parse("[0]"));
  const std::string html = slurp(page);
  EXPECT_NE(html.find("<!DOCTYPE html>"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
}

TEST_F(Cli, InspectRunDeferredTunesAfterTheCalls) {
  const fs::path page = dir_ / "run.html";
  Ran r = hone("inspect-run " + model("mlp.onnx") +
               " --mode deferred --backend reference --dim batch=1,3 --calls 4 --threads 1 -o " +
               page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = read_json(dir_ / "run.json");
  EXPECT_EQ(j.at("root").at("state"), "tuned") << j.at("root").at("reason");
  EXPECT_EQ(j.at("root").at("calls"), 5) << "4 calls and the one that starts the tune";
}

TEST_F(Cli, InspectRunRejectsBadDescriptionsAndOptions) {
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  };
  const std::string out = " -o " + (dir_ / "run.html").string();
  struct Case {
    std::string args, expect;
    int code;
  };
  const std::vector<Case> cases = {
      {"--pipeline " + write("a.json", "{\"stages\": []}") + out, "non-empty list", 1},
      {"--pipeline " +
           write("b.json",
                 "{\"stages\": [{\"name\": \"s\", \"model\": \"m.onnx\", "
                 "\"mdoe\": \"eager\"}]}") +
           out,
       "unknown key 'mdoe'", 1},
      {"--pipeline " +
           write("c.json",
                 "{\"stages\": [{\"name\": \"s\", \"model\": \"m.onnx\", "
                 "\"mode\": \"lazy\"}]}") +
           out,
       "mode 'lazy'", 1},
      {"--pipeline " +
           write("d.json", "{\"stages\": [{\"name\": \"s\", \"model\": \"none.onnx\"}]}") + out,
       "stage 's'", 1},
      {"--pipeline " + write("e.json", "not json") + out, "not JSON", 1},
      {"--pipeline " +
           write("f.json",
                 "{\"dims\": {\"seq\": [2]}, \"stages\": [{\"name\": \"m\", "
                 "\"model\": \"" +
                     model("mlp.onnx") + "\"}]}") +
           out,
       "dim 'seq': the pipeline's inputs have no dimension of that name (batch)", 2},
      {"--pipeline " + (dir_ / "missing.json").string() + out, "cannot open", 1},
      {model("mlp.onnx") + " --mode lazy" + out, "unknown JIT mode 'lazy'", 2},
      {model("mlp.onnx") + " --dim batch=1,x" + out, "'x' is not a non-negative integer", 2},
      {model("mlp.onnx") + " --dim seq=2" + out, "no dimension named 'seq'", 2},
      {model("mlp.onnx") + " -o " + (dir_ / "run.json").string(), "the JSON is written beside it",
       2},
      {"-o " + (dir_ / "run.html").string(), "either MODEL.onnx or --pipeline", 2},
  };
  for (const auto& c : cases) {
    Ran r = hone("inspect-run " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "run.html")) << c.args;
  }
}

}  // namespace
}  // namespace hone_cli_test
