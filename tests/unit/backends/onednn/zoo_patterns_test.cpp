// Patterns of the zoo's models that oneDNN ran slowly (issue 30): the
// squeeze-and-excitation Mul over a channel-blocked conv output, SiLU
// (x * sigmoid(x)) as one swish step, a linear layer over [T,1,K] rows as one
// 2-D product, a channel concat of values in mixed layouts, and an attention
// mask added to the scores of a batched MatMul. Each must
// match the reference and plan every node on oneDNN.
#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::expect_matches_reference;
using testing_util::uniform;

// regnet_y's block: a grouped conv of 8 channels a group (oneDNN writes
// nChw8c), then x * sigmoid(fc(relu(fc(globalpool(x))))).
TEST(OnednnZooPatterns, SqueezeExcitationOverGroupedConv) {
  std::mt19937 rng(51);
  GraphBuilder b("se");
  ValueId x = b.input("x", DType::kF32, Shape{1, 32, 9, 9});
  GraphBuilder::ConvOptions grouped;
  grouped.group = 4;
  grouped.pads = {1, 1, 1, 1};
  ValueId c = b.relu(b.conv(x, b.constant("w", uniform(rng, {32, 8, 3, 3})),
                            b.constant("bias", uniform(rng, {32})), grouped));
  ValueId s = b.relu(b.conv(b.global_average_pool(c), b.constant("w1", uniform(rng, {8, 32, 1, 1})),
                            b.constant("b1", uniform(rng, {8}))));
  s = b.sigmoid(b.conv(s, b.constant("w2", uniform(rng, {32, 8, 1, 1})),
                       b.constant("b2", uniform(rng, {32}))));
  b.output(b.mul(c, s), "y");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {1, 32, 9, 9})});
}

// SiLU after a conv is the conv's swish post-op; on a block input, one
// eltwise step; no binary step either way.
TEST(OnednnZooPatterns, SiluIsOneSwishStep) {
  std::mt19937 rng(52);
  for (const bool after_conv : {true, false}) {
    SCOPED_TRACE(after_conv ? "after a conv" : "on a block input");
    GraphBuilder b("silu");
    ValueId x = b.input("x", DType::kF32, Shape{1, 16, 6, 6});
    ValueId y = after_conv ? b.conv(x, b.constant("w", uniform(rng, {16, 16, 1, 1})),
                                    b.constant("bias", uniform(rng, {16})))
                           : x;
    b.output(b.relu(b.mul(y, b.sigmoid(y))), "out");
    const Graph g = *std::move(b).build();
    const std::vector<Tensor> in{uniform(rng, {1, 16, 6, 6})};
    expect_matches_reference(g, in);
    auto be = build_onednn(g);
    ASSERT_TRUE(be->infer(in));
    const std::vector<std::string> plans = be->plan_descriptions();
    ASSERT_EQ(plans.size(), 1u);
    EXPECT_EQ(plans[0].find("binary"), std::string::npos) << plans[0];
    if (after_conv) {
      EXPECT_NE(plans[0].find("conv+eltwise"), std::string::npos) << plans[0];
    }
  }
}

// nn.MultiheadAttention's in-projection reads sequence-first [T,1,K] rows;
// a linear layer's bias and a [1,1,N] operand fuse into the 2-D product.
TEST(OnednnZooPatterns, ConstantWeightMatMulOverBatchedRows) {
  std::mt19937 rng(53);
  using dims = std::vector<int64_t>;
  for (const dims& a : {dims{7, 1, 12}, dims{2, 5, 12}, dims{2, 3, 2, 12}}) {
    dims out = a;
    out.back() = 10;
    auto shape = [](const dims& d) {
      std::vector<Dim> s;
      for (int64_t v : d) s.push_back(Dim(v));
      return Shape(std::move(s));
    };
    GraphBuilder b("linear");
    ValueId x = b.input("x", DType::kF32, shape(a));
    ValueId skip = b.input("skip", DType::kF32, shape(out));
    ValueId y = b.matmul(x, b.constant("w", uniform(rng, {12, 10})));
    y = b.add(y, b.constant("bias", uniform(rng, {10})));
    y = b.mul(y, b.constant("scale", uniform(rng, {1, 1, 10})));
    b.output(b.add(y, skip), "y");
    const Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, a), uniform(rng, out)});
  }
}

// A channel concat of a plain value and a conv's output, read by a conv.
TEST(OnednnZooPatterns, ConcatOfMixedLayouts) {
  std::mt19937 rng(54);
  GraphBuilder b("dense");
  ValueId x = b.input("x", DType::kF32, Shape{1, 16, 8, 8});
  GraphBuilder::ConvOptions same;
  same.pads = {1, 1, 1, 1};
  ValueId c = b.relu(b.conv(x, b.constant("w", uniform(rng, {16, 16, 3, 3})),
                            b.constant("bias", uniform(rng, {16})), same));
  ValueId cat = b.concat({x, c, b.relu(c)}, 1);
  b.output(b.conv(cat, b.constant("w2", uniform(rng, {8, 48, 1, 1})),
                  b.constant("b2", uniform(rng, {8}))),
           "y");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {1, 16, 8, 8})});
}

// Llama's attention scores: [1,H,T,d] x [1,H,d,T] / sqrt(d) + a [1,1,T,T]
// mask. oneDNN 2.6's brgemm MatMul takes the scalar Div as a post-op but not
// the mask broadcast along the heads (the 3-D product's batch): with both
// fused it took ref:any, 40 ms a product at T=128 against 0.1 ms, so the
// chain is cut before the mask. (A Gemm seed's post-ops also stayed shared
// with every chain tried: dnnl::post_ops is a handle.)
TEST(OnednnZooPatterns, AttentionMaskAddIsNoReferenceMatMul) {
  std::mt19937 rng(55);
  GraphBuilder b("scores");
  ValueId q = b.input("q", DType::kF32, Shape{1, 4, 16, 8});
  ValueId k = b.input("k", DType::kF32, Shape{1, 4, 8, 16});
  ValueId mask = b.input("mask", DType::kF32, Shape{1, 1, 16, 16});
  ValueId s = b.add(b.div(b.matmul(q, k), b.scalar_f32("scale", 2.8f)), mask);
  b.output(b.softmax(s), "p");
  const Graph g = *std::move(b).build();
  const std::vector<Tensor> in{uniform(rng, {1, 4, 16, 8}), uniform(rng, {1, 4, 8, 16}),
                               uniform(rng, {1, 1, 16, 16})};
  expect_matches_reference(g, in);
  PlanBuilder builder(g);
  auto plan = builder.build({{1, 4, 16, 8}, {1, 4, 8, 16}, {1, 1, 16, 16}});
  ASSERT_TRUE(plan) << plan.error().to_string();
  bool div_fused = false;
  for (const Step& step : (*plan)->steps) {
    if (step.own) continue;
    const char* impl = nullptr;
    ASSERT_EQ(dnnl_primitive_desc_query(step.prim.get_primitive_desc(), dnnl_query_impl_info_str, 0,
                                        &impl),
              dnnl_success);
    EXPECT_FALSE(std::string(impl).starts_with("ref")) << step.kind << ": " << impl;
    div_fused = div_fused || step.kind == "matmul+binary";
  }
  EXPECT_TRUE(div_fused) << (*plan)->describe();
}

}  // namespace
}  // namespace hone::onednn
