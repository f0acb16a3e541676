// Pipelines with JIT stages on every backend: each stage records what it
// really receives and tunes alone in its mode, a stage below the time-share
// threshold is left alone, tuned stages save and load by name; and the
// inspection report (JSON and page) of a two-stage pipeline, from the
// library and from `hone inspect-run --pipeline`.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/onnx.h"
#include "hone/pipeline.h"

namespace hone::functional {
namespace {

namespace fs = std::filesystem;

class JitPipeline : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("hone-jit-" + std::to_string(getpid()) + "-" +
                                        GetParam().key + "-" + name.substr(0, 20));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

JitOptions stage_options(const BackendCase& c, JitMode mode, size_t min_samples) {
  JitOptions o;
  o.mode = mode;
  o.min_samples = min_samples;
  o.tune = quick_tune_options();
  (void)c;
  return o;
}

std::vector<TensorMap> pipeline_calls(Seeded& s) {
  std::vector<TensorMap> calls;
  for (int64_t b : {1, 4, 2, 3, 4, 1}) calls.push_back({{"x", s.uniform({b, 12})}});
  return calls;
}

HONE_MATRIX_TEST_P(JitPipeline, StagesRecordWhatTheyReceiveAndTuneAlone, "jit.pipeline") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(91);
  Graph enc = pipeline_encoder(s), head = pipeline_head(s);
  Pipeline plain;
  ASSERT_TRUE(plain.add_stage("encoder", enc));
  ASSERT_TRUE(plain.add_stage("head", head));
  std::shared_ptr<const Strategy> pin(pinned_strategy(c));

  // The encoder only inspects; the head tunes eagerly on what the encoder gave it.
  Pipeline p;
  ASSERT_TRUE(p.add_jit_stage("encoder", enc, pin, stage_options(c, JitMode::kInspect, 1)));
  ASSERT_TRUE(p.add_jit_stage("head", head, pin, stage_options(c, JitMode::kTuneEager, 3)));
  const int created = case_backends_created();
  const auto calls = pipeline_calls(s);
  for (const auto& x : calls) {
    auto y = p.run(x);
    ASSERT_TRUE(y) << y.error().to_string();
    auto e = plain.run(x);
    ASSERT_TRUE(e);
    EXPECT_TRUE(c.tolerance.assert_close(y->at("probs"), e->at("probs")));
  }
  p.wait();
  ASSERT_NE(p.jit("head"), nullptr);
  ASSERT_EQ(p.jit("head")->state(), JitState::kTuned)
      << (p.jit("head")->tuning_error() ? p.jit("head")->tuning_error()->to_string() : "");
  EXPECT_EQ(p.jit("encoder")->state(), JitState::kInspecting);
  EXPECT_EQ(p.jit("encoder")->tunes_started(), 0u);
  EXPECT_GT(case_backends_created(), created);
  const TunedModel* t = p.tuned("head");
  ASSERT_NE(t, nullptr);
  // The head was tuned on the encoder's outputs: features[batch,16], batch 1..4.
  ASSERT_EQ(t->graph().inputs().size(), 1u);
  EXPECT_EQ(t->spec().bounds.at("batch").min, 1);
  EXPECT_EQ(t->spec().bounds.at("batch").max, 4);
  EXPECT_EQ(p.placement()[1], (std::pair<std::string, std::string>{"head", c.key}));
  std::map<std::string, JitCall> info;
  auto y = p.run(calls[1], &info);
  ASSERT_TRUE(y);
  EXPECT_EQ(info.at("head").backend, c.key);
  EXPECT_EQ(info.at("head").generation, 1);
  EXPECT_EQ(info.at("encoder").backend, "reference");

  // Saved by stage name, loaded into a fresh pipeline: the head runs on the
  // saved choice without tuning again.
  ASSERT_TRUE(p.save(dir_)) << "save";
  EXPECT_TRUE(fs::exists(dir_ / "head.hone"));
  EXPECT_FALSE(fs::exists(dir_ / "encoder.hone")) << "an untuned stage has no package";
  Pipeline q;
  ASSERT_TRUE(q.add_jit_stage("encoder", enc, pin, stage_options(c, JitMode::kInspect, 1)));
  ASSERT_TRUE(q.add_jit_stage("head", head, pin, stage_options(c, JitMode::kTuneEager, 100)));
  auto loaded = q.load(dir_);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(*loaded, 1u);
  EXPECT_EQ(q.jit("head")->tunes_started(), 0u);
  info.clear();
  auto z = q.run(calls[2], &info);
  ASSERT_TRUE(z);
  EXPECT_EQ(info.at("head").backend, c.key);
  auto e = plain.run(calls[2]);
  ASSERT_TRUE(e);
  EXPECT_TRUE(c.tolerance.assert_close(z->at("probs"), e->at("probs")));
  // A stage of another graph refuses the package, naming the stage.
  Pipeline wrong;
  ASSERT_TRUE(wrong.add_stage("head", enc));
  auto refused = wrong.load(dir_);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().to_string().find("'head'"), std::string::npos)
      << refused.error().to_string();
}

HONE_MATRIX_TEST_P(JitPipeline, StagesBelowTheTimeShareAreLeftAlone, "jit.pipeline") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(92);
  Graph enc = pipeline_encoder(s), head = pipeline_head(s);
  std::shared_ptr<const Strategy> pin(pinned_strategy(c));
  // The head cannot take 99% of the time with the encoder before it (skipped);
  // it surely takes more than 1% (tuned).
  for (double threshold : {0.99, 0.01}) {
    Pipeline p({.min_time_share = threshold});
    ASSERT_TRUE(p.add_stage("encoder", enc));
    ASSERT_TRUE(p.add_jit_stage("head", head, pin, stage_options(c, JitMode::kTuneEager, 3)));
    const int created = case_backends_created();
    for (const auto& x : pipeline_calls(s)) ASSERT_TRUE(p.run(x));
    p.wait();
    const JitModel* h = p.jit("head");
    if (threshold > 0.5) {
      EXPECT_EQ(h->state(), JitState::kSkipped);
      ASSERT_TRUE(h->tuning_error());
      EXPECT_NE(h->tuning_error()->message().find("below the 99.0% threshold"), std::string::npos)
          << h->tuning_error()->message();
      EXPECT_EQ(case_backends_created(), created) << "a skipped stage built a candidate";
      EXPECT_EQ(p.inspect().children[1].state, "skipped");
    } else {
      EXPECT_EQ(h->state(), JitState::kTuned)
          << (h->tuning_error() ? h->tuning_error()->to_string() : "");
    }
  }
}

// The checks a reader of the page relies on: the tree, its figures, the states.
void check_report_json(const nlohmann::json& doc, const std::string& backend, uint64_t calls) {
  ASSERT_EQ(doc.at("format"), "hone-inspection");
  const auto& root = doc.at("root");
  EXPECT_EQ(root.at("kind"), "pipeline");
  EXPECT_EQ(root.at("calls").get<uint64_t>(), calls);
  ASSERT_EQ(root.at("children").size(), 2u);
  const auto& enc = root.at("children")[0];
  const auto& head = root.at("children")[1];
  EXPECT_EQ(enc.at("name"), "encoder");
  EXPECT_EQ(enc.at("id"), root.at("name").get<std::string>() + "/encoder");
  EXPECT_EQ(enc.at("state"), "inspecting");
  EXPECT_EQ(head.at("state"), "tuned") << head.at("reason");
  EXPECT_EQ(head.at("backend"), backend);
  double children = 0;
  for (const auto& ch : root.at("children")) {
    EXPECT_EQ(ch.at("calls").get<uint64_t>(), calls);
    children += ch.at("total_ms").get<double>();
    EXPECT_NEAR(ch.at("share").get<double>(),
                ch.at("total_ms").get<double>() / root.at("total_ms").get<double>(), 1e-9);
  }
  EXPECT_LE(children, root.at("total_ms").get<double>() + 1e-9);
  EXPECT_NEAR(root.at("self_ms").get<double>(), root.at("total_ms").get<double>() - children, 1e-6);
  // The head saw features[b,16] for b in 1..4: axis 0 varied, axis 1 did not.
  ASSERT_EQ(head.at("inputs").size(), 1u);
  EXPECT_EQ(head.at("inputs")[0].at("path"), "features");
  EXPECT_EQ(head.at("inputs")[0].at("dtype"), "f32");
  EXPECT_EQ(head.at("inputs")[0].at("varied_axes"), nlohmann::json::array({0}));
  EXPECT_EQ(head.at("outputs")[0].at("path"), "probs");
}

HONE_MATRIX_TEST_P(JitPipeline, InspectionReportOfATwoStagePipeline, "jit.report") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(93);
  Graph enc = pipeline_encoder(s), head = pipeline_head(s);
  std::shared_ptr<const Strategy> pin(pinned_strategy(c));
  Pipeline p;
  ASSERT_TRUE(p.add_jit_stage("encoder", enc, pin, stage_options(c, JitMode::kInspect, 1)));
  ASSERT_TRUE(p.add_jit_stage("head", head, pin, stage_options(c, JitMode::kTuneEager, 3)));
  const auto calls = pipeline_calls(s);
  for (const auto& x : calls) ASSERT_TRUE(p.run(x));
  p.wait();
  ASSERT_TRUE(p.save_report(dir_ / "run.html"));
  const std::string html = read_text(dir_ / "run.html");
  auto doc = nlohmann::json::parse(read_text(dir_ / "run.json"));
  check_report_json(doc, c.key, calls.size());
  // Self-contained: no external script, style or image.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_NE(html.find("id=\"filter\""), std::string::npos);
  EXPECT_NE(html.find("data-id=\"pipeline/head\""), std::string::npos);
  // The page's embedded JSON is the JSON file's.
  const auto a = html.find("id=\"inspection-data\">") + 21;
  auto embedded = nlohmann::json::parse(html.substr(a, html.find("</script>", a) - a));
  EXPECT_EQ(embedded, doc);
  EXPECT_FALSE(p.save_report(dir_ / "run.json")) << "a .json page path is refused";

  // The same through the CLI, over a pipeline description. The page is kept
  // for the browser test when HONE_INSPECT_PAGE_DIR says where.
  ASSERT_TRUE(onnx::save_model(enc, dir_ / "encoder.onnx"));
  ASSERT_TRUE(onnx::save_model(head, dir_ / "head.onnx"));
  const nlohmann::json desc{{"name", "two-stage"},
                            {"calls", 6},
                            {"dims", {{"batch", {1, 4, 2}}}},
                            {"stages",
                             {{{"name", "encoder"}, {"model", "encoder.onnx"}, {"mode", "inspect"}},
                              {{"name", "head"},
                               {"model", "head.onnx"},
                               {"mode", "eager"},
                               {"min_samples", 3},
                               {"backend", c.key}}}}};
  { std::ofstream(dir_ / "two_stage.json") << desc.dump(1); }
  const char* keep = std::getenv("HONE_INSPECT_PAGE_DIR");
  if (keep) fs::create_directories(keep);
  const fs::path page = keep ? fs::path(keep) / ("inspect_" + c.key + ".html") : dir_ / "cli.html";
  const std::string cmd = std::string(HONE_CLI) + " inspect-run --threads 1 --pipeline " +
                          (dir_ / "two_stage.json").string() + " -o " + page.string() + " > " +
                          (dir_ / "log.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << read_text(dir_ / "log.txt");
  fs::path json = page;
  json.replace_extension(".json");
  auto cli_doc = nlohmann::json::parse(read_text(json));
  EXPECT_EQ(cli_doc.at("root").at("name"), "two-stage");
  check_report_json(cli_doc, c.key, 6);
}

HONE_WITH_BACKENDS(JitPipeline);

}  // namespace
}  // namespace hone::functional
