// The record of choices onednn makes by timing (timed_choices.h): a build
// records each one in the config field `timed_choices`; a build given that
// text replays it without timing, with the same plans and the same bits; a
// recorded choice is obeyed even where timing would pick the other; a
// malformed value is refused naming the field and the entry; a recorded
// choice this machine cannot run is warned about and timed instead.
#include <cmath>
#include <cstring>
#include <mutex>

#include "backends/common/choice_text.h"
#include "backends/onednn/plan.h"
#include "backends/onednn/timed_choices.h"
#include "hone/log_sink.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::uniform;

/// relu(conv1x1(x)) -> relu(conv3x3) -> relu(conv3x3 + skip) -> conv3x3 s2
/// -> conv1x1: 3x3 stride-1 convs over channels in 16s (Winograd-eligible
/// on nChw16c), a residual Add, convs that read one Conv; `batch` may be
/// symbolic.
Graph residual_net(std::mt19937& rng, Dim batch, int64_t c = 64, int64_t hw = 14) {
  GraphBuilder b("res");
  ValueId x = b.input("x", DType::kF32, Shape{batch, c, hw, hw});
  int k_id = 0;
  auto conv = [&](ValueId in, int64_t k, int64_t stride) {
    const int64_t p = k / 2;
    const float s = 1.0f / std::sqrt(static_cast<float>(c * k * k));
    return b.op("Conv",
                {in, b.constant("", uniform(rng, {c, c, k, k}, -s, s)),
                 b.constant("", uniform(rng, {c}, -0.1f, 0.1f))},
                {{"strides", std::vector<int64_t>{stride, stride}},
                 {"pads", std::vector<int64_t>{p, p, p, p}}},
                "c" + std::to_string(k_id++));
  };
  ValueId x0 = b.relu(conv(x, 1, 1));
  ValueId h = b.relu(conv(x0, 3, 1));
  ValueId y = b.relu(b.add(conv(h, 3, 1), x0));
  b.output(conv(b.relu(conv(y, 3, 2)), 1, 1), "y");
  return *std::move(b).build();
}

std::unique_ptr<OnednnBackend> build_with(const Graph& g, const std::string& choices) {
  auto be = std::make_unique<OnednnBackend>();
  EXPECT_TRUE(be->configure("threads", "1"));
  if (!choices.empty()) {
    auto c = be->configure("timed_choices", choices);
    EXPECT_TRUE(c) << c.error().to_string();
  }
  auto r = be->build(g);
  EXPECT_TRUE(r) << r.error().to_string();
  return be;
}

std::string recorded(const Backend& be) {
  return be.config().get<std::string>("timed_choices", "");
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

/// `text`'s entries with each one of `kind` set to `choice`.
std::string with_every(const std::string& text, const std::string& kind,
                       const std::string& choice) {
  auto entries = TimedChoices::parse(text);
  EXPECT_TRUE(entries) << entries.error().to_string();
  for (auto& [key, e] : *entries)
    if (TimedChoices::kind_of(e.label) == kind) e.kernel = choice;
  return format_choice_text(*entries);
}

/// The entries of `text` of `kind` (and `choice`, where given).
size_t count_kind(const std::string& text, const std::string& kind,
                  const std::string& choice = "") {
  auto entries = TimedChoices::parse(text);
  EXPECT_TRUE(entries) << entries.error().to_string();
  size_t n = 0;
  for (const auto& [key, e] : *entries)
    n += TimedChoices::kind_of(e.label) == kind && (choice.empty() || e.kernel == choice);
  return n;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

/// Warnings logged while alive.
class WarningLog {
 public:
  WarningLog() {
    set_log_sink([this](LogLevel level, std::string_view msg) {
      if (level < LogLevel::kWarn) return;
      std::lock_guard lock(mu_);
      text_ += std::string(msg) + "\n";
    });
  }
  ~WarningLog() { set_log_sink(nullptr); }
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
};

TEST(OnednnTimedChoices, AReplayedBuildTimesNothingAndGivesTheSameBits) {
  std::mt19937 rng(11);
  Graph g = residual_net(rng, 1);
  const std::vector<Tensor> in{uniform(rng, {1, 64, 14, 14})};

  auto timed = build_with(g, "");
  const std::string text = recorded(*timed);
  const ChoiceCounts first = timed->choice_counts();
  EXPECT_GT(first.timed, 0u) << "nothing was timed, so nothing is tested";
  EXPECT_EQ(first.replayed, 0u);
  // The block's plan choice at least, and one entry per decision timed.
  EXPECT_EQ(count_kind(text, "block-plan"), 1u) << text;
  EXPECT_EQ(TimedChoices::parse(text)->size(), first.timed) << text;
  auto want = timed->infer(in);
  ASSERT_TRUE(want) << want.error().to_string();

  auto replayed = build_with(g, text);
  const ChoiceCounts again = replayed->choice_counts();
  EXPECT_EQ(again.timed, 0u) << "a replayed build timed something";
  EXPECT_EQ(again.refused, 0u);
  EXPECT_GT(again.replayed, 0u);
  EXPECT_EQ(recorded(*replayed), text);
  EXPECT_EQ(replayed->plan_descriptions(), timed->plan_descriptions());
  auto got = replayed->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(same_bits((*got)[0], (*want)[0])) << "the replayed plan computes other bits";
}

TEST(OnednnTimedChoices, ABlockPlannedAtItsFirstRunRecordsThenAndReplaysThen) {
  // A symbolic batch: the block is planned at the first infer of a shape.
  std::mt19937 rng(12);
  Graph g = residual_net(rng, Dim::symbol("batch"), 32, 12);
  const std::vector<Tensor> in{uniform(rng, {2, 32, 12, 12})};
  auto timed = build_with(g, "");
  EXPECT_EQ(recorded(*timed), "") << "planned before any shape was known";
  auto want = timed->infer(in);
  ASSERT_TRUE(want) << want.error().to_string();
  const std::string text = recorded(*timed);
  EXPECT_EQ(count_kind(text, "block-plan"), 1u) << text;
  EXPECT_NE(text.find("|[2,32,12,12]|fp32"), std::string::npos) << text;

  auto replayed = build_with(g, text);
  auto got = replayed->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ(replayed->choice_counts().timed, 0u);
  EXPECT_GT(replayed->choice_counts().replayed, 0u);
  EXPECT_TRUE(same_bits((*got)[0], (*want)[0]));
}

TEST(OnednnTimedChoices, ARecordedChoiceIsObeyedWhicheverTimingWouldPick) {
  // 128 channels at 28x28: Winograd usually wins here, so "direct" is the
  // choice timing would not make; "winograd" is checked too. Both outputs
  // stay within f32 rounding of the reference.
  std::mt19937 rng(13);
  Graph g = residual_net(rng, 1, 128, 28);
  const std::vector<Tensor> in{uniform(rng, {1, 128, 28, 28})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  const std::string text = recorded(*build_with(g, ""));
  if (count_kind(text, "winograd", "winograd") == 0)
    GTEST_SKIP() << "no Winograd kernel on this CPU, so no winograd choice was timed: " << text;
  const std::string blocked = with_every(text, "block-plan", "nChw16c");
  for (const std::string choice : {"direct", "winograd"}) {
    SCOPED_TRACE(choice);
    const std::string given = with_every(blocked, "winograd", choice);
    auto be = build_with(g, given);
    // What was given stays; only decisions that arise anew (a conv left to
    // the direct kernel may be timed on nhwc) are timed and added.
    auto given_entries = TimedChoices::parse(given);
    auto now = TimedChoices::parse(recorded(*be));
    ASSERT_TRUE(given_entries && now);
    for (const auto& [key, e] : *given_entries) {
      ASSERT_TRUE(now->contains(key)) << key;
      EXPECT_EQ(now->at(key).kernel, e.kernel) << key;
    }
    EXPECT_EQ(be->choice_counts().timed, now->size() - given_entries->size());
    EXPECT_EQ(be->choice_counts().refused, 0u);
    const std::string plans = joined(be->plan_descriptions());
    if (choice == "direct") {
      EXPECT_EQ(plans.find("conv[wino]"), std::string::npos) << plans;
    } else {
      EXPECT_EQ(count_of(plans, "conv[wino]"), count_kind(given, "winograd", "winograd")) << plans;
    }
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-3, 1e-4)) << plans;
  }
}

TEST(OnednnTimedChoices, AForcedWinogradWinsOverTheRecord) {
  std::mt19937 rng(14);
  Graph g = residual_net(rng, 1);
  const std::string text = recorded(*build_with(g, ""));
  if (count_kind(text, "winograd", "winograd") == 0)
    GTEST_SKIP() << "no Winograd kernel on this CPU: " << text;
  auto entries = TimedChoices::parse(with_every(text, "winograd", "direct"));
  ASSERT_TRUE(entries);
  TimedChoices rec(*entries);
  PlanBuilder builder(g);
  builder.set_prefer_blocked16(true);
  builder.set_winograd(true);
  builder.set_choices(&rec);
  auto plan = builder.build({{1, 64, 14, 14}});
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_NE((*plan)->describe().find("conv[wino]"), std::string::npos) << (*plan)->describe();
  EXPECT_EQ(rec.counts().timed, 0u);
}

TEST(OnednnTimedChoices, MalformedValuesAreRefusedNamingTheFieldAndTheEntry) {
  const std::string ok = "'c' (Conv) [nChw16c plan] winograd|[1,16,8,8][16,16,3,3]|fp32=direct";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "entry 'garbage'"},
      {"'c' (Conv) [any plan] winograd|[1,16]|fp32=sideways", "sideways"},
      {"'c' (Conv) [any plan] speed|[1,16]|fp32=direct", "decision kind"},
      {"'c' (Conv) [any plan] winograd|[1,16]|int8=direct", "mode 'int8'"},
      {"'c' (Conv) [any plan] layout|[1,x]|fp32=nhwc", "[1,x]"},
      {"'c' (Conv) [any plan] fusion|[1]|fp32=", "empty choice"},
      {ok + ";" + ok, "given twice"},
  };
  for (const auto& [text, needle] : cases) {
    SCOPED_TRACE(text);
    auto p = TimedChoices::parse(text);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(p.error().message().find("timed_choices"), std::string::npos) << p.error().message();
    EXPECT_NE(p.error().message().find(needle), std::string::npos) << p.error().message();
  }
  auto parsed = TimedChoices::parse(ok);
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(format_choice_text(*parsed), ok);
  EXPECT_TRUE(TimedChoices::parse("-") && TimedChoices::parse("-")->empty());

  // The backend refuses to build with one, naming the field and the entry.
  std::mt19937 rng(15);
  Graph g = residual_net(rng, 1, 16, 8);
  OnednnBackend be;
  ASSERT_TRUE(be.configure("timed_choices", "'c' (Conv) [any plan] winograd|[1]|fp32=maybe"));
  auto r = be.build(g);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().to_string().find("timed_choices entry"), std::string::npos)
      << r.error().to_string();
  EXPECT_NE(r.error().to_string().find("=maybe"), std::string::npos) << r.error().to_string();
}

TEST(OnednnTimedChoices, AChoiceThisMachineCannotRunIsWarnedAboutAndTimed) {
  // relu(conv3x3(x)) * scale: the per-channel Mul fuses as a binary post-op,
  // which oneDNN's Winograd kernel does not take, so a recorded "winograd"
  // for that conv cannot run; nor can an nChw16c layout for a ConvTranspose
  // whose channels do not split in 16s... the conv is enough.
  std::mt19937 rng(16);
  GraphBuilder b("scaled");
  ValueId x = b.input("x", DType::kF32, Shape{1, 32, 10, 10});
  ValueId c = b.op("Conv",
                   {x, b.constant("w", uniform(rng, {32, 32, 3, 3}, -0.1f, 0.1f)),
                    b.constant("bias", uniform(rng, {32}))},
                   {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "scaled_conv");
  b.output(b.mul(c, b.constant("scale", uniform(rng, {1, 32, 1, 1}))), "y");
  Graph g = *std::move(b).build();
  const std::vector<Tensor> in{uniform(rng, {1, 32, 10, 10})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();

  const std::string text = recorded(*build_with(g, ""));
  ASSERT_EQ(count_kind(text, "block-plan"), 1u) << "the block was not planned both ways: " << text;
  auto entries = TimedChoices::parse(with_every(text, "block-plan", "nChw16c"));
  ASSERT_TRUE(entries);
  const std::string label = "'scaled_conv' (Conv) [nChw16c plan] winograd";
  const std::vector<dims_t> dims{{1, 32, 10, 10}, {32, 32, 3, 3}, {32}};
  ChoiceEntry wino{label, choice_shapes_text(dims), "fp32", "winograd"};
  entries->emplace(choice_key(wino), wino);
  const std::string given = format_choice_text(*entries);

  WarningLog log;
  auto be = build_with(g, given);
  EXPECT_EQ(be->choice_counts().refused, 1u) << log.text();
  EXPECT_NE(log.text().find("timed_choices entry '" + choice_entry_text(wino) + "'"),
            std::string::npos)
      << log.text();
  EXPECT_EQ(joined(be->plan_descriptions()).find("conv[wino]"), std::string::npos);
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(close((*got)[0], (*want)[0])) << joined(be->plan_descriptions());
}

}  // namespace
}  // namespace hone::onednn
