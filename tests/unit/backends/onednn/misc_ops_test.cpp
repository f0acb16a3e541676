// The zoo's patterns that oneDNN 2.6 has no primitive for (lower_misc.cpp),
// each kept in one oneDNN block instead of splitting it around the reference:
// CLIP's pooling at the argmax of the token ids, DGCNN's neighbours by TopK
// gathered through computed flat indices, a diffusion model's sinusoidal
// timestep embedding, ESPCN's PixelShuffle (DepthToSpace).
#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::expect_matches_reference;
using testing_util::uniform;

/// Every node on onednn, one plan, and its description naming `step`.
void expect_one_block_with(const OnednnBackend& be, const Graph& g, const std::string& step) {
  EXPECT_TRUE(backend_test::all_nodes_on_backend(be, g));
  const std::vector<std::string> plans = be.plan_descriptions();
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_NE(plans[0].find(step), std::string::npos) << plans[0];
}

void expect_same(OnednnBackend& be, const Graph& g, const std::vector<Tensor>& in) {
  auto got = be.infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_TRUE(testing_util::close((*got)[i], (*want)[i])) << "output " << i;
}

// CLIP: the hidden state of each row's largest token id (ArgMax of the i64
// ids, read at run time), offset by the row's start and gathered.
TEST(OnednnMiscOps, PoolingAtTheArgmaxOfRunTimeIds) {
  std::mt19937 rng(81);
  GraphBuilder b("clip_pool");
  ValueId x = b.input("x", DType::kF32, Shape{2, 5, 8});
  ValueId ids = b.input("ids", DType::kI64, Shape{2, 5});
  ValueId at = b.op("ArgMax", {ids}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  ValueId rows = b.constant("row_start", Tensor::from<int64_t>({2}, {0, 5}));
  ValueId flat = b.add(at, rows);
  ValueId table = b.reshape(b.relu(x), {10, 8});
  ValueId pooled = b.op("Gather", {table, flat});
  b.output(b.matmul(pooled, b.constant("proj", uniform(rng, {8, 3}))), "y");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  const Tensor xv = uniform(rng, {2, 5, 8});
  for (const std::vector<int64_t>& v : {std::vector<int64_t>{3, 9, 9, 1, 0, 7, 2, 8, 8, 1},
                                        std::vector<int64_t>{0, 0, 0, 0, 0, 5, 4, 3, 2, 6}})
    expect_same(*be, g, {xv, Tensor::from<int64_t>({2, 5}, v)});
  expect_one_block_with(*be, g, "argmax");
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// DGCNN: each point's nearest neighbours by TopK of negated distances, their
// features gathered by flat indices made from TopK's i64 output.
TEST(OnednnMiscOps, NeighboursByTopKGatheredByComputedIndices) {
  std::mt19937 rng(82);
  GraphBuilder b("knn");
  ValueId p = b.input("p", DType::kF32, Shape{1, 12, 3});
  ValueId d = b.matmul(p, b.transpose(p, {0, 2, 1}));  // [1, 12, 12]: larger = nearer
  auto topk = b.op_n("TopK", {d, b.constant("k", Tensor::from<int64_t>({1}, {4}))}, 2,
                     {{"axis", int64_t{-1}}});
  ValueId flat =
      b.reshape(b.add(topk[1], b.constant("base", Tensor::from<int64_t>({1}, {0}))), {48});
  ValueId nb = b.op("Gather", {b.reshape(p, {12, 3}), flat});
  b.output(b.op("ReduceMax", {b.reshape(nb, {12, 4, 3})}, {{"axes", std::vector<int64_t>{1}}}),
           "y");
  b.output(topk[0], "values");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  expect_same(*be, g, {uniform(rng, {1, 12, 3})});
  expect_one_block_with(*be, g, "topk");
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// A diffusion model's timestep embedding: cos and sin of t times frequencies.
TEST(OnednnMiscOps, SinusoidalTimestepEmbedding) {
  std::mt19937 rng(83);
  GraphBuilder b("temb");
  ValueId t = b.input("t", DType::kF32, Shape{3, 1});
  ValueId args = b.mul(t, b.constant("freqs", uniform(rng, {1, 8})));
  ValueId emb = b.concat({b.op("Cos", {args}), b.op("Sin", {args})}, 1);
  b.output(b.matmul(emb, b.constant("w", uniform(rng, {16, 4}))), "y");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {Tensor::from<float>({3, 1}, {0.0f, 17.5f, 999.0f})});
  auto be = build_onednn(g);
  expect_one_block_with(*be, g, "math");
}

// ESPCN: a conv to bs*bs channels, then PixelShuffle (DepthToSpace, DCR or
// CRD). With known spatial dims the graph pass writes it as reshapes and a
// transpose; with an image size known only at run time onednn reorders a
// strided view itself (lower_misc.cpp), planned per size.
TEST(OnednnMiscOps, PixelShuffleAfterAConv) {
  std::mt19937 rng(84);
  for (const bool dynamic : {false, true})
    for (const char* mode : {"DCR", "CRD"}) {
      SCOPED_TRACE(std::string(mode) + (dynamic ? " dynamic" : " static"));
      GraphBuilder b("espcn");
      ValueId x =
          b.input("x", DType::kF32,
                  dynamic ? Shape{1, 2, Dim::symbol("h"), Dim::symbol("w")} : Shape{1, 2, 5, 6});
      ValueId y = b.conv(x, b.constant("w", uniform(rng, {9, 2, 1, 1})),
                         b.constant("bias", uniform(rng, {9})));
      b.output(b.op("DepthToSpace", {y}, {{"blocksize", int64_t{3}}, {"mode", std::string(mode)}}),
               "y");
      const Graph g = *std::move(b).build();
      expect_matches_reference(g, {uniform(rng, {1, 2, 5, 6})});
      if (dynamic) {
        auto be = build_onednn(g);
        expect_same(*be, g, {uniform(rng, {1, 2, 3, 7})});
        expect_one_block_with(*be, g, "reorder");
      }
    }
}

// Integer arithmetic in a graph without inferred dtypes: the plan sees the
// Cast's i64 and adds the integers itself (a binary primitive would read
// their bytes as u8); the sum is exact past 2^24, where f32 would round.
TEST(OnednnMiscOps, UntypedIntegerAddIsExact) {
  GraphBuilder b("untyped");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3});
  ValueId i = b.op("Cast", {x}, {{"to", int64_t{7}}});
  b.output(b.add(i, b.constant("big", Tensor::from<int64_t>({1}, {int64_t{1} << 40}))), "y");
  Graph g = *std::move(b).build();
  for (const Node& n : g.nodes())
    for (ValueId o : n.outputs) g.value(o).dtype = DType::kUndefined;
  auto plan = PlanBuilder(g).build({{2, 3}});
  ASSERT_TRUE(plan) << plan.error().to_string();
  auto be = build_onednn(g);
  const std::vector<Tensor> in{Tensor::from<float>({2, 3}, {-2.5f, -1.0f, 0.5f, 1.5f, 2.9f, 3.0f})};
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  EXPECT_TRUE((*got)[0].bitwise_equal((*want)[0])) << (*got)[0].describe();
  EXPECT_EQ(be->fallback_runs(), 0u);
}

// What lower_misc cannot take is refused with the reason, not run wrongly.
TEST(OnednnMiscOps, RefusalsSayWhy) {
  GraphBuilder b("refuse");
  ValueId x = b.input("x", DType::kF32, Shape{2, 8, 3, 3});
  ValueId k = b.input("k", DType::kI64, Shape{1});
  auto topk = b.op_n("TopK", {b.reshape(x, {2, 72}), k}, 2, {{"axis", int64_t{-1}}});
  b.output(topk[0], "values");
  b.output(b.op("DepthToSpace", {x}, {{"blocksize", int64_t{2}}, {"mode", std::string("XYZ")}}),
           "d2s");
  const Graph g = *std::move(b).build();
  OnednnBackend be;
  ASSERT_TRUE(be.configure("min_block_size", "1"));
  auto plan = be.plan(g);
  ASSERT_TRUE(plan) << plan.error().to_string();
  std::string reasons;
  for (const auto& [id, why] : plan->fallbacks) reasons += why + "\n";
  EXPECT_NE(reasons.find("K is neither a constant nor computed from dims"), std::string::npos)
      << reasons;
  EXPECT_NE(reasons.find("is 'XYZ', not DCR or CRD"), std::string::npos) << reasons;
}

}  // namespace
}  // namespace hone::onednn
