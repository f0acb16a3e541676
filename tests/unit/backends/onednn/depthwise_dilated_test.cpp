// A dilated depthwise 1-D conv (QuartzNet's, Jasper's, a TCN's): oneDNN 2.6's
// depthwise kernels take no dilation, so where the length and the pads are
// multiples of the dilation the conv runs undilated over [W/d, d] (the same
// bytes) on a depthwise kernel instead of oneDNN's gemm one. Results must
// match the reference whether or not it fits, with and without a bias.
#include <oneapi/dnnl/dnnl.h>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::close;
using testing_util::uniform;

/// The conv steps' oneDNN implementations in `g`'s plan for `in`, after
/// checking its outputs against the reference.
std::vector<std::string> conv_impls(const Graph& g, const Tensor& in) {
  PlanBuilder builder(g);
  auto plan = builder.build({in.shape()});
  EXPECT_TRUE(plan) << plan.error().to_string();
  if (!plan) return {};
  auto want = eval::Interpreter().run_tensors(g, {in});
  EXPECT_TRUE(want) << want.error().to_string();
  std::atomic<uint64_t> executions{0};
  auto got = (*plan)->run({in}, &executions);
  EXPECT_TRUE(got) << got.error().to_string();
  if (want && got) EXPECT_TRUE(close((*got)[0], (*want)[0], 1e-5, 1e-6));
  std::vector<std::string> out;
  for (const Step& s : (*plan)->steps) {
    if (s.own || !s.kind.starts_with("conv")) continue;
    const char* info = nullptr;
    dnnl_primitive_desc_query(s.prim.get_primitive_desc(), dnnl_query_impl_info_str, 0,
                              static_cast<void*>(&info));
    out.push_back(info != nullptr ? info : "?");
  }
  return out;
}

Graph dilated(std::mt19937& rng, int64_t channels, int64_t length, int64_t k, int64_t dil,
              int64_t pad, bool bias) {
  GraphBuilder b("tcn");
  ValueId x = b.input("x", DType::kF32, Shape{1, channels, length});
  std::vector<ValueId> ins{b.relu(x), b.constant("w", uniform(rng, {channels, 1, k}))};
  if (bias) ins.push_back(b.constant("b", uniform(rng, {channels})));
  b.output(b.op("Conv", ins,
                {{"group", channels},
                 {"dilations", std::vector<int64_t>{dil}},
                 {"pads", std::vector<int64_t>{pad, pad}}}),
           "y");
  return *std::move(b).build();
}

TEST(OnednnDepthwiseDilated, PhasedWhereLengthAndPadsAreMultiples) {
  std::mt19937 rng(141);
  for (const bool bias : {false, true}) {
    SCOPED_TRACE(bias ? "bias" : "no bias");
    // QuartzNet's: 128 channels, k 29, dilation 2, 'same' pads 28.
    const Graph g = dilated(rng, 128, 100, 29, 2, 28, bias);
    const auto impls = conv_impls(g, uniform(rng, {1, 128, 100}));
    ASSERT_EQ(impls.size(), 1u);
    EXPECT_EQ(impls[0].find("gemm"), std::string::npos) << impls[0];
    EXPECT_EQ(impls[0].find("ref"), std::string::npos) << impls[0];
  }
}

TEST(OnednnDepthwiseDilated, OtherShapesStillMatch) {
  std::mt19937 rng(142);
  // An odd length, pads that are not multiples of the dilation, dilation 3.
  for (const auto& [length, k, dil, pad] :
       std::vector<std::array<int64_t, 4>>{{51, 5, 2, 4}, {48, 5, 2, 3}, {48, 3, 3, 3}}) {
    SCOPED_TRACE(std::to_string(length) + " " + std::to_string(dil) + " " + std::to_string(pad));
    const Graph g = dilated(rng, 32, length, k, dil, pad, true);
    EXPECT_EQ(conv_impls(g, uniform(rng, {1, 32, length})).size(), 1u);
  }
}

}  // namespace
}  // namespace hone::onednn
