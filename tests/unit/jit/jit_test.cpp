// JitModel's bookkeeping on the reference alone: bounded and spilled
// samples, cancelling a tune on destruction, adopt(), the tuner's cancel
// hook, and the inspection data (stats, JSON, page).
#include "hone/jit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "hone/graph_builder.h"
#include "hone/inspection.h"
#include "jit/call_stats.h"
#include "jit/sample_spill.h"
#include "tune/tune_test_util.h"

namespace hone {
namespace {

namespace fs = std::filesystem;

Graph small_graph(float bias = 0.5f) {
  GraphBuilder b("small");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 3});
  ValueId w = b.constant("w", Tensor::from<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  ValueId c = b.constant("c", Tensor::from<float>({2}, {bias, -bias}));
  b.output(b.relu(b.gemm(x, w, c)), "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

Sample batch_of(int64_t n, float v = 1.0f) {
  std::vector<float> data(static_cast<size_t>(n * 3), v);
  return SampleMap{{"x", Tensor::from<float>({n, 3}, data)}};
}

JitOptions reference_only(JitMode mode, size_t min_samples) {
  JitOptions o;
  o.mode = mode;
  o.min_samples = min_samples;
  o.tune.use_cache = false;
  o.tune.threads = 1;
  o.tune.profile.warmup = 1;
  o.tune.profile.min_runs = 3;
  o.tune.profile.window = 3;
  o.tune.profile.max_runs = 5;
  return o;
}

std::shared_ptr<const Strategy> on_reference() {
  return std::make_shared<OneBackend>("reference", /*fallback_when_slower=*/false);
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("hone-jit-unit-" + std::to_string(getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(JitSamples, MemoryIsBoundedAndKeepsEveryShapeSeen) {
  JitOptions o = reference_only(JitMode::kTuneDeferred, 1);
  o.max_samples_stored = 3;
  o.background = false;
  JitModel jit(small_graph(), on_reference(), o);
  for (int64_t b : {2, 2, 2, 2, 7, 2, 1}) ASSERT_TRUE(jit.infer(batch_of(b)));
  EXPECT_EQ(jit.recorded(), 7u);
  EXPECT_EQ(jit.samples_in_memory(), 3u);
  ASSERT_TRUE(jit.tune_now());
  ASSERT_NE(jit.tuned(), nullptr);
  // 7 and 1 replaced duplicates of 2: the bounds cover every batch seen.
  EXPECT_EQ(jit.tuned()->spec().bounds.at("batch").min, 1);
  EXPECT_EQ(jit.tuned()->spec().bounds.at("batch").max, 7);
  EXPECT_EQ(jit.samples_in_memory(), 0u) << "samples are freed once tuned";
}

TEST(JitSamples, RecordedCallsOwnWhatTheyWereGiven) {
  // A caller's memory (Tensor::borrow, as Python hands NumPy arrays over) may
  // be freed or reused after the call: the recorded call keeps its own copy.
  // Here the borrowed indices turn out of range after their calls; a tune on
  // the shallow copies would fail on them.
  GraphBuilder b("lookup");
  ValueId idx = b.input("idx", DType::kI64, Shape{Dim::symbol("batch")});
  ValueId table = b.constant("table", Tensor::from<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}));
  b.output(b.op("Gather", {table, idx}, {{"axis", int64_t{0}}}), "y");
  Graph g = *std::move(b).build();
  JitOptions o = reference_only(JitMode::kTuneDeferred, 1);
  o.background = false;
  JitModel jit(std::move(g), on_reference(), o);
  std::vector<int64_t> one = {3}, three = {0, 1, 2};
  ASSERT_TRUE(jit.infer(SampleMap{{"idx", Tensor::borrow(DType::kI64, {1}, one.data())}}));
  ASSERT_TRUE(jit.infer(SampleMap{{"idx", Tensor::borrow(DType::kI64, {3}, three.data())}}));
  one.assign(1, 99);
  three.assign(3, 99);
  auto tuned = jit.tune_now();
  EXPECT_TRUE(tuned) << tuned.error().to_string();
  EXPECT_EQ(jit.state(), JitState::kTuned);
}

TEST(JitSamples, SpilledSamplesAreTunedOnAndRemoved) {
  TempDir tmp;
  const fs::path spill = tmp.path / "spill";
  {
    JitOptions o = reference_only(JitMode::kTuneDeferred, 1);
    o.max_samples_stored = 2;
    o.spill_dir = spill;
    JitModel jit(small_graph(), on_reference(), o);
    for (int64_t b : {2, 3, 9, 4}) ASSERT_TRUE(jit.infer(batch_of(b)));
    EXPECT_EQ(jit.samples_in_memory(), 2u);
    EXPECT_EQ(jit.samples_spilled(), 2u);
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(spill)) {
      ++files;
      EXPECT_EQ(e.path().filename().string().rfind("spill_", 0), 0u) << e.path();
    }
    EXPECT_EQ(files, 4u) << "one .json and one .npy per spilled sample";
    ASSERT_TRUE(jit.tune_now());
    EXPECT_EQ(jit.tuned()->spec().bounds.at("batch").max, 9) << "the spilled batch 9 was not used";
  }
  EXPECT_FALSE(fs::exists(spill)) << "the spill folder outlived the model";
  {
    JitOptions o = reference_only(JitMode::kTuneDeferred, 1);
    o.max_samples_stored = 1;
    o.spill_dir = spill;
    o.keep_spilled = true;
    JitModel jit(small_graph(), on_reference(), o);
    for (int64_t b : {2, 3}) ASSERT_TRUE(jit.infer(batch_of(b)));
  }
  EXPECT_TRUE(fs::exists(spill)) << "keep_spilled";
  // A spilled sample reads back as it was written.
  jit_internal::SampleSpill store(tmp.path / "again", "t", false);
  Sample tree = SampleMap{{"a", Tensor::from<float>({2}, {1.5f, -2.0f})}, {"s", 0.25}};
  ASSERT_TRUE(store.write(tree));
  auto back = store.read_all();
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_TRUE((*back)[0].find("a")->tensor().bitwise_equal(tree.find("a")->tensor()));
  EXPECT_EQ((*back)[0].find("s")->scalar(), 0.25);
}

TEST(JitTune, DestructionCancelsARunningTuneBetweenCandidates) {
  std::mutex mu;
  std::vector<std::string> seen;  // candidates the tuner reached
  {
    JitOptions o = reference_only(JitMode::kTuneEager, 1);
    // Each step is slow, so the destructor runs while the reference (the
    // baseline, always first) is still being measured.
    o.tune.progress = [&](const TuneEvent& e) {
      {
        std::lock_guard lock(mu);
        seen.push_back(e.candidate);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    };
    JitModel jit(small_graph(),
                 std::make_shared<MaxThroughput>(std::vector<std::string>{"onednn", "blas"}), o);
    ASSERT_TRUE(jit.infer(batch_of(2)));
    EXPECT_EQ(jit.tunes_started(), 1u);
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::lock_guard lock(mu);
      if (!seen.empty()) break;
    }
  }  // ~JitModel: cancel, then join
  std::lock_guard lock(mu);
  for (const auto& c : seen)
    EXPECT_EQ(c, "reference") << "the tuner went on to " << c << " after the cancel";
}

TEST(JitTune, TheTunersCancelHookStopsTheTune) {
  TuneOptions o = reference_only(JitMode::kTuneEager, 1).tune;
  o.cancelled = [] { return true; };
  auto t = tune(small_graph(), {batch_of(1), batch_of(2)}, *on_reference(), o);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("cancelled"), std::string::npos) << t.error().to_string();
}

TEST(JitTune, ATuneLimitedToABackendThatCannotBuildKeepsTheReference) {
  using namespace testing_tune;
  const BackendRegistry reg = sleep_registry({{"reference", {}}, {"broken", {.fail_build = true}}});
  JitOptions o = reference_only(JitMode::kTuneEager, 2);
  o.tune = quick_options(reg);
  JitModel jit(tiny_mlp(), std::make_shared<OneBackend>("broken", false), o);
  const int builds = sleep_builds();
  ASSERT_TRUE(jit.infer(sample_of(1)));
  ASSERT_TRUE(jit.infer(sample_of(3)));
  jit.wait();
  ASSERT_EQ(jit.state(), JitState::kFailed);
  EXPECT_GT(sleep_builds(), builds) << "the broken backend was never tried";
  EXPECT_NE(jit.tuning_error()->to_string().find("cannot build anything"), std::string::npos)
      << jit.tuning_error()->to_string();
  // Later calls keep running, on the reference, with its answers.
  auto ref = default_registry().create("reference");
  ASSERT_TRUE(ref && (*ref)->build(tiny_mlp()));
  for (int64_t b : {1, 2, 5}) {
    JitCall info;
    auto y = jit.infer(sample_of(b), &info);
    ASSERT_TRUE(y) << y.error().to_string();
    EXPECT_EQ(info.backend, "reference");
    auto e = (*ref)->infer({sample_of(b).find("x")->tensor()});
    ASSERT_TRUE(e);
    EXPECT_TRUE(y->tensor().bitwise_equal((*e)[0])) << "batch " << b;
  }
}

TEST(JitTune, BeforeTuneCanLeaveTheModelAlone) {
  JitOptions o = reference_only(JitMode::kTuneEager, 2);
  o.background = false;
  o.before_tune = [] { return std::string("not worth it"); };
  JitModel jit(small_graph(), on_reference(), o);
  for (int64_t b : {1, 2, 3}) ASSERT_TRUE(jit.infer(batch_of(b)));
  EXPECT_EQ(jit.state(), JitState::kSkipped);
  ASSERT_TRUE(jit.tuning_error());
  EXPECT_EQ(jit.tuning_error()->message(), "not worth it");
  EXPECT_EQ(jit.inspect().state, "skipped");
  EXPECT_EQ(jit.inspect().reason.find("not worth it") != std::string::npos, true);
}

TEST(JitTune, AdoptRefusesAnotherGraph) {
  JitOptions o = reference_only(JitMode::kTuneDeferred, 1);
  JitModel other(small_graph(2.0f), on_reference(), o);
  ASSERT_TRUE(other.infer(batch_of(1)));
  ASSERT_TRUE(other.infer(batch_of(3)));
  ASSERT_TRUE(other.tune_now());
  auto t = tune(small_graph(2.0f), {batch_of(1), batch_of(3)}, *on_reference(), o.tune);
  ASSERT_TRUE(t);
  JitModel jit(small_graph(), on_reference(), o);
  auto refused = jit.adopt(std::move(*t));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("another graph"), std::string::npos);
  JitModel inspect_only(small_graph(), on_reference(), reference_only(JitMode::kInspect, 1));
  auto t2 = tune(small_graph(), {batch_of(1), batch_of(3)}, *on_reference(), o.tune);
  ASSERT_TRUE(t2);
  EXPECT_FALSE(inspect_only.adopt(std::move(*t2)));
}

TEST(JitInspection, StatsJsonAndPage) {
  jit_internal::CallStats stats;
  const Tensor a = Tensor::zeros(DType::kF32, {2, 3}), b = Tensor::zeros(DType::kF32, {5, 3});
  const Tensor y = Tensor::zeros(DType::kI64, {2});
  stats.record_named(1.0, {{"x", &a}}, {{"y", &y}});
  stats.record_named(3.0, {{"x", &b}}, {{"y", &y}});
  InspectionNode root;
  root.name = "p<&>";
  root.kind = "pipeline";
  root.total_ms = 5;
  root.calls = 2;
  InspectionNode child;
  child.name = "stage";
  child.kind = "stage";
  child.state = "failed";
  child.reason = "why </script> here";
  stats.fill(child);
  root.children.push_back(child);
  finish_inspection(root);
  EXPECT_EQ(root.children[0].calls, 2u);
  EXPECT_DOUBLE_EQ(root.children[0].total_ms, 4.0);
  EXPECT_DOUBLE_EQ(root.children[0].avg_ms, 2.0);
  EXPECT_DOUBLE_EQ(root.children[0].share, 0.8);
  EXPECT_DOUBLE_EQ(root.self_ms, 1.0);
  ASSERT_EQ(root.children[0].inputs.size(), 1u);
  EXPECT_EQ(root.children[0].inputs[0].shapes.size(), 2u);
  EXPECT_EQ(root.children[0].inputs[0].varied_axes, std::vector<int>{0});
  EXPECT_TRUE(root.children[0].outputs[0].varied_axes.empty());
  EXPECT_EQ(root.children[0].outputs[0].dtype, "i64");
  auto j = nlohmann::json::parse(inspection_json(root));
  EXPECT_EQ(j["root"]["children"][0]["id"], "p<&>/stage");
  const std::string html = inspection_html(root);
  EXPECT_EQ(html.find("</script> here"), std::string::npos) << "the reason ended the data block";
  EXPECT_NE(html.find("p&lt;&amp;&gt;"), std::string::npos);
  TempDir tmp;
  fs::create_directories(tmp.path);
  ASSERT_TRUE(save_inspection_report(root, tmp.path / "r.html"));
  EXPECT_TRUE(fs::exists(tmp.path / "r.json"));
  EXPECT_FALSE(save_inspection_report(root, tmp.path / "r.json"));
  auto missing = save_inspection_report(root, tmp.path / "no" / "such" / "r.html");
  EXPECT_FALSE(missing);
}

TEST(JitModes, ParseAndNames) {
  EXPECT_EQ(*parse_jit_mode("deferred"), JitMode::kTuneDeferred);
  auto bad = parse_jit_mode("lazy");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("eager, deferred or inspect"), std::string::npos);
  JitModel jit(small_graph(), on_reference(), reference_only(JitMode::kTuneEager, 5));
  EXPECT_FALSE(jit.tune_deferred()) << "tune_deferred() in eager mode";
  EXPECT_FALSE(jit.tune_now()) << "tune_now() before any call";
}

}  // namespace
}  // namespace hone
