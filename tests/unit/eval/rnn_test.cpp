// RNN, GRU and LSTM reference kernels against hand-computed recurrences.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "eval/interpreter.h"
#include "hone/graph_builder.h"

namespace hone::eval {
namespace {

using Attrs = std::map<std::string, Attribute>;
using Inputs = std::vector<std::optional<Tensor>>;

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::from<float>(shape, v);
}

std::vector<float> vals(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// Runs one recurrent node; absent entries of `ins` are omitted inputs.
Result<std::vector<Tensor>> run(const std::string& op, const Inputs& ins, Attrs attrs,
                                int outputs) {
  GraphBuilder b("rnn");
  std::vector<ValueId> ids;
  std::vector<Tensor> given;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!ins[i]) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(b.input("in" + std::to_string(i), ins[i]->dtype(), Shape::of(ins[i]->shape())));
    given.push_back(*ins[i]);
  }
  auto outs = b.op_n(op, ids, outputs, std::move(attrs), "node");
  for (int i = 0; i < outputs; ++i) b.output(outs[i], "out" + std::to_string(i));
  HONE_TRY(Graph g, std::move(b).build());
  return Interpreter().run_tensors(g, given);
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want,
                 double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(Rnn, DefaultTanhWithBias) {
  Tensor x = f32({2, 1, 2}, {1, 2, -1, 0.5f});
  Tensor w = f32({1, 1, 2}, {0.5f, -0.25f});
  Tensor r = f32({1, 1, 1}, {0.8f});
  Tensor bias = f32({1, 2}, {0.1f, -0.2f});
  auto out = run("RNN", {x, w, r, bias}, {{"hidden_size", int64_t{1}}}, 2);
  ASSERT_TRUE(out) << out.error().to_string();
  const double h1 = std::tanh(0.5 * 1 - 0.25 * 2 + 0.1 - 0.2);
  const double h2 = std::tanh(0.5 * -1 - 0.25 * 0.5 + 0.8 * h1 + 0.1 - 0.2);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 1, 1, 1}));
  expect_near(vals((*out)[0]), {h1, h2});
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{1, 1, 1}));
  expect_near(vals((*out)[1]), {h2});
}

TEST(Rnn, ReverseReluWithSequenceLensAndInitialH) {
  // h_t = relu(x_t + h_{t+1}), run backwards over each row's own length.
  Tensor x = f32({3, 2, 1}, {1, 4, 2, 5, 3, 6});  // row 0: 1 2 3, row 1: 4 5 6
  Tensor w = f32({1, 1, 1}, {1});
  Tensor r = f32({1, 1, 1}, {1});
  Tensor lens = Tensor::from<int32_t>({2}, {3, 1});
  Tensor h0 = f32({1, 2, 1}, {10, 20});
  auto out = run(
      "RNN", {x, w, r, std::nullopt, lens, h0},
      {{"direction", std::string("reverse")}, {"activations", std::vector<std::string>{"Relu"}}},
      2);
  ASSERT_TRUE(out) << out.error().to_string();
  // Row 0: t2 = 13, t1 = 15, t0 = 16. Row 1 (length 1): t0 = 24, rest zero.
  EXPECT_EQ(vals((*out)[0]), (std::vector<float>{16, 24, 15, 0, 13, 0}));
  EXPECT_EQ(vals((*out)[1]), (std::vector<float>{16, 24}));
}

TEST(Rnn, BidirectionalActivationsConsumeAlphaAndBetaInOrder) {
  // R = 0, so h_t = act(x_t): forward Affine(2, 1), reverse LeakyRelu(0.5).
  Tensor x = f32({2, 1, 1}, {-2, 3});
  Tensor w = f32({2, 1, 1}, {1, 1});
  Tensor r = f32({2, 1, 1}, {0, 0});
  auto out = run("RNN", {x, w, r},
                 {{"direction", std::string("bidirectional")},
                  {"activations", std::vector<std::string>{"Affine", "LeakyRelu"}},
                  {"activation_alpha", std::vector<float>{2.0f, 0.5f}},
                  {"activation_beta", std::vector<float>{1.0f}}},
                 2);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(vals((*out)[0]), (std::vector<float>{-3, -1, 7, 3}));  // [t][dir]
  EXPECT_EQ(vals((*out)[1]), (std::vector<float>{7, -1}));  // forward ends at t1, reverse at t0
}

TEST(Rnn, ClipBoundsActivationInputs) {
  Tensor x = f32({1, 1, 1}, {5});
  auto out = run("RNN", {x, f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0})},
                 {{"clip", 2.0f}, {"activations", std::vector<std::string>{"Relu"}}}, 2);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(vals((*out)[1]), (std::vector<float>{2}));
}

TEST(Rnn, Float64StaysFloat64) {
  Tensor x = Tensor::from<double>({1, 1, 1}, {0.25});
  Tensor w = Tensor::from<double>({1, 1, 1}, {2});
  Tensor r = Tensor::from<double>({1, 1, 1}, {0});
  auto out = run("RNN", {x, w, r}, {}, 2);
  ASSERT_TRUE(out) << out.error().to_string();
  ASSERT_EQ((*out)[1].dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ((*out)[1].data<double>()[0], std::tanh(0.5));
}

TEST(Rnn, RejectsBadShapesAndAttributes) {
  Tensor x = f32({2, 1, 2}, {1, 2, 3, 4});
  Tensor r = f32({1, 1, 1}, {1});
  auto bad_w = run("RNN", {x, f32({1, 1, 3}, {1, 2, 3}), r}, {}, 1);
  ASSERT_FALSE(bad_w);
  EXPECT_NE(bad_w.error().message().find("W must have shape [1,1,2]"), std::string::npos)
      << bad_w.error().to_string();
  Tensor w = f32({1, 1, 2}, {1, 2});
  auto act = run("RNN", {x, w, r}, {{"activations", std::vector<std::string>{"Swish"}}}, 1);
  ASSERT_FALSE(act);
  EXPECT_EQ(act.error().code(), ErrorCode::kUnsupported);
  auto lens = run("RNN", {x, w, r, std::nullopt, Tensor::from<int32_t>({1}, {3})}, {}, 1);
  ASSERT_FALSE(lens);
  EXPECT_NE(lens.error().message().find("outside [0, 2]"), std::string::npos);
  auto dir = run("RNN", {x, w, r}, {{"direction", std::string("sideways")}}, 1);
  ASSERT_FALSE(dir);
  auto ints = run("RNN", {Tensor::from<int32_t>({1, 1, 1}, {1}), w, r}, {}, 1);
  ASSERT_FALSE(ints);
}

TEST(Rnn, ParameterisedActivations) {
  // One step with W = 1, R = 0, so h = act(x); each activation with its defaults or given values.
  struct Case {
    std::string name;
    std::vector<float> alpha, beta;
    float x;
    double want;
  };
  const std::vector<Case> cases = {
      {"Sigmoid", {}, {}, 0.5f, sigmoid(0.5)},
      {"LeakyRelu", {}, {}, -2.0f, -0.02},
      {"ThresholdedRelu", {}, {}, 0.5f, 0.0},
      {"ThresholdedRelu", {0.25f}, {}, 0.5f, 0.5},
      {"ScaledTanh", {2.0f}, {0.5f}, 1.0f, 2.0 * std::tanh(0.5)},
      {"HardSigmoid", {}, {}, 1.0f, 0.7},
      {"HardSigmoid", {}, {}, 10.0f, 1.0},
      {"Elu", {}, {}, -1.0f, std::exp(-1.0) - 1.0},
      {"Elu", {2.0f}, {}, 3.0f, 3.0},
      {"Softsign", {}, {}, -3.0f, -0.75},
      {"Softplus", {}, {}, 0.5f, std::log(1.0 + std::exp(0.5))},
      {"affine", {}, {}, 4.0f, 4.0},  // names are case-insensitive
  };
  for (const Case& c : cases) {
    Attrs attrs{{"activations", std::vector<std::string>{c.name}}};
    if (!c.alpha.empty()) attrs["activation_alpha"] = c.alpha;
    if (!c.beta.empty()) attrs["activation_beta"] = c.beta;
    auto out =
        run("RNN", {f32({1, 1, 1}, {c.x}), f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0})}, attrs, 2);
    ASSERT_TRUE(out) << c.name << ": " << out.error().to_string();
    EXPECT_NEAR((*out)[1].data<float>()[0], c.want, 1e-6) << c.name;
  }
}

TEST(Rnn, EmptySequenceReturnsTheInitialState) {
  Tensor x = Tensor::zeros(DType::kF32, {0, 2, 1});
  Tensor h0 = f32({1, 2, 1}, {3, -3});
  auto out = run(
      "RNN", {x, f32({1, 1, 1}, {1}), f32({1, 1, 1}, {1}), std::nullopt, std::nullopt, h0}, {}, 2);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(vals((*out)[1]), (std::vector<float>{3, -3}));
}

TEST(Gru, SequenceLensStopEachRowAtItsLength) {
  // Zero weights: h halves every step, so the final state tells how many steps ran.
  Tensor x = Tensor::zeros(DType::kF32, {3, 3, 1});
  Tensor w = Tensor::zeros(DType::kF32, {1, 3, 1});
  Tensor r = Tensor::zeros(DType::kF32, {1, 3, 1});
  Tensor h0 = f32({1, 3, 1}, {8, 8, 8});
  Tensor lens = Tensor::from<int32_t>({3}, {3, 1, 0});
  auto out = run("GRU", {x, w, r, std::nullopt, lens, h0}, {}, 2);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(vals((*out)[1]), (std::vector<float>{1, 4, 8}));
  // Y is zero past each row's length: [t][row].
  EXPECT_EQ(vals((*out)[0]), (std::vector<float>{4, 4, 0, 2, 0, 0, 1, 0, 0}));
}

TEST(Lstm, ClipAppliesToEveryActivationInput) {
  // W, R zero; bias pushes every gate to 10, clipped to 1: i = o = f = sigmoid(1), g = tanh(1).
  Tensor x = f32({1, 1, 1}, {0});
  Tensor w = Tensor::zeros(DType::kF32, {1, 4, 1});
  Tensor r = Tensor::zeros(DType::kF32, {1, 4, 1});
  Tensor bias = f32({1, 8}, {10, 10, 10, 10, 0, 0, 0, 0});
  Tensor c0 = f32({1, 1, 1}, {5});
  auto out = run("LSTM", {x, w, r, bias, std::nullopt, std::nullopt, c0}, {{"clip", 1.0f}}, 3);
  ASSERT_TRUE(out) << out.error().to_string();
  const double s = sigmoid(1.0);
  const double c = s * 5 + s * std::tanh(1.0);
  expect_near(vals((*out)[2]), {c});
  expect_near(vals((*out)[1]), {s * std::tanh(1.0)});  // h(C) input clipped to 1 as well
}

struct GruCase {
  double x = 2, h0 = 0.5;
  double wz = 0.5, wr = -0.5, wh = 1.0, rz = 0.3, rr = 0.7, rh = -0.6;
  double wbz = 0.1, wbr = 0.2, wbh = 0.3, rbz = -0.1, rbr = 0.05, rbh = 0.4;
};

TEST(Gru, OneStepBothResetModes) {
  const GruCase c;
  Tensor x = f32({1, 1, 1}, {float(c.x)});
  Tensor w = f32({1, 3, 1}, {float(c.wz), float(c.wr), float(c.wh)});
  Tensor r = f32({1, 3, 1}, {float(c.rz), float(c.rr), float(c.rh)});
  Tensor bias = f32(
      {1, 6}, {float(c.wbz), float(c.wbr), float(c.wbh), float(c.rbz), float(c.rbr), float(c.rbh)});
  Tensor h0 = f32({1, 1, 1}, {float(c.h0)});
  const double z = sigmoid(c.wz * c.x + c.rz * c.h0 + c.wbz + c.rbz);
  const double rg = sigmoid(c.wr * c.x + c.rr * c.h0 + c.wbr + c.rbr);
  for (int64_t lbr : {0, 1}) {
    auto out = run("GRU", {x, w, r, bias, std::nullopt, h0}, {{"linear_before_reset", lbr}}, 2);
    ASSERT_TRUE(out) << out.error().to_string();
    const double ht = lbr ? std::tanh(c.wh * c.x + c.wbh + rg * (c.rh * c.h0 + c.rbh))
                          : std::tanh(c.wh * c.x + c.rh * (rg * c.h0) + c.rbh + c.wbh);
    const double h = (1 - z) * ht + z * c.h0;
    expect_near(vals((*out)[0]), {h});
    expect_near(vals((*out)[1]), {h});
  }
}

TEST(Gru, ZeroWeightsGiveHalfTheStateEachStep) {
  // All weights zero: z = 0.5, h~ = 0, so h halves every step.
  Tensor x = f32({3, 1, 2}, {1, 2, 3, 4, 5, 6});
  Tensor w = Tensor::zeros(DType::kF32, {1, 6, 2});
  Tensor r = Tensor::zeros(DType::kF32, {1, 6, 2});
  Tensor h0 = f32({1, 1, 2}, {8, -4});
  auto out = run("GRU", {x, w, r, std::nullopt, std::nullopt, h0}, {}, 2);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(vals((*out)[0]), (std::vector<float>{4, -2, 2, -1, 1, -0.5f}));
  EXPECT_EQ(vals((*out)[1]), (std::vector<float>{1, -0.5f}));
}

// Scalar LSTM step with peepholes, gates in i, o, f, c order.
struct LstmScalar {
  double wi, wo, wf, wc, ri, ro, rf, rc, bi, bo, bf, bc, pi, po, pf;
  void step(double x, double& h, double& c, bool input_forget = false) const {
    const double i = sigmoid(wi * x + ri * h + bi + pi * c);
    const double f = input_forget ? 1 - i : sigmoid(wf * x + rf * h + bf + pf * c);
    const double g = std::tanh(wc * x + rc * h + bc);
    c = f * c + i * g;
    const double o = sigmoid(wo * x + ro * h + bo + po * c);
    h = o * std::tanh(c);
  }
};

TEST(Lstm, PeepholesBiasAndInitialState) {
  const LstmScalar m{0.5, -0.3, 0.8, 1.1,  0.2, 0.4,  -0.6, 0.9,
                     0.1, -0.2, 0.3, 0.05, 0.7, -0.4, 0.25};
  Tensor x = f32({2, 1, 1}, {1.5f, -0.5f});
  Tensor w = f32({1, 4, 1}, {0.5f, -0.3f, 0.8f, 1.1f});
  Tensor r = f32({1, 4, 1}, {0.2f, 0.4f, -0.6f, 0.9f});
  // Wb carries the bias, Rb is zero.
  Tensor bias = f32({1, 8}, {0.1f, -0.2f, 0.3f, 0.05f, 0, 0, 0, 0});
  Tensor h0 = f32({1, 1, 1}, {0.3f});
  Tensor c0 = f32({1, 1, 1}, {-0.7f});
  Tensor p = f32({1, 3}, {0.7f, -0.4f, 0.25f});
  auto out = run("LSTM", {x, w, r, bias, std::nullopt, h0, c0, p}, {}, 3);
  ASSERT_TRUE(out) << out.error().to_string();
  double h = 0.3, c = -0.7;
  m.step(1.5, h, c);
  const double h1 = h;
  m.step(-0.5, h, c);
  expect_near(vals((*out)[0]), {h1, h}, 1e-6);
  expect_near(vals((*out)[1]), {h}, 1e-6);
  expect_near(vals((*out)[2]), {c}, 1e-6);
}

TEST(Lstm, InputForgetCouplesTheGates) {
  const LstmScalar m{0.5, -0.3, 0.8, 1.1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  Tensor x = f32({1, 1, 1}, {2});
  Tensor w = f32({1, 4, 1}, {0.5f, -0.3f, 0.8f, 1.1f});
  Tensor r = Tensor::zeros(DType::kF32, {1, 4, 1});
  Tensor c0 = f32({1, 1, 1}, {1});
  auto out = run("LSTM", {x, w, r, std::nullopt, std::nullopt, std::nullopt, c0},
                 {{"input_forget", int64_t{1}}}, 3);
  ASSERT_TRUE(out) << out.error().to_string();
  double h = 0, c = 1;
  m.step(2, h, c, true);
  expect_near(vals((*out)[1]), {h});
  expect_near(vals((*out)[2]), {c});
}

// Deterministic, varied weights for the structural tests.
Tensor pattern(std::vector<int64_t> shape, float scale, float phase) {
  Tensor t = Tensor::zeros(DType::kF32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * std::sin(0.7f * i + phase);
  return t;
}

TEST(Lstm, BatchwiseLayoutTransposesInputsAndOutputs) {
  const int64_t S = 3, B = 2, I = 3, H = 2;
  Tensor x0 = pattern({S, B, I}, 1.0f, 0.1f);
  Tensor x1 = Tensor::zeros(DType::kF32, {B, S, I});
  for (int64_t s = 0; s < S; ++s)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < I; ++i)
        x1.data<float>()[(b * S + s) * I + i] = x0.data<float>()[(s * B + b) * I + i];
  Tensor w = pattern({1, 4 * H, I}, 0.5f, 0.3f);
  Tensor r = pattern({1, 4 * H, H}, 0.5f, 0.9f);
  auto a = run("LSTM", {x0, w, r}, {{"hidden_size", H}}, 3);
  auto b = run("LSTM", {x1, w, r}, {{"hidden_size", H}, {"layout", int64_t{1}}}, 3);
  ASSERT_TRUE(a) << a.error().to_string();
  ASSERT_TRUE(b) << b.error().to_string();
  ASSERT_EQ((*b)[0].shape(), (std::vector<int64_t>{B, S, 1, H}));
  ASSERT_EQ((*b)[1].shape(), (std::vector<int64_t>{B, 1, H}));
  for (int64_t s = 0; s < S; ++s)
    for (int64_t n = 0; n < B; ++n)
      for (int64_t j = 0; j < H; ++j)
        EXPECT_EQ((*a)[0].data<float>()[(s * B + n) * H + j],
                  (*b)[0].data<float>()[(n * S + s) * H + j]);
  EXPECT_EQ(vals((*a)[1]), vals((*b)[1]));  // [1,B,H] and [B,1,H] share a layout
  EXPECT_EQ(vals((*a)[2]), vals((*b)[2]));
}

TEST(Lstm, ReverseHalfOfBidirectionalIsForwardOnReversedInput) {
  const int64_t S = 4, B = 1, I = 2, H = 3;
  Tensor x = pattern({S, B, I}, 1.0f, 0.2f);
  Tensor xr = Tensor::zeros(DType::kF32, {S, B, I});
  for (int64_t s = 0; s < S; ++s)
    for (int64_t i = 0; i < I; ++i)
      xr.data<float>()[s * I + i] = x.data<float>()[(S - 1 - s) * I + i];
  Tensor w2 = pattern({2, 4 * H, I}, 0.4f, 0.5f);
  Tensor r2 = pattern({2, 4 * H, H}, 0.4f, 1.3f);
  Tensor w1 = Tensor::zeros(DType::kF32, {1, 4 * H, I});
  Tensor r1 = Tensor::zeros(DType::kF32, {1, 4 * H, H});
  std::copy(w2.data<float>() + 4 * H * I, w2.data<float>() + 8 * H * I, w1.data<float>());
  std::copy(r2.data<float>() + 4 * H * H, r2.data<float>() + 8 * H * H, r1.data<float>());
  auto both = run("LSTM", {x, w2, r2}, {{"direction", std::string("bidirectional")}}, 3);
  auto fwd = run("LSTM", {xr, w1, r1}, {}, 3);
  ASSERT_TRUE(both) << both.error().to_string();
  ASSERT_TRUE(fwd) << fwd.error().to_string();
  ASSERT_EQ((*both)[0].shape(), (std::vector<int64_t>{S, 2, B, H}));
  for (int64_t s = 0; s < S; ++s)
    for (int64_t j = 0; j < H; ++j)
      EXPECT_FLOAT_EQ((*both)[0].data<float>()[(s * 2 + 1) * H + j],
                      (*fwd)[0].data<float>()[(S - 1 - s) * H + j]);
  for (int64_t j = 0; j < H; ++j) {
    EXPECT_FLOAT_EQ((*both)[1].data<float>()[H + j], (*fwd)[1].data<float>()[j]);
    EXPECT_FLOAT_EQ((*both)[2].data<float>()[H + j], (*fwd)[2].data<float>()[j]);
  }
}

TEST(Lstm, OnlyRequestedOutputs) {
  Tensor x = f32({1, 1, 1}, {1});
  Tensor w = pattern({1, 4, 1}, 1.0f, 0.0f);
  Tensor r = pattern({1, 4, 1}, 1.0f, 1.0f);
  GraphBuilder b("lstm");
  auto xi = b.input("x", DType::kF32, Shape::of({1, 1, 1}));
  auto outs = b.op_n("LSTM", {xi, b.constant("w", w), b.constant("r", r)}, 3);
  b.output(outs[2], "y_c");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto out = Interpreter().run_tensors(*g, {x});
  ASSERT_TRUE(out) << out.error().to_string();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 1, 1}));
}

}  // namespace
}  // namespace hone::eval
