// Attention on cuda as one unit (ops_attention.cpp): the fused kernels (f32
// SIMT; bf16/f16 tensor cores) and the unfused path each match the reference
// in every precision, on the pattern torch's SDPA export writes (scalar Muls
// on Q and Kᵀ, a Transpose making Kᵀ, an additive mask broadcast over heads
// and query rows) and on a plain one (Kᵀ given, a Div after the product, no
// mask, more keys than queries); attention_select names the path. Skips
// without a device, naming why.
#include <cmath>

#include "backends/cuda/op.h"
#include "cuda_test_util.h"

namespace hone::cuda {
namespace {

using testing_util::expect_matches_reference;
using testing_util::plan_text;
using testing_util::uniform;

/// softmax((q·c)·(kᵀ·c) + mask)·v over [batch, 3 heads, 77, d], c = d^-1/4.
Graph sdpa_export(int64_t d) {
  GraphBuilder b("sdpa");
  auto dims = [&](int64_t s) { return Shape{Dim::symbol("batch"), 3, s, d}; };
  ValueId q = b.input("q", DType::kF32, dims(77));
  ValueId k = b.input("k", DType::kF32, dims(77));
  ValueId v = b.input("v", DType::kF32, dims(77));
  ValueId mask = b.input("mask", DType::kF32, Shape{Dim::symbol("batch"), 1, 1, 77});
  const float c = 1.0f / std::sqrt(std::sqrt(static_cast<float>(d)));
  ValueId qs = b.mul(q, b.scalar_f32("", c));
  ValueId kt = b.mul(b.transpose(k, {0, 1, 3, 2}), b.scalar_f32("", c));
  ValueId p = b.softmax(b.add(b.matmul(qs, kt), mask));
  b.output(b.matmul(p, v), "o");
  return *std::move(b).build();
}

/// softmax(q·kt / sqrt(32))·v with q [2, 50, 32], kt [2, 32, 130], v [2, 130, 32].
Graph plain_attention() {
  GraphBuilder b("plain");
  ValueId q = b.input("q", DType::kF32, Shape{2, 50, 32});
  ValueId kt = b.input("kt", DType::kF32, Shape{2, 32, 130});
  ValueId v = b.input("v", DType::kF32, Shape{2, 130, 32});
  ValueId s = b.div(b.matmul(q, kt), b.scalar_f32("", std::sqrt(32.0f)));
  b.output(b.matmul(b.softmax(s), v), "o");
  return *std::move(b).build();
}

/// A bert-like layer: q, k, v projections (MatMul + bias) split into 2 heads
/// of 64 by Reshape + Transpose (Kᵀ by one Transpose), scores / 8 + mask,
/// softmax, · v, heads merged back by Transpose + Reshape.
Graph bert_heads(std::mt19937& rng) {
  GraphBuilder b("heads");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 77, 128});
  ValueId mask = b.input("mask", DType::kF32, Shape{Dim::symbol("batch"), 1, 1, 77});
  auto proj = [&](const char* w) {
    ValueId y = b.add(b.matmul(x, b.constant(w, uniform(rng, {128, 128}, -0.2f, 0.2f))),
                      b.constant(std::string(w) + "_b", uniform(rng, {128})));
    return b.op("Reshape", {y, b.constant("", Tensor::from<int64_t>({4}, {0, 77, 2, 64}))});
  };
  ValueId q = b.transpose(proj("wq"), {0, 2, 1, 3});
  ValueId kt = b.transpose(proj("wk"), {0, 2, 3, 1});
  ValueId v = b.transpose(proj("wv"), {0, 2, 1, 3});
  ValueId s = b.add(b.div(b.matmul(q, kt), b.scalar_f32("", 8.0f)), mask);
  ValueId o = b.transpose(b.matmul(b.softmax(s), v), {0, 2, 1, 3});
  b.output(b.op("Reshape", {o, b.constant("", Tensor::from<int64_t>({3}, {0, 77, 128}))}), "y");
  return *std::move(b).build();
}

struct Case {
  const char* precision;
  double rtol, atol;
  const char* fused;  // the fused kernel's id for head dim 64
};
// bf16/f16: Q, K, V and the probabilities rounded to 8 (11) bits, f32 sums.
constexpr Case kCases[] = {{"fp32", 1e-4, 1e-5, "attention.f32.cuda.fused_simt"},
                           {"tf32", 5e-3, 1e-3, "attention.f32.cuda.fused_simt"},
                           {"bf16", 3e-2, 3e-2, "attention.bf16.cuda.fused_mma"},
                           {"fp16", 1e-2, 1e-2, "attention.f16.cuda.fused_mma"}};

std::vector<Tensor> sdpa_inputs(std::mt19937& rng, int64_t batch, int64_t d) {
  Tensor mask = uniform(rng, {batch, 1, 1, 77}, -2.0f, 0.0f);
  float* m = mask.data<float>();
  for (int64_t i = 0; i < batch * 77; i += 5) m[i] = -1e4f;  // padded keys
  return {uniform(rng, {batch, 3, 77, d}), uniform(rng, {batch, 3, 77, d}),
          uniform(rng, {batch, 3, 77, d}), mask};
}

// --- what the unit takes, decided on the graph (no device needed) ---------

TEST(CudaAttention, ViewsRestrideWithoutCopies) {
  // vit's head split: [S, B, E] -> [S, B*H, D] -> (transpose) [B*H, S, D] -> [B, H, S, D].
  const dims_t src{197, 32, 768};
  auto split = restride(src, strides_of(src), {197, 384, 64});
  ASSERT_TRUE(split);
  EXPECT_EQ(*split, (dims_t{24576, 64, 1}));
  auto heads = restride({384, 197, 64}, {64, 24576, 1}, {32, 12, 197, 64});
  ASSERT_TRUE(heads);
  EXPECT_EQ(*heads, (dims_t{768, 64, 24576, 1}));
  // Merging dims a transpose separated needs a copy.
  EXPECT_FALSE(restride({384, 197, 64}, {64, 24576, 1}, {384 * 197, 64}));
  EXPECT_FALSE(restride({2, 3}, {1, 2}, {6}));
  // Size-1 dims take any stride; element counts must agree.
  auto ones = restride({1, 4}, {999, 1}, {4, 1});
  ASSERT_TRUE(ones);
  EXPECT_EQ((*ones)[0], 1);
  EXPECT_FALSE(restride({2, 3}, {3, 1}, {5}));
}

TEST(CudaAttention, UnitReadsThroughHeadSplitsAndScales) {
  std::mt19937 rng(25);
  const Graph g = bert_heads(rng);
  BlockInfo info(g);
  find_attention_units(info);
  ASSERT_EQ(info.attention.size(), 1u);
  const AttentionSpec& sp = info.attention[0];
  EXPECT_TRUE(sp.k_transposed);  // Kᵀ made by a (0, 2, 3, 1) Transpose, read through
  EXPECT_EQ(sp.q_chain.size(), 2u);
  EXPECT_EQ(sp.k_chain.size(), 2u);
  EXPECT_EQ(sp.v_chain.size(), 2u);
  EXPECT_GE(sp.out_transpose, 0);
  EXPECT_EQ(g.value(sp.mask).name, "mask");
  EXPECT_NEAR(sp.scale, 1.0 / 8.0, 1e-9);
  for (ValueId v : {sp.q, sp.k, sp.v}) EXPECT_EQ(g.node(g.value(v).producer).op_type, "Add");
  // 3 products and softmax, Div, Add(mask), 3 x (Reshape, Transpose), the merge Transpose.
  EXPECT_EQ(sp.members.size(), 12u);
  for (NodeId id : sp.members) EXPECT_EQ(info.attention_of[static_cast<size_t>(id)], 0);

  const Graph s = sdpa_export(64);
  BlockInfo si(s);
  find_attention_units(si);
  ASSERT_EQ(si.attention.size(), 1u);
  EXPECT_FALSE(si.attention[0].k_transposed);  // the swap Transpose is absorbed
  EXPECT_EQ(si.attention[0].scale_values.size(), 2u);
  EXPECT_EQ(s.value(si.attention[0].k).name, "k");
  EXPECT_EQ(si.attention[0].out_transpose, -1);
}

TEST(CudaAttention, FusedKernelsMatchTheReferenceInEveryPrecision) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(21);
  const Graph g = sdpa_export(64);
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.precision);
    for (int64_t batch : {1, 2}) {
      auto be = expect_matches_reference(g, sdpa_inputs(rng, batch, 64), c.rtol, c.atol,
                                         {{"precision", c.precision}, {"attention_select", "fused"}});
      const std::string plan = plan_text(*be);
      EXPECT_NE(plan.find(c.fused), std::string::npos) << plan;
      EXPECT_EQ(plan.find("softmax.f32"), std::string::npos) << plan;
    }
  }
}

TEST(CudaAttention, FusedKernelsReadSplitHeadsInPlace) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(24);
  const Graph g = bert_heads(rng);
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.precision);
    for (int64_t batch : {1, 3}) {
      Tensor mask = uniform(rng, {batch, 1, 1, 77}, -1.0f, 0.0f);
      auto be = expect_matches_reference(g, {uniform(rng, {batch, 77, 128}), mask}, c.rtol,
                                         c.atol,
                                         {{"precision", c.precision}, {"attention_select", "fused"}});
      const std::string plan = plan_text(*be);
      EXPECT_NE(plan.find(c.fused), std::string::npos) << plan;
      EXPECT_EQ(plan.find("transpose."), std::string::npos) << plan;  // no head copies
    }
  }
}

TEST(CudaAttention, HeadDim32WithKtGivenAndMoreKeysThanQueries) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(22);
  const Graph g = plain_attention();
  const std::vector<Tensor> in = {uniform(rng, {2, 50, 32}), uniform(rng, {2, 32, 130}),
                                  uniform(rng, {2, 130, 32})};
  auto f32 = expect_matches_reference(g, in, 1e-4, 1e-5, {{"attention_select", "fused"}});
  EXPECT_NE(plan_text(*f32).find("attention.f32.cuda.fused_simt"), std::string::npos)
      << plan_text(*f32);
  auto bf16 = expect_matches_reference(g, in, 3e-2, 3e-2,
                                       {{"precision", "bf16"}, {"attention_select", "fused"}});
  EXPECT_NE(plan_text(*bf16).find("attention.bf16.cuda.fused_mma"), std::string::npos)
      << plan_text(*bf16);
}

TEST(CudaAttention, UnfusedPathAndTimedChoiceMatchTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(23);
  const Graph g = sdpa_export(64);
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.precision);
    // The unit's unfused candidate: the members' own kernels, one after another.
    auto unit = expect_matches_reference(g, sdpa_inputs(rng, 2, 64), c.rtol, c.atol,
                                         {{"precision", c.precision}, {"attention_select", "time"}});
    const std::string plan = plan_text(*unit);
    EXPECT_NE(plan.find("attention"), std::string::npos) << plan;
    // attention_select=unfused: no attention unit at all.
    auto nodes = expect_matches_reference(g, sdpa_inputs(rng, 2, 64), c.rtol, c.atol,
                                          {{"precision", c.precision},
                                           {"attention_select", "unfused"}});
    EXPECT_EQ(plan_text(*nodes).find("attention"), std::string::npos) << plan_text(*nodes);
    EXPECT_NE(plan_text(*nodes).find("softmax.f32"), std::string::npos) << plan_text(*nodes);
  }
  // Head dim 16 has no fused kernel: the unit runs its unfused path.
  const Graph g16 = sdpa_export(16);
  auto be = expect_matches_reference(g16, sdpa_inputs(rng, 2, 16), 1e-4, 1e-5,
                                     {{"attention_select", "fused"}});
  EXPECT_NE(plan_text(*be).find("attention.unfused["), std::string::npos) << plan_text(*be);
}

}  // namespace
}  // namespace hone::cuda
