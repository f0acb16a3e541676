// LSTM, GRU and RNN on oneDNN's recurrent primitives against the reference
// interpreter: directions, biases, peepholes, initial states, both GRU reset
// modes, dynamic batch and sequence length, and what is refused.
#include <filesystem>

#include "hone/onnx.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::uniform;

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t input = 5, hidden = 4;
  bool bias = true;
  bool initial_h = false, initial_c = false, peephole = false;
  int64_t linear_before_reset = 0;
  std::vector<std::string> activations;
  std::map<std::string, Attribute> extra;  // attributes oneDNN should refuse
  bool w_as_input = false;
  std::optional<Tensor> sequence_lens;
};

int64_t gates(const std::string& op) {
  return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
}

/// X [seq, batch, input] -> op -> Y, Y_h (and Y_c for LSTM), all graph outputs.
/// Initial states, when asked for, are graph inputs after X.
Graph rnn_graph(std::mt19937& rng, const RnnCase& c, Dim seq, Dim batch) {
  GraphBuilder b(c.op);
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, H = c.hidden,
                G = gates(c.op) * c.hidden;
  ValueId x = b.input("x", DType::kF32, Shape{seq, batch, c.input});
  std::vector<ValueId> in{x,
                          c.w_as_input ? b.input("w", DType::kF32, Shape{D, G, c.input})
                                       : b.constant("w", uniform(rng, {D, G, c.input})),
                          b.constant("r", uniform(rng, {D, G, H})),
                          c.bias ? b.constant("b", uniform(rng, {D, 2 * G})) : kNoValue,
                          c.sequence_lens ? b.constant("lens", *c.sequence_lens) : kNoValue,
                          c.initial_h ? b.input("h0", DType::kF32, Shape{D, batch, H}) : kNoValue};
  if (c.op == "LSTM") {
    in.push_back(c.initial_c ? b.input("c0", DType::kF32, Shape{D, batch, H}) : kNoValue);
    in.push_back(c.peephole ? b.constant("p", uniform(rng, {D, 3 * H})) : kNoValue);
  }
  while (!in.empty() && in.back() == kNoValue) in.pop_back();
  std::map<std::string, Attribute> attrs = c.extra;
  attrs["hidden_size"] = H;
  attrs["direction"] = c.direction;
  if (c.op == "GRU") attrs["linear_before_reset"] = c.linear_before_reset;
  if (!c.activations.empty()) attrs["activations"] = c.activations;
  auto outs = b.op_n(c.op, in, c.op == "LSTM" ? 3 : 2, attrs);
  b.output(outs[0], "y");
  b.output(outs[1], "y_h");
  if (c.op == "LSTM") b.output(outs[2], "y_c");
  return *std::move(b).build();
}

std::vector<Tensor> rnn_inputs(std::mt19937& rng, const RnnCase& c, int64_t seq, int64_t batch) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  std::vector<Tensor> in{uniform(rng, {seq, batch, c.input}, -2.0f, 2.0f)};
  if (c.w_as_input) in.push_back(uniform(rng, {D, gates(c.op) * c.hidden, c.input}));
  if (c.initial_h) in.push_back(uniform(rng, {D, batch, c.hidden}));
  if (c.op == "LSTM" && c.initial_c) in.push_back(uniform(rng, {D, batch, c.hidden}));
  return in;
}

void expect_case(const RnnCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Graph g = rnn_graph(rng, c, 6, 3);
  expect_matches_reference(g, rnn_inputs(rng, c, 6, 3));
  auto be = build_onednn(g);
  const auto plans = be->plan_descriptions();
  ASSERT_EQ(plans.size(), 1u);
  const std::string kind = c.op == "LSTM"          ? "lstm"
                           : c.op == "RNN"         ? "rnn"
                           : c.linear_before_reset ? "lbr_gru"
                                                   : "gru";
  EXPECT_EQ(plans[0].rfind(kind, 0), 0u) << plans[0];
}

TEST(OnednnRnn, LstmInEveryDirectionWithAndWithoutStates) {
  uint32_t seed = 10;
  for (const char* dir : {"forward", "reverse", "bidirectional"})
    for (int states = 0; states < 4; ++states) {
      RnnCase c;
      c.direction = dir;
      c.initial_h = states & 1;
      c.initial_c = states & 2;  // one state alone: the other starts at zero
      c.bias = states != 3;
      SCOPED_TRACE(std::string(dir) + " states " + std::to_string(states));
      expect_case(c, ++seed);
    }
}

TEST(OnednnRnn, LstmPeepholesAndExplicitDefaultActivations) {
  for (const char* dir : {"forward", "bidirectional"}) {
    SCOPED_TRACE(dir);
    RnnCase c;
    c.direction = dir;
    c.peephole = true;
    c.initial_c = true;
    c.activations = {"Sigmoid", "Tanh", "Tanh"};  // once, for both directions
    expect_case(c, 30);
  }
}

TEST(OnednnRnn, GruInBothResetModes) {
  uint32_t seed = 40;
  for (int64_t lbr : {0, 1})
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      SCOPED_TRACE(std::string(dir) + " linear_before_reset " + std::to_string(lbr));
      RnnCase c;
      c.op = "GRU";
      c.direction = dir;
      c.linear_before_reset = lbr;
      c.initial_h = lbr == 1;
      expect_case(c, ++seed);
    }
}

TEST(OnednnRnn, VanillaRnnActivations) {
  uint32_t seed = 50;
  for (const char* act : {"Tanh", "Relu", "Sigmoid"}) {
    SCOPED_TRACE(act);
    RnnCase c;
    c.op = "RNN";
    c.direction = "bidirectional";
    c.activations = {act, act};
    c.initial_h = true;
    expect_case(c, ++seed);
  }
}

TEST(OnednnRnn, DynamicBatchAndSequenceBuildOnePlanPerShape) {
  std::mt19937 rng(60);
  RnnCase c;
  c.direction = "bidirectional";
  c.initial_h = c.initial_c = true;
  Graph g = rnn_graph(rng, c, Dim::symbol("seq"), Dim::symbol("batch"));
  auto be = build_onednn(g);
  eval::Interpreter ref;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {7, 2}, {3, 5}, {7, 2}};
  for (auto [seq, batch] : shapes) {
    SCOPED_TRACE("seq " + std::to_string(seq) + " batch " + std::to_string(batch));
    auto in = rnn_inputs(rng, c, seq, batch);
    auto got = be->infer(in);
    auto want = ref.run_tensors(g, in);
    ASSERT_TRUE(got && want);
    for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE(close((*got)[i], (*want)[i]));
  }
  EXPECT_EQ(be->plan_descriptions().size(), 3u) << "the repeated shape reuses its plan";
  EXPECT_EQ(be->fallback_runs(), 0u);
}

TEST(OnednnRnn, SequenceLensRunOnOnednnOnlyWhenFull) {
  RnnCase c;
  c.sequence_lens = Tensor::from<int32_t>({3}, {6, 6, 6});
  expect_case(c, 70);
  // Shorter rows: oneDNN cannot stop early, so this shape runs on the reference.
  std::mt19937 rng(71);
  c.sequence_lens = Tensor::from<int32_t>({3}, {6, 2, 4});
  Graph g = rnn_graph(rng, c, 6, 3);
  auto be = build_onednn(g);
  auto in = rnn_inputs(rng, c, 6, 3);
  auto got = be->infer(in);
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(got && want);
  for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE(close((*got)[i], (*want)[i]));
  EXPECT_EQ(be->fallback_runs(), 1u);
}

TEST(OnednnRnn, RefusesWhatOnednnCannotComputeWithReasons) {
  std::mt19937 rng(80);
  struct Refusal {
    RnnCase c;
    std::string reason;
  };
  std::vector<Refusal> cases(5);
  cases[0].c.extra["clip"] = 1.5f;
  cases[0].reason = "clip";
  cases[1].c.activations = {"Sigmoid", "Relu", "Tanh"};
  cases[1].reason = "activation 'Relu'";
  cases[2].c.extra["layout"] = int64_t{1};
  cases[2].reason = "layout 1";
  cases[3].c.w_as_input = true;
  cases[3].reason = "W must be an f32 constant";
  cases[4].c.op = "GRU";
  cases[4].c.activations = {"HardSigmoid", "Tanh"};
  cases[4].reason = "activation 'HardSigmoid'";
  for (const Refusal& r : cases) {
    SCOPED_TRACE(r.reason);
    Graph g = rnn_graph(rng, r.c, 4, 2);
    auto votes = OnednnBackend().propose(g);
    ASSERT_EQ(votes.size(), 1u);
    EXPECT_FALSE(votes[0].supported);
    EXPECT_NE(votes[0].reason.find(r.reason), std::string::npos) << votes[0].reason;
  }
}

TEST(OnednnRnn, BatchOneAndWideBatchMatchTheReferenceOnWhicheverKernelIsTimedFaster) {
  // lower_rnn times oneDNN's brgemm kernels (its own weight layout) against
  // its gemm kernels (plain ldigo weights) and keeps the faster; batch 1 over
  // a long sequence is where the gemm kernels win, a wide batch where they
  // tie. Either way the result is the reference's.
  uint32_t seed = 100;
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (int64_t batch : {1, 16}) {
      SCOPED_TRACE(std::string(op) + " batch " + std::to_string(batch));
      RnnCase c;
      c.op = op;
      c.direction = "bidirectional";
      c.input = 24;
      c.hidden = 16;
      c.initial_h = true;
      c.linear_before_reset = std::string(op) == "GRU";
      if (std::string(op) == "RNN") c.activations = {"Tanh", "Tanh"};
      std::mt19937 rng(++seed);
      Graph g = rnn_graph(rng, c, 40, batch);
      expect_matches_reference(g, rnn_inputs(rng, c, 40, batch));
    }
}

TEST(OnednnRnn, LstmModelIsOneBlockAndMatchesTheReference) {
  auto g = hone::onnx::load_model(std::filesystem::path(HONE_SOURCE_DIR) / "models/lstm.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  std::mt19937 rng(90);
  for (auto [seq, batch] : std::vector<std::pair<int64_t, int64_t>>{{32, 8}, {5, 1}}) {
    SCOPED_TRACE("seq " + std::to_string(seq) + " batch " + std::to_string(batch));
    // Two LSTMs, two Squeezes and the Gemm head: one oneDNN block.
    expect_matches_reference(*g, {uniform(rng, {seq, batch, 64})});
  }
}

}  // namespace
}  // namespace hone::onednn
