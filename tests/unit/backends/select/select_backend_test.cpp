// The select backend as a whole: whichever backend each heavy node's timing
// picks, the build succeeds and computes what the reference does. The choices
// are forced here through kernel_choices, so no test depends on which kernel
// won a timing on this machine.
#include "backends/select/select_backend.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/backend_test_util.h"
#include "backends/common/choice_text.h"
#include "eval/interpreter.h"
#include "hone/graph_builder.h"
#include "hone/log_sink.h"
#include "hone/logging.h"
#include "hone/package.h"
#include "hone/registry.h"
#include "hone/strategy.h"

namespace hone::select {
namespace {

namespace fs = std::filesystem;

// x f32[n, 8] -> MatMul 'mm' -> Reshape to [n, 2, 4], the shape computed from
// x's dims (Shape, Concat), as exporters write a dynamic reshape. With 'mm'
// on another backend, onednn's blocks are cut between the shape computation
// and the Reshape (PaddleOCR v4's attention blocks fail so: issue 30).
Graph dynamic_reshape(std::mt19937& rng) {
  GraphBuilder b("dynamic_reshape");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n"), 8});
  ValueId w = b.constant("w", backend_test::uniform(rng, {8, 8}));
  ValueId lead = b.op("Shape", {x}, {{"end", int64_t{1}}}, "lead");
  ValueId rest = b.constant("rest", Tensor::from<int64_t>({2}, {2, 4}));
  ValueId shape = b.concat({lead, rest}, 0);
  ValueId y = b.op("MatMul", {x, w}, {}, "mm");
  b.output(b.op("Reshape", {y, shape}, {}, "reshape"), "y");
  return *std::move(b).build();
}

TEST(Select, AHeavyNodeOnAnotherBackendLeavesADynamicReshapeBuildable) {
  if (default_registry().find("select") == nullptr) GTEST_SKIP() << "no select backend";
  std::mt19937 rng(3);
  const Graph g = dynamic_reshape(rng);
  const std::vector<Tensor> x = {backend_test::uniform(rng, {3, 8})};
  auto want = eval::Interpreter().run_tensors(g, x);
  ASSERT_TRUE(want) << want.error().to_string();
  for (const std::string winner : {"onednn", "blas", "aot"}) {
    const auto* entry = default_registry().find(winner);
    if (entry == nullptr || !entry->unavailable().empty()) continue;
    SCOPED_TRACE(winner);
    auto be = default_registry().create("select");
    ASSERT_TRUE(be) << be.error().to_string();
    ASSERT_TRUE((*be)->configure("kernel_choices", "mm=" + winner + "(" + winner + ")"));
    auto built = (*be)->build(g);
    ASSERT_TRUE(built) << built.error().to_string();
    auto got = (*be)->infer(x);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(backend_test::close((*got)[0], (*want)[0]));
  }
}

// x[batch, 32, 8, 8] -> relu(conv3x3 'c0') -> conv3x3 'c1' + x -> relu: the
// 3x3 convs and the residual Add are choices onednn times per batch size.
Graph symbolic_batch_net(std::mt19937& rng) {
  GraphBuilder b("replay");
  const int64_t c = 32;
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), c, 8, 8});
  auto conv = [&](ValueId in, const std::string& name) {
    const float s = 1.0f / std::sqrt(static_cast<float>(c * 9));
    return b.op("Conv",
                {in, b.constant("", backend_test::uniform(rng, {c, c, 3, 3}, -s, s)),
                 b.constant("", backend_test::uniform(rng, {c}, -0.1f, 0.1f))},
                {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, name);
  };
  ValueId h = b.relu(conv(x, "c0"));
  b.output(b.relu(b.add(conv(h, "c1"), x)), "y");
  return *std::move(b).build();
}

std::string record_of(const Backend& be, const std::string& field) {
  for (const auto& [f, v] : be.choice_records())
    if (f == field) return v;
  return "(no " + field + ")";
}

/// The batch sizes (first dim of the first input) of `text`'s entries.
std::set<int64_t> batches_in(const std::string& text) {
  const ChoiceSyntax any{"test", "choice", "any", [](const std::string&) { return true; }};
  auto entries = parse_choice_text(text, any);
  EXPECT_TRUE(entries) << entries.error().to_string();
  std::set<int64_t> out;
  if (!entries) return out;
  for (const auto& [key, e] : *entries)
    if (e.shapes.size() > 1) out.insert(std::stoll(e.shapes.substr(1)));
  return out;
}

/// Debug lines of onednn's choices while alive: those it timed, those it replayed.
class ChoiceLog {
 public:
  ChoiceLog() : level_(log_level()) {
    set_log_level(LogLevel::kDebug);
    set_log_sink([this](LogLevel, std::string_view msg) {
      if (msg.find("onednn: ") == std::string_view::npos) return;
      std::lock_guard lock(mu_);
      timed_ += msg.find("(timed: ") != std::string_view::npos;
      replayed_ += msg.find("from timed_choices, not timed") != std::string_view::npos;
    });
  }
  ~ChoiceLog() {
    set_log_sink(nullptr);
    set_log_level(level_);
  }
  int timed() const {
    std::lock_guard lock(mu_);
    return timed_;
  }
  int replayed() const {
    std::lock_guard lock(mu_);
    return replayed_;
  }

 private:
  LogLevel level_;
  mutable std::mutex mu_;
  int timed_ = 0, replayed_ = 0;
};

// The choices select's onednn blocks time (the tune's batches, and one first
// run after it) are saved in select's timed_choices, and a loaded package
// replays them all untimed.
TEST(Select, ItsBlocksTimedChoicesAreSavedAndReplayedUntimed) {
  if (default_registry().find("select") == nullptr) GTEST_SKIP() << "no select backend";
  std::mt19937 rng(5);
  const Graph g = symbolic_batch_net(rng);
  auto sample = [&](int64_t batch) {
    SampleMap m;
    m.emplace("x", backend_test::uniform(rng, {batch, 32, 8, 8}));
    return Sample(std::move(m));
  };
  TuneOptions o;
  o.threads = 1;
  o.use_cache = false;
  o.batch_sizes = {1, 4};
  o.profile.min_runs = 3;
  o.profile.window = 3;
  o.profile.max_runs = 5;
  // Both convs on onednn, untimed: the test is about the blocks' record.
  o.configs["select"]["kernel_choices"] = "c0=onednn(onednn);c1=onednn(onednn)";
  auto tuned = tune(g, {sample(1), sample(4)}, OneBackend("select", false), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  std::string at_decision;
  for (const auto& [k, v] : tuned->decision().config_fields)
    if (k == "timed_choices") at_decision = v;
  EXPECT_EQ(batches_in(at_decision), (std::set<int64_t>{1, 4})) << at_decision;

  const Sample third = sample(3);  // first run after the tune: timed now
  ASSERT_TRUE(tuned->infer(third));
  const std::string live = record_of(tuned->backend(), "timed_choices");
  ASSERT_EQ(batches_in(live), (std::set<int64_t>{1, 3, 4})) << live;

  const fs::path dir = fs::temp_directory_path() / ("hone-select-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "select.hone";
  ASSERT_TRUE(save(*tuned, file));
  auto manifest = package_manifest(file);
  ASSERT_TRUE(manifest) << manifest.error().to_string();
  EXPECT_EQ(nlohmann::json::parse(*manifest)["decision"]["config_fields"]["timed_choices"], live);

  ChoiceLog log;
  auto loaded = load(file);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  for (int64_t batch : {1, 3, 4}) {
    const Sample s = batch == 3 ? third : sample(batch);
    auto a = tuned->infer(s);
    auto b = loaded->infer(s);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(a->tensor().bitwise_equal(b->tensor())) << "batch " << batch;
  }
  EXPECT_EQ(log.timed(), 0) << "the loaded package timed a choice it should replay";
  EXPECT_GT(log.replayed(), 0);
  EXPECT_EQ(record_of(loaded->backend(), "timed_choices"), live);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hone::select
