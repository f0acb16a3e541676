// A depthwise Conv over three spatial dims as hone's own step (own_conv.cpp):
// it must match the reference for every stride, pad, dilation and channel
// count (a multiple of 16 or not), with and without a bias, whether its input
// lies channels-last already (tokens reshaped and permuted, as MViT's pooling
// convs read them) or plain; convs it does not take stay oneDNN's.
#include <array>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::uniform;

struct Case {
  int64_t c;
  std::array<int64_t, 3> in, k, s, d, pad;
  bool bias;
  bool tokens;  // the input a Transpose of [N, D, H, W, C]
};

Graph depthwise(std::mt19937& rng, const Case& t, int64_t group) {
  GraphBuilder b("dw3d");
  const Shape in_shape = t.tokens ? Shape{2, t.in[0], t.in[1], t.in[2], t.c}
                                  : Shape{2, t.c, t.in[0], t.in[1], t.in[2]};
  ValueId x = b.relu(b.input("x", DType::kF32, in_shape));
  if (t.tokens) x = b.transpose(x, {0, 4, 1, 2, 3});
  std::vector<ValueId> ins{
      x, b.constant("w", uniform(rng, {t.c, t.c / group, t.k[0], t.k[1], t.k[2]}))};
  if (t.bias) ins.push_back(b.constant("b", uniform(rng, {t.c})));
  b.output(b.op("Conv", ins,
                {{"group", group},
                 {"strides", std::vector<int64_t>(t.s.begin(), t.s.end())},
                 {"dilations", std::vector<int64_t>(t.d.begin(), t.d.end())},
                 {"pads", std::vector<int64_t>{t.pad[0], t.pad[1], t.pad[2], t.pad[0], t.pad[1],
                                               t.pad[2]}}}),
           "y");
  return *std::move(b).build();
}

/// Runs `g` on a plan and the reference; returns how many own depthwise steps it has.
size_t own_steps_matching(const Graph& g, const Tensor& in) {
  PlanBuilder builder(g);
  auto plan = builder.build({in.shape()});
  EXPECT_TRUE(plan) << plan.error().to_string();
  if (!plan) return 0;
  auto want = eval::Interpreter().run_tensors(g, {in});
  EXPECT_TRUE(want) << want.error().to_string();
  std::atomic<uint64_t> executions{0};
  auto got = (*plan)->run({in}, &executions);
  EXPECT_TRUE(got) << got.error().to_string();
  if (want && got) {
    EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-5, 1e-6)) << (*plan)->describe();
  }
  size_t n = 0;
  for (const Step& s : (*plan)->steps) n += s.kind == "depthwise_conv3d";
  return n;
}

TEST(OnednnOwnConv, DepthwiseConv3dMatchesTheReference) {
  std::mt19937 rng(303);
  const std::vector<Case> cases{
      // MViT-V2's Q pooling (stride 1) and K/V pooling (stride 2 in H, W).
      {96, {2, 8, 8}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, true},
      {96, {2, 8, 8}, {3, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true},
      // Channels not a multiple of 16, a bias, a plain input, odd sizes.
      {20, {3, 5, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, true, false},
      {7, {4, 6, 5}, {3, 1, 3}, {2, 1, 2}, {1, 1, 1}, {0, 0, 1}, true, false},
      // Dilation, a kernel as large as the input, no pad.
      {32, {5, 9, 9}, {3, 3, 3}, {1, 1, 1}, {2, 3, 2}, {2, 3, 2}, true, true},
      {16, {3, 3, 3}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false, false},
  };
  for (const Case& t : cases) {
    SCOPED_TRACE("c " + std::to_string(t.c) + " in " + std::to_string(t.in[0]) + "x" +
                 std::to_string(t.in[1]) + "x" + std::to_string(t.in[2]) + " stride " +
                 std::to_string(t.s[1]) + " dilation " + std::to_string(t.d[1]));
    const Graph g = depthwise(rng, t, t.c);
    const dims_t in = t.tokens ? dims_t{2, t.in[0], t.in[1], t.in[2], t.c}
                               : dims_t{2, t.c, t.in[0], t.in[1], t.in[2]};
    EXPECT_EQ(own_steps_matching(g, uniform(rng, in)), 1u);
  }
}

TEST(OnednnOwnConv, OtherConv3dStaysOneDnns) {
  // Two channels per group: not depthwise, oneDNN's conv.
  std::mt19937 rng(304);
  const Case t{16, {2, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, true, false};
  const Graph g = depthwise(rng, t, 8);
  EXPECT_EQ(own_steps_matching(g, uniform(rng, {2, 16, 2, 6, 6})), 0u);
}

}  // namespace
}  // namespace hone::onednn
