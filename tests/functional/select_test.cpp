// Per-op kernel selection (the select backend): each heavy node of a model is
// timed on every CPU backend that accepts it, the winner is recorded in the
// config (kernel_choices) and a build with those choices replays them. A
// backend's cell passes when its kernels took part in the selection of the
// model's heavy nodes, a placement that runs them there gives the right
// answer, and the recorded choice replays; the select column's cell when the
// selection happened and its result is right. The cuda column's cell is the
// cuda backend's own selection among its kernels (cuDNN or im2col + cuBLAS,
// bf16 or TF32 products, cuBLASLt epilogues): timed during a tune, recorded in
// kernel_choices, saved in a package, and replayed untimed when it is loaded.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"
#include "hone/logging.h"
#include "hone/package.h"

namespace hone::functional {
namespace {

namespace fs = std::filesystem;

class KernelSelection : public BackendTest {};

struct Entry {
  std::string node, winner;
  std::set<std::string> accepted;
};

std::vector<Entry> parse(const std::string& text) {
  std::vector<Entry> out;
  if (text == "-") return out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    Entry e;
    const size_t open = item.rfind('('), eq = item.rfind('=', open);
    e.node = item.substr(0, eq);
    e.winner = item.substr(eq + 1, open - eq - 1);
    std::stringstream acc(item.substr(open + 1, item.size() - open - 2));
    std::string a;
    while (std::getline(acc, a, '+')) e.accepted.insert(a);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::unique_ptr<Backend>> select_with(const std::string& choices, const Graph& g) {
  HONE_TRY(auto be, default_registry().create("select"));
  if (!choices.empty()) HONE_CHECK_OK(be->configure("kernel_choices", choices));
  HONE_CHECK_OK(be->build(g));
  return be;
}

/// Occurrences of `needle` in `text`.
size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// The cuda column: the backend times its candidate kernels per unit and
/// shape while a tune runs, the decision's config holds them, and a package
/// loaded in a fresh backend replays them (its debug log shows no timing)
/// with the same kernels and the same bits.
void cuda_choices_survive_a_package(const BackendCase& c) {
  Seeded s = seeded(47);
  Graph g = conv_net(s);  // Conv x2, Gemm: under bf16 each is a timed selection
  std::vector<Sample> samples;
  std::vector<std::vector<Tensor>> xs;
  for (int64_t b : {1, 4}) {
    xs.push_back(s.inputs(g, {{"batch", b}}));
    samples.push_back(sample_from(g, xs.back()));
  }
  TuneOptions o = quick_tune_options();
  o.configs[c.key] = {{"precision", "bf16"}, {"gemm_epilogue", "true"}};
  auto tuned = tune(g, samples, *pinned_strategy(c), o);
  ASSERT_TRUE(tuned) << tuned.error().to_string();
  ASSERT_TRUE(selected_backend(*tuned, c.key, samples[1]));
  std::string choices;
  for (const auto& [field, value] : tuned->decision().config_fields)
    if (field == "kernel_choices") choices = value;
  // LABEL|SHAPES|MODE=KERNEL entries: the Gemm's at each batch at least.
  const size_t entries = choices.empty() || choices == "-" ? 0 : count(choices, ";") + 1;
  ASSERT_GE(entries, 2u) << "kernel_choices '" << choices << "'";
  EXPECT_EQ(count(choices, "|bf16="), entries) << choices;
  EXPECT_EQ(tuned->backend().config().get<std::string>("kernel_choices", ""), choices);
  std::vector<std::vector<Tensor>> want;
  for (const auto& x : xs) {
    auto y = tuned->infer_flat(x);
    ASSERT_TRUE(y) << y.error().to_string();
    want.push_back(std::move(*y));
  }

  const fs::path dir =
      fs::temp_directory_path() / ("hone-functional-choices-" + std::to_string(getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};
  auto saved = save(*tuned, dir / "choices.hone");
  ASSERT_TRUE(saved) << saved.error().to_string();
  LoadOptions lo;
  lo.registry = &case_registry();
  set_log_level(LogLevel::kDebug);
  testing::internal::CaptureStderr();
  auto loaded = load(dir / "choices.hone", lo);
  std::vector<std::vector<Tensor>> got;
  for (const auto& x : xs) {
    if (!loaded) break;
    auto y = loaded->infer_flat(x);
    if (y) got.push_back(std::move(*y));
  }
  const std::string log = testing::internal::GetCapturedStderr();
  set_log_level(LogLevel::kWarn);
  set_log_level_from_env();
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_EQ(got.size(), xs.size()) << log;
  EXPECT_EQ(loaded->backend().config().get<std::string>("kernel_choices", ""), choices);
  // Replayed: each selection says so, and nothing was timed or searched.
  EXPECT_GE(count(log, "from kernel_choices, not "), 2u) << log;
  for (const char* timing : {"; chose ", "cuDNN found ", "timed earlier in this process",
                             "not among this machine's candidates", "searching instead"})
    EXPECT_EQ(log.find(timing), std::string::npos) << timing << "\n" << log;
  // The same kernels: every unit line the loaded backend planned, the tuned
  // one planned too, and both show the same recorded choices.
  const std::vector<std::string> before = tuned->backend().describe_kernels();
  const std::set<std::string> tuned_lines(before.begin(), before.end());
  for (const std::string& line : loaded->backend().describe_kernels())
    EXPECT_TRUE(tuned_lines.contains(line)) << line;
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t k = 0; k < want[i].size(); ++k)
      EXPECT_TRUE(got[i][k].bitwise_equal(want[i][k])) << "batch input " << i << ", output " << k;
}

HONE_MATRIX_TEST_P(KernelSelection, HeavyNodesAreTimedAndTheWinnerRecorded,
                   "kernels.per-op-selection") {
  const BackendCase& c = GetParam();
  if (c.key == kReferenceBackend)
    HONE_SKIP("the reference has one kernel per op: there is nothing to select among");
  if (c.has("gpu")) {
    cuda_choices_survive_a_package(c);
    return;
  }
  if (default_registry().find("select") == nullptr)
    HONE_SKIP("this build has no select backend (it needs onednn)");
  Seeded s = seeded(47);
  Graph g = conv_net(s);  // Conv x2, Gemm
  const std::vector<Tensor> x = s.inputs(g, {{"batch", 2}});
  auto ref = default_registry().create(kReferenceBackend);
  ASSERT_TRUE(ref && (*ref)->build(g));
  auto want = (*ref)->infer(x);
  ASSERT_TRUE(want) << want.error().to_string();

  // Timed at build, recorded in the config.
  auto timed = select_with("", g);
  ASSERT_TRUE(timed) << timed.error().to_string();
  const std::string choices = (*timed)->config().get<std::string>("kernel_choices", "");
  const std::vector<Entry> entries = parse(choices);
  ASSERT_EQ(entries.size(), 3u) << "kernel_choices '" << choices << "'";
  auto got = (*timed)->infer(x);
  ASSERT_TRUE(got) << got.error().to_string();
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(c.tolerance.assert_close((*got)[i], (*want)[i])) << "output " << i;

  // The recorded choice replays: same plan, same answer, nothing timed.
  auto replay = select_with(choices, g);
  ASSERT_TRUE(replay) << replay.error().to_string();
  EXPECT_EQ((*replay)->describe_kernels(), (*timed)->describe_kernels());
  EXPECT_EQ((*replay)->config().key(), (*timed)->config().key());
  auto again = (*replay)->infer(x);
  ASSERT_TRUE(again) << again.error().to_string();
  for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*again)[i].bitwise_equal((*got)[i]));
  if (c.key == "select") return;

  // This backend's kernels competed: it accepted some heavy node, and a
  // placement that runs every node it accepts on it is right too.
  std::string forced;
  size_t mine = 0;
  for (const Entry& e : entries) {
    const bool takes = e.accepted.contains(c.key);
    mine += takes ? 1 : 0;
    std::string acc;
    for (const std::string& a : e.accepted) acc += (acc.empty() ? "" : "+") + a;
    forced +=
        (forced.empty() ? "" : ";") + e.node + "=" + (takes ? c.key : e.winner) + "(" + acc + ")";
  }
  if (mine == 0) HONE_SKIP(c.key + " accepts none of the model's heavy nodes: " + choices);
  auto placed = select_with(forced, g);
  ASSERT_TRUE(placed) << placed.error().to_string();
  size_t lines = 0;
  for (const std::string& line : (*placed)->describe_kernels())
    lines += line.find("-> " + c.key + " (per-op selection") != std::string::npos ? 1 : 0;
  EXPECT_EQ(lines, mine) << forced;
  auto out = (*placed)->infer(x);
  ASSERT_TRUE(out) << out.error().to_string();
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(c.tolerance.assert_close((*out)[i], (*want)[i])) << "output " << i;
}

HONE_WITH_BACKENDS(KernelSelection);

}  // namespace
}  // namespace hone::functional
