// Attention on cuda as one unit (ops_attention.cpp): the fused kernels (f32
// SIMT; bf16/f16 tensor cores) and the unfused path each match the reference
// in every precision, on the pattern torch's SDPA export writes (scalar Muls
// on Q and Kᵀ, a Transpose making Kᵀ, an additive mask broadcast over heads
// and query rows) and on a plain one (Kᵀ given, a Div after the product, no
// mask, more keys than queries); attention_select names the path. Skips
// without a device, naming why.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "backends/cuda/attention_kernels.h"
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

/// torch's nn.MultiheadAttention as the torchscript exporter writes it (vit_b_16's
/// encoder): x [S, batch, E] through the packed QKV product and bias, unflattened
/// to [S, batch, 3, E], Unsqueeze(0), Transpose(0, -2), Squeeze, then per head
/// group a Gather of 0, 1 or 2, Reshape [S, batch·H, D], Transpose(0, 1) and
/// Reshape [batch, H, S, D]; SDPA's scale computed from Shape(q) (a Shape node
/// reads the chain) on q and Kᵀ; the heads merged back by Transpose + Reshape.
/// `shared_reader`: a Relu of the packed Transpose is an output too (the
/// chains must then start after it). `dynamo_kt`: Kᵀ as the dynamo exporter
/// writes it, Reshape [batch·H, S, D], Transpose(0, 2, 1), Reshape [batch, H,
/// D, S] (K's chain is then 11 views long, Q's and V's 8).
Graph mha_export(std::mt19937& rng, int64_t S, int64_t H, int64_t D, bool shared_reader = false,
                 bool dynamo_kt = false) {
  const int64_t E = H * D;
  GraphBuilder b("mha");
  auto i64 = [&](std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return b.constant("", Tensor::from<int64_t>({n}, std::move(v)));
  };
  ValueId x = b.input("x", DType::kF32, Shape{S, Dim::symbol("batch"), E});
  ValueId qkv = b.add(b.matmul(x, b.constant("w", uniform(rng, {E, 3 * E}, -0.2f, 0.2f))),
                      b.constant("bias", uniform(rng, {3 * E})));
  ValueId r = b.op("Reshape", {qkv, i64({0, 0, 3, E})});
  ValueId t = b.transpose(b.op("Unsqueeze", {r, i64({0})}), {3, 1, 2, 0, 4});
  ValueId sq = b.op("Squeeze", {t, i64({3})});
  if (shared_reader) b.output(b.relu(t), "packed");
  auto head = [&](int64_t i) {
    ValueId g = b.op("Gather", {sq, b.constant("", Tensor::from<int64_t>({}, {i}))},
                     {{"axis", int64_t{0}}});
    ValueId t1 = b.transpose(b.op("Reshape", {g, i64({S, -1, D})}), {1, 0, 2});
    return b.op("Reshape", {t1, i64({-1, H, S, D})});
  };
  ValueId q = head(0), k = head(1), v = head(2);
  ValueId d = b.op("Cast", {b.op("Slice", {b.op("Shape", {q}), i64({-1}), i64({INT64_MAX})})},
                   {{"to", int64_t{1}}});
  ValueId sc =
      b.op("Sqrt", {b.div(b.constant("", Tensor::from<float>({1}, {1.0f})), b.op("Sqrt", {d}))});
  const ValueId kt =
      dynamo_kt ? b.op("Reshape", {b.transpose(b.op("Reshape", {k, i64({-1, S, D})}), {0, 2, 1}),
                                   i64({-1, H, D, S})})
                : b.transpose(k, {0, 1, 3, 2});
  ValueId o = b.matmul(b.softmax(b.matmul(b.mul(q, sc), b.mul(kt, sc))), v);
  b.output(b.op("Reshape", {b.transpose(o, {2, 0, 1, 3}), i64({0, 0, E})}), "y");
  return *std::move(b).build();
}

struct Case {
  const char* precision;
  double rtol, atol;
  const char* fused;  // the fused kernel's id for head dim 64
};
// bf16/f16: Q, K, V and the probabilities rounded to 8 (11) bits, f32 sums.
constexpr Case kCases[] = {{"fp32", 1e-4, 1e-5, "attention.f32.cuda.fused_mma3xtf32"},
                           {"tf32", 5e-3, 1e-3, "attention.tf32.cuda.fused_mma"},
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
  // 3 products and softmax, Div, Add(mask), 3 x (Reshape, Transpose), the merge
  // Transpose and its Reshape (the unit's output, row-major at rank 3).
  EXPECT_EQ(sp.members.size(), 13u);
  EXPECT_GE(sp.out_reshape, 0);
  for (NodeId id : sp.members) EXPECT_EQ(info.attention_of[static_cast<size_t>(id)], 0);

  // vit's packed QKV: the three chains share the unflatten and its Transpose,
  // start at the QKV bias Add, go through one-index Gathers and a Shape reader.
  const Graph mha = mha_export(rng, 9, 2, 32);
  BlockInfo mi(mha);
  find_attention_units(mi);
  ASSERT_EQ(mi.attention.size(), 1u);
  const AttentionSpec& ms = mi.attention[0];
  for (ValueId v : {ms.q, ms.k, ms.v}) EXPECT_EQ(mha.node(mha.value(v).producer).op_type, "Add");
  // Reshape, Unsqueeze, Transpose, Squeeze, Gather, Reshape, Transpose, Reshape.
  EXPECT_EQ(ms.q_chain.size(), 8u);
  EXPECT_EQ(ms.k_chain.size(), 8u);
  EXPECT_EQ(ms.v_chain.size(), 8u);
  EXPECT_EQ(ms.scale_values.size(), 2u);
  EXPECT_GE(ms.out_transpose, 0);
  EXPECT_GE(ms.out_reshape, 0);
  for (const Node& n : mha.nodes()) {
    if (n.op_type != "Shape") continue;
    EXPECT_EQ(mi.attention_of[static_cast<size_t>(mi.node_id(n))], -1);
  }
  for (NodeId id : ms.q_chain) EXPECT_TRUE(ms.in_chain(id));
  auto ref = eval::Interpreter().run_tensors(mha, {uniform(rng, {9, 2, 64})});
  ASSERT_TRUE(ref) << ref.error().to_string();
  EXPECT_EQ((*ref)[0].shape(), (std::vector<int64_t>{9, 2, 64}));
  // The dynamo exporter's form: K's chain is longer than Q's and V's; all three
  // still start at the QKV bias Add (none at a value a member makes).
  const Graph dyn = mha_export(rng, 9, 2, 32, false, true);
  BlockInfo di(dyn);
  find_attention_units(di);
  ASSERT_EQ(di.attention.size(), 1u);
  const AttentionSpec& ds = di.attention[0];
  for (ValueId v : {ds.q, ds.k, ds.v}) EXPECT_EQ(dyn.node(dyn.value(v).producer).op_type, "Add");
  EXPECT_EQ(ds.q_chain.size(), 8u);
  EXPECT_EQ(ds.k_chain.size(), 11u);
  auto dref = eval::Interpreter().run_tensors(dyn, {uniform(rng, {9, 2, 64})});
  ASSERT_TRUE(dref) << dref.error().to_string();
  EXPECT_EQ((*dref)[0].shape(), (std::vector<int64_t>{9, 2, 64}));
  // A reader outside the unit (an output Relu of the packed Transpose): the
  // chains start after it, at the Squeeze.
  const Graph shared = mha_export(rng, 9, 2, 32, true);
  BlockInfo si2(shared);
  find_attention_units(si2);
  ASSERT_EQ(si2.attention.size(), 1u);
  const AttentionSpec& ss = si2.attention[0];
  EXPECT_EQ(ss.q_chain.size(), 5u);  // Squeeze, Gather, Reshape, Transpose, Reshape
  EXPECT_EQ(shared.node(shared.value(ss.q).producer).op_type, "Transpose");

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
      auto be =
          expect_matches_reference(g, sdpa_inputs(rng, batch, 64), c.rtol, c.atol,
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
      auto be =
          expect_matches_reference(g, {uniform(rng, {batch, 77, 128}), mask}, c.rtol, c.atol,
                                   {{"precision", c.precision}, {"attention_select", "fused"}});
      const std::string plan = plan_text(*be);
      EXPECT_NE(plan.find(c.fused), std::string::npos) << plan;
      EXPECT_EQ(plan.find("transpose."), std::string::npos) << plan;  // no head copies
    }
  }
}

TEST(CudaAttention, PackedQkvIsReadInPlaceWithoutHeadCopies) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(26);
  const Graph g = mha_export(rng, 77, 3, 64);
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.precision);
    for (int64_t batch : {1, 3}) {
      auto be =
          expect_matches_reference(g, {uniform(rng, {77, batch, 192})}, c.rtol, c.atol,
                                   {{"precision", c.precision}, {"attention_select", "fused"}});
      const std::string plan = plan_text(*be);
      EXPECT_NE(plan.find(c.fused), std::string::npos) << plan;
      EXPECT_EQ(plan.find("transpose."), std::string::npos) << plan;  // no head copies
      EXPECT_NE(plan.find("dims.read_in_place_by_attention"), std::string::npos) << plan;
    }
  }
  // Timed against the unfused path (which makes the copies), still right.
  expect_matches_reference(g, {uniform(rng, {77, 2, 192})}, 5e-3, 1e-3,
                           {{"precision", "tf32"}, {"attention_select", "time"}});
}

TEST(CudaAttention, DynamoExportersPackedQkvMatchesTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(27);
  const Graph g = mha_export(rng, 50, 3, 64, false, true);
  for (const char* select : {"fused", "unfused"}) {
    SCOPED_TRACE(select);
    auto be = expect_matches_reference(g, {uniform(rng, {50, 2, 192})}, 1e-4, 1e-5,
                                       {{"precision", "fp32"}, {"attention_select", select}});
    std::printf("%s\n", plan_text(*be).c_str());
  }
}

TEST(CudaAttention, HeadDim32WithKtGivenAndMoreKeysThanQueries) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(22);
  const Graph g = plain_attention();
  const std::vector<Tensor> in = {uniform(rng, {2, 50, 32}), uniform(rng, {2, 32, 130}),
                                  uniform(rng, {2, 130, 32})};
  auto f32 = expect_matches_reference(g, in, 1e-4, 1e-5, {{"attention_select", "fused"}});
  EXPECT_NE(plan_text(*f32).find("attention.f32.cuda.fused_mma3xtf32"), std::string::npos)
      << plan_text(*f32);
  auto bf16 = expect_matches_reference(g, in, 3e-2, 3e-2,
                                       {{"precision", "bf16"}, {"attention_select", "fused"}});
  EXPECT_NE(plan_text(*bf16).find("attention.bf16.cuda.fused_mma"), std::string::npos)
      << plan_text(*bf16);
}

// Every kernel of the attention module on one problem, against a host
// reference in double: two batch dims, 77 query rows and 130 keys (partial
// tiles), a mask broadcast over heads and rows with padded keys, K read
// through Kᵀ (strided: scalar loads) or contiguous (float4 loads), V through a
// head-split view, O poisoned with NaN first.
TEST(CudaAttention, EveryKernelMatchesAHostReference) {
  HONE_REQUIRE_CUDA();
  auto drv = Driver::get();
  ASSERT_TRUE(drv) << drv.error().to_string();
  const Driver& d = **drv;
  if (d.cc_major() < 8) GTEST_SKIP() << "the mma kernels need sm_80 or newer";
  ASSERT_TRUE(d.make_current());
  auto module = attention_module(d);
  ASSERT_TRUE(module) << module.error().to_string();
  auto stream = Stream::create(d);
  ASSERT_TRUE(stream) << stream.error().to_string();
  const Api& api = d.api();
  struct Kernel {
    const char* name;
    int64_t dim;
    unsigned threads;
    double tol;  // relative L2 against the f64 reference
  };
  const Kernel kernels[] = {
      {"hone_attn_simt_32", 32, 64, 1e-5},        {"hone_attn_simt_64", 64, 64, 1e-5},
      {"hone_attn_3xtf32_32", 32, 128, 1e-5},     {"hone_attn_3xtf32_64", 64, 128, 1e-5},
      {"hone_attn_tf32_32", 32, 128, 3e-3},       {"hone_attn_tf32_64", 64, 128, 3e-3},
      {"hone_attn_mma_32_bf16", 32, 128, 2e-2},   {"hone_attn_mma_64_bf16", 64, 128, 2e-2},
      {"hone_attn_mma_128_bf16", 128, 128, 2e-2}, {"hone_attn_mma_32_f16", 32, 128, 3e-3},
      {"hone_attn_mma_64_f16", 64, 128, 3e-3},    {"hone_attn_mma_128_f16", 128, 128, 3e-3}};
  constexpr int64_t B0 = 2, B1 = 3, Sq = 77, Sk = 130;
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Kernel& kn : kernels) {
    for (bool kt : {false, true}) {
      SCOPED_TRACE(std::string(kn.name) + (kt ? " (Kt stored)" : " (K stored)"));
      const int64_t D = kn.dim;
      std::vector<float> q(B0 * B1 * Sq * D), k(B0 * B1 * Sk * D), v(B0 * Sk * B1 * D),
          mask(B0 * Sk);
      for (auto* x : {&q, &k, &v})
        for (float& e : *x) e = u(rng);
      for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 7 == 3 ? -1e4f : u(rng) - 1.0f;
      const float scale = 1.0f / std::sqrt(static_cast<float>(D));
      // Element accessors of the logical [b0, b1, row, d] operands.
      auto K = [&](int64_t b0, int64_t b1, int64_t j, int64_t e) {
        const int64_t b = b0 * B1 + b1;
        return kt ? k[(b * D + e) * Sk + j] : k[(b * Sk + j) * D + e];
      };
      auto V = [&](int64_t b0, int64_t b1, int64_t j, int64_t e) {
        return v[((b0 * Sk + j) * B1 + b1) * D + e];
      };
      std::vector<double> want(q.size());
      for (int64_t b0 = 0; b0 < B0; ++b0)
        for (int64_t b1 = 0; b1 < B1; ++b1)
          for (int64_t r = 0; r < Sq; ++r) {
            const float* qr = &q[((b0 * B1 + b1) * Sq + r) * D];
            std::vector<double> sc(Sk);
            double mx = -std::numeric_limits<double>::infinity(), sum = 0;
            for (int64_t j = 0; j < Sk; ++j) {
              double acc = 0;
              for (int64_t e = 0; e < D; ++e) acc += double(qr[e]) * scale * K(b0, b1, j, e);
              sc[j] = acc + mask[b0 * Sk + j];
              mx = std::max(mx, sc[j]);
            }
            for (double& x : sc) sum += (x = std::exp(x - mx));
            for (int64_t e = 0; e < D; ++e) {
              double acc = 0;
              for (int64_t j = 0; j < Sk; ++j) acc += sc[j] * V(b0, b1, j, e);
              want[((b0 * B1 + b1) * Sq + r) * D + e] = acc / sum;
            }
          }
      auto up = [&](const std::vector<float>& h) {
        auto buf = DeviceBuffer::allocate(d, h.size() * sizeof(float));
        EXPECT_TRUE(buf);
        EXPECT_TRUE(d.check(api.cuMemcpyHtoD(buf->ptr(), h.data(), h.size() * sizeof(float)),
                            "cuMemcpyHtoD"));
        return std::move(*buf);
      };
      DeviceBuffer dq = up(q), dk = up(k), dv = up(v), dm = up(mask);
      std::vector<float> poison(q.size(), std::numeric_limits<float>::quiet_NaN());
      DeviceBuffer dout = up(poison);
      AttnArgs a;
      a.nb = 2;
      a.bdims[0] = B0;
      a.bdims[1] = B1;
      a.len_q = Sq;
      a.len_k = Sk;
      a.scale = scale;
      a.sq[0] = B1 * Sq * D, a.sq[1] = Sq * D, a.q_row = D, a.q_col = 1;
      a.so[0] = B1 * Sq * D, a.so[1] = Sq * D, a.o_row = D, a.o_col = 1;
      if (kt)
        a.sk[0] = B1 * D * Sk, a.sk[1] = D * Sk, a.k_row = 1, a.k_col = Sk;
      else
        a.sk[0] = B1 * Sk * D, a.sk[1] = Sk * D, a.k_row = D, a.k_col = 1;
      a.sv[0] = Sk * B1 * D, a.sv[1] = D, a.v_row = B1 * D, a.v_col = 1;
      a.has_mask = 1;
      a.sm[0] = Sk, a.sm[1] = 0, a.mask_r = 0, a.mask_c = 1;
      a.q = dq.ptr(), a.k = dk.ptr(), a.v = dv.ptr(), a.mask = dm.ptr(), a.o = dout.ptr();
      a.vec = vector_access(a);
      EXPECT_EQ(a.vec & 1, kt ? 0 : 1);
      EXPECT_EQ(a.vec & 6, 6);
      auto f = (*module)->function(kn.name);
      ASSERT_TRUE(f) << f.error().to_string();
      ASSERT_TRUE(launch_grid(d, *f, stream->get(), B0 * B1 * ((Sq + kAttnRows - 1) / kAttnRows), 1,
                              1, kn.threads, 1, {&a}));
      std::vector<float> got(q.size());
      ASSERT_TRUE(d.check(
          api.cuMemcpyDtoHAsync(got.data(), dout.ptr(), got.size() * sizeof(float), stream->get()),
          "cuMemcpyDtoHAsync"));
      ASSERT_TRUE(d.check(api.cuStreamSynchronize(stream->get()), "cuStreamSynchronize"));
      double diff = 0, norm = 0;
      size_t unwritten = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (!std::isfinite(got[i])) ++unwritten;
        diff += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
      }
      EXPECT_EQ(unwritten, 0u);
      EXPECT_LE(std::sqrt(diff / norm), kn.tol);
    }
  }
}

TEST(CudaAttention, UnfusedPathAndTimedChoiceMatchTheReference) {
  HONE_REQUIRE_CUDA();
  std::mt19937 rng(23);
  const Graph g = sdpa_export(64);
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.precision);
    // The unit's unfused candidate: the members' own kernels, one after another.
    auto unit =
        expect_matches_reference(g, sdpa_inputs(rng, 2, 64), c.rtol, c.atol,
                                 {{"precision", c.precision}, {"attention_select", "time"}});
    const std::string plan = plan_text(*unit);
    EXPECT_NE(plan.find("attention"), std::string::npos) << plan;
    // attention_select=unfused: no attention unit at all.
    auto nodes =
        expect_matches_reference(g, sdpa_inputs(rng, 2, 64), c.rtol, c.atol,
                                 {{"precision", c.precision}, {"attention_select", "unfused"}});
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
