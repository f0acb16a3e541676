// A package replays every choice onednn timed, also those timed after the
// tune: a block with a symbolic batch plans each new batch at its first run,
// and hone::save takes the backend's record (timed_choices) as it stands at
// save, not the decision's copy from the end of the tune. So a model tuned
// at batches 1 and 4, then run at 3, saves the entries of all three, and the
// loaded package times nothing at any of them.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "backends/common/choice_text.h"
#include "hone/package.h"
#include "hone/strategy.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

namespace fs = std::filesystem;
using testing_util::uniform;

/// x[batch, 32, 8, 8] -> relu(conv3x3) -> conv3x3 + x -> relu: 3x3
/// stride-1 convs over channels in 16s (Winograd and layout decisions) and a
/// residual Add (a fusion decision), all in one block.
Graph symbolic_batch_net(std::mt19937& rng) {
  GraphBuilder b("replay");
  const int64_t c = 32;
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), c, 8, 8});
  auto conv = [&](ValueId in, const std::string& name) {
    const float s = 1.0f / std::sqrt(static_cast<float>(c * 9));
    return b.op("Conv",
                {in, b.constant("", uniform(rng, {c, c, 3, 3}, -s, s)),
                 b.constant("", uniform(rng, {c}, -0.1f, 0.1f))},
                {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, name);
  };
  ValueId h = b.relu(conv(x, "c0"));
  b.output(b.relu(b.add(conv(h, "c1"), x)), "y");
  return *std::move(b).build();
}

/// The batch sizes (first dim of the first input shape) `text`'s entries were timed at.
std::set<int64_t> batches_in(const std::string& text) {
  auto entries = TimedChoices::parse(text);
  EXPECT_TRUE(entries) << entries.error().to_string();
  std::set<int64_t> out;
  if (!entries) return out;
  for (const auto& [key, e] : *entries)
    if (e.shapes.size() > 1) out.insert(std::stoll(e.shapes.substr(1)));
  return out;
}

TEST(OnednnPackageReplay, ChoicesTimedAfterTheTuneAreSavedAndReplayedUntimed) {
  std::mt19937 rng(5);
  const Graph g = symbolic_batch_net(rng);
  auto sample = [&](int64_t batch) {
    SampleMap m;
    m.emplace("x", uniform(rng, {batch, 32, 8, 8}));
    return Sample(std::move(m));
  };
  TuneOptions o;
  o.threads = 1;
  o.use_cache = false;
  o.batch_sizes = {1, 4};
  o.profile.min_runs = 3;
  o.profile.window = 3;
  o.profile.max_runs = 5;
  auto tuned = tune(g, {sample(1), sample(4)}, OneBackend("onednn", false), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  ASSERT_EQ(tuned->decision().backend, "onednn");
  std::string at_decision;
  for (const auto& [k, v] : tuned->decision().config_fields)
    if (k == "timed_choices") at_decision = v;
  ASSERT_EQ(batches_in(at_decision), (std::set<int64_t>{1, 4})) << at_decision;

  // Batch 3 is first run now, after the tune: its choices are timed here.
  const Sample third = sample(3);
  auto want3 = tuned->infer(third);
  ASSERT_TRUE(want3) << want3.error().to_string();
  const auto& tuned_be = dynamic_cast<const OnednnBackend&>(tuned->backend());
  const std::string live = tuned_be.config().get<std::string>("timed_choices", "");
  ASSERT_EQ(batches_in(live), (std::set<int64_t>{1, 3, 4})) << live;

  const fs::path dir = fs::temp_directory_path() / ("hone-replay-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "replay.hone";
  ASSERT_TRUE(save(*tuned, file));
  auto manifest = package_manifest(file);
  ASSERT_TRUE(manifest) << manifest.error().to_string();
  const auto m = nlohmann::json::parse(*manifest);
  EXPECT_EQ(m["decision"]["config_fields"]["timed_choices"].get<std::string>(), live);
  // The report still shows the decision as the tune made it.
  auto loaded = load(file);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->report().json(), tuned->report().json());

  for (int64_t batch : {1, 3, 4}) {
    const Sample s = batch == 3 ? third : sample(batch);
    auto a = tuned->infer(s);
    auto b = loaded->infer(s);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->tensor().bitwise_equal(b->tensor())) << "batch " << batch;
  }
  const ChoiceCounts counts = dynamic_cast<const OnednnBackend&>(loaded->backend()).choice_counts();
  EXPECT_EQ(counts.timed, 0u) << "the load timed a choice the package should hold";
  EXPECT_GT(counts.replayed, 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hone::onednn
