// Tuning on every backend: tune with a pinned strategy, prove the backend's
// own kernels ran, save, load into a fresh object and a fresh process, and
// each strategy (dry run and batch-size search included) on each backend.
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>
#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"

#include "hone/npy.h"
#include "hone/package.h"

namespace hone::functional {
namespace {

namespace fs = std::filesystem;

/// A file's text, for failure messages ("" when it cannot be read).
std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Tuning : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& ch : name)
      if (ch == '/') ch = '_';  // parameterized names carry a '/'
    dir_ = fs::temp_directory_path() / ("hone-functional-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

std::vector<Sample> conv_samples(const Graph& g) {
  std::vector<Sample> out;
  Seeded s(77);
  for (int64_t b : {1, 4}) out.push_back(sample_from(g, s.inputs(g, {{"batch", b}})));
  return out;
}

HONE_MATRIX_TEST_P(Tuning, TuneSaveLoadAndRunInAFreshProcess, "lifecycle.tune",
                   "lifecycle.save-load", "lifecycle.fresh-process", "precision.f32") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(41);
  Graph g = conv_net(s);
  const auto samples = conv_samples(g);
  auto tuned = tune(g, samples, *pinned_strategy(c), quick_tune_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  EXPECT_TRUE(selected_backend(*tuned, c.key, samples[1]));
  EXPECT_TRUE(assert_matches_reference(*tuned, g, c.tolerance, {1, 2, 3, 4}, {1, 2}));

  const fs::path file = dir_ / "conv.hone";
  auto saved = save(*tuned, file);
  ASSERT_TRUE(saved) << saved.error().to_string();
  LoadOptions lo;
  lo.registry = &case_registry();
  auto loaded = load(file, lo);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->backend().name(), c.key);
  Seeded probe(5);
  const auto x = probe.inputs(g, {{"batch", 3}});
  auto a = tuned->infer_flat(x);
  auto b = loaded->infer_flat(x);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE((*b)[0].bitwise_equal((*a)[0]))
      << "a loaded package must give the saved model's exact outputs";
  EXPECT_TRUE(assert_matches_reference(*loaded, g, c.tolerance, {1, 4}, {3}));

  // A fresh process: the hone CLI loads the package and runs it, on a batch
  // the tune ran (4) and on one it did not (3).
  Seeded probe4(6);
  const auto x4 = probe4.inputs(g, {{"batch", 4}});
  auto a4 = tuned->infer_flat(x4);
  ASSERT_TRUE(a4) << a4.error().to_string();
  auto in_fresh_process = [&](const Tensor& in, const std::string& tag) -> Result<Tensor> {
    const fs::path d = dir_ / tag;
    fs::create_directories(d / "in");
    if (!save_npy(in, d / "in" / "input_0.npy"))
      return fail(ErrorCode::kInternal, "cannot write " + (d / "in").string());
    const std::string cmd = std::string(HONE_CLI) + " infer " + file.string() + " --inputs " +
                            (d / "in").string() + " --outputs " + (d / "out").string() + " > " +
                            (d / "log.txt").string() + " 2>&1";
    if (std::system(cmd.c_str()) != 0)
      return fail(ErrorCode::kInternal, cmd + "\n" + read_text(d / "log.txt"));
    return load_npy(d / "out" / "output_0.npy");
  };
  auto fresh = in_fresh_process(x[0], "b3");
  ASSERT_TRUE(fresh) << fresh.error().to_string();
  auto fresh4 = in_fresh_process(x4[0], "b4");
  ASSERT_TRUE(fresh4) << fresh4.error().to_string();
  // The fresh process uses the real registry, so a test-only broken backend
  // differs there on purpose.
  if (std::getenv("HONE_BREAK_BACKEND") == nullptr) {
    // A shape the tune planned replays the package's plan (a backend that
    // times kernels per shape replays its recorded choices): the exact outputs.
    EXPECT_TRUE(fresh4->bitwise_equal((*a4)[0]))
        << "the fresh process computed other values on a batch the tune ran";
    // A shape the tune never planned: a backend that picks kernels by timing
    // them per shape (cuda) may pick another, equally correct one in another
    // process; every other backend computes the exact outputs.
    if (c.has("gpu"))
      EXPECT_TRUE(c.tolerance.assert_close(*fresh, (*a)[0]));
    else
      EXPECT_TRUE(fresh->bitwise_equal((*a)[0])) << "the fresh process computed other values";
  }
}

HONE_MATRIX_TEST_P(Tuning, FirstWinsAndOneBackend, "strategies.first-wins",
                   "strategies.one-backend") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(42);
  Graph g = mlp(s);
  const std::vector<Sample> samples = {sample_from(g, s.inputs(g, {{"batch", 1}})),
                                       sample_from(g, s.inputs(g, {{"batch", 8}}))};
  TuneOptions o = quick_tune_options();
  o.baseline_gate_percent = -100;  // any measured speed passes: the choice itself is under test
  auto first = tune(g, samples, FirstWins({c.key}), o);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_TRUE(selected_backend(*first, c.key, samples[0]));
  auto one = tune(g, samples, OneBackend(c.key, false), o);
  ASSERT_TRUE(one) << one.error().to_string();
  EXPECT_TRUE(selected_backend(*one, c.key, samples[0]));
  EXPECT_TRUE(assert_matches_reference(*one, g, c.tolerance, {1, 5, 8}, {4}));
}

HONE_MATRIX_TEST_P(Tuning, MaxThroughputMinLatencyAndBudget, "strategies.max-throughput",
                   "strategies.min-latency", "strategies.latency-budget") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(43);
  Graph g = mlp(s);
  const std::vector<Sample> samples = {sample_from(g, s.inputs(g, {{"batch", 1}})),
                                       sample_from(g, s.inputs(g, {{"batch", 8}}))};
  TuneOptions o = quick_tune_options();
  o.baseline_gate_percent = -100;
  std::vector<std::unique_ptr<Strategy>> strategies;
  strategies.push_back(std::make_unique<MaxThroughput>(std::vector<std::string>{c.key}));
  strategies.push_back(std::make_unique<MinLatency>(std::vector<std::string>{c.key}));
  strategies.push_back(std::make_unique<LatencyBudget>(1e6, std::vector<std::string>{c.key}));
  for (const auto& st : strategies) {
    auto m = tune(g, samples, *st, o);
    ASSERT_TRUE(m) << st->describe() << ": " << m.error().to_string();
    EXPECT_TRUE(selected_backend(*m, c.key, samples[1])) << st->describe();
    EXPECT_FALSE(m->decision().figures.empty()) << st->describe();
  }
  // A budget nothing can meet is an error that says so.
  auto none = tune(g, samples, LatencyBudget(1e-6, {c.key}), o);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("fits"), std::string::npos) << none.error().message();
}

HONE_MATRIX_TEST_P(Tuning, DryRunAndBatchSizeSearch, "strategies.dry-run",
                   "strategies.batch-size-search") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(44);
  Graph g = mlp(s);
  const std::vector<Sample> samples = {sample_from(g, s.inputs(g, {{"batch", 1}})),
                                       sample_from(g, s.inputs(g, {{"batch", 2}}))};
  TuneOptions o = quick_tune_options();
  const int created = case_backends_created();
  auto lines = dry_run(g, samples, MaxThroughput({c.key}, true), o);
  ASSERT_TRUE(lines) << lines.error().to_string();
  EXPECT_EQ(case_backends_created(), created) << "a dry run created backends";
  std::string text;
  for (const auto& l : *lines) text += l + "\n";
  EXPECT_NE(text.find("candidate " + c.key), std::string::npos) << text;

  o.baseline_gate_percent = -100;
  o.batch_search.max_batch = 32;
  auto m = tune(g, samples, MaxThroughput({c.key}, true), o);
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_FALSE(m->report().batch_searches.empty());
  const BatchSearchResult& r = m->report().batch_searches.front();
  EXPECT_GE(r.points.size(), 2u) << r.stopped_because;
  EXPECT_GT(r.best_batch, 0);
  EXPECT_FALSE(r.stopped_because.empty());
  EXPECT_TRUE(selected_backend(*m, c.key, samples[0]));
}

HONE_MATRIX_TEST_P(Tuning, KernelPlanIsSavedInThePackage, "kernels.kernel-plan-saved") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(45);
  Graph g = conv_net(s);
  auto tuned = tune(g, conv_samples(g), *pinned_strategy(c), quick_tune_options());
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  if (tuned->backend().describe_kernels().empty())
    HONE_SKIP("backend '" + c.key + "' makes no kernel choices (it has no kernel plan to save)");
  ASSERT_FALSE(tuned->decision().kernel_plan.empty());
  const fs::path file = dir_ / "plan.hone";
  ASSERT_TRUE(save(*tuned, file));
  auto manifest = package_manifest(file);
  ASSERT_TRUE(manifest) << manifest.error().to_string();
  auto j = nlohmann::json::parse(*manifest);
  EXPECT_EQ(j["decision"]["kernel_plan"].get<std::vector<std::string>>(),
            tuned->decision().kernel_plan);
  LoadOptions lo;
  lo.registry = &case_registry();
  auto loaded = load(file, lo);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->decision().kernel_plan, tuned->decision().kernel_plan);
}

HONE_WITH_BACKENDS(Tuning);

}  // namespace
}  // namespace hone::functional
