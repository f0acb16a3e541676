// Dims derived from a run-time length, as the audio and speech models both
// PyTorch exporters write them: a conv's output length ((seq-1)/2+1) meets
// a position table sliced by Shape -> Gather, a Reshape target concatenated
// from Shape entries, a Slice that trims a frame off a padded conv. The
// passes name each by its expression (ops/sym_int.h), aot reads the same
// expression, so every block compiles whole; run at several lengths against
// the reference. An input that breaks the arithmetic (edge_dims.h) is an
// error naming the dim, not a wrong result.
#include "aot_test_util.h"
#include "backends/aot/dim_expr.h"
#include "backends/aot/program.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_matches_reference;
using testing_util::uniform;

using testing_util::i64s;

/// Shape(x)[axis] as a 1-element i64 list, the way the TorchScript exporter
/// spells x.size(axis): Shape, Gather of a scalar, Unsqueeze.
ValueId size_of(GraphBuilder& b, ValueId x, int64_t axis, const std::string& tag) {
  ValueId s = b.op("Gather", {b.op("Shape", {x}), b.constant(tag + "_i", Tensor::scalar(axis))},
                   {{"axis", int64_t{0}}});
  return b.op("Unsqueeze", {s, b.constant(tag + "_ax", i64s({0}))});
}

GraphBuilder::ConvOptions conv1d(int64_t stride, int64_t pad, int64_t group = 1) {
  return {.strides = {stride}, .pads = {pad, pad}, .dilations = {1}, .group = group};
}

// Whisper's encoder stem: two convs (the second strided), then
// x + embed_positions[:x.size(1)], the table sliced by the conv's length.
TEST(AotDerivedDims, ConvLengthMeetsAPositionTableSlicedByShape) {
  std::mt19937 rng(71);
  GraphBuilder b("whisper_stem");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, Dim::symbol("seq")});
  ValueId h = b.gelu(b.conv(x, b.constant("w1", uniform(rng, {8, 4, 3})),
                            b.constant("b1", uniform(rng, {8})), conv1d(1, 1)));
  h = b.gelu(b.conv(h, b.constant("w2", uniform(rng, {8, 8, 3})),
                    b.constant("b2", uniform(rng, {8})), conv1d(2, 1)));
  const ValueId t = b.transpose(h, {0, 2, 1});  // [batch, (((seq-1)/2)+1), 8]
  const ValueId pos = b.op(
      "Slice", {b.constant("table", uniform(rng, {40, 8})), b.constant("s0", i64s({0})),
                size_of(b, t, 1, "len"), b.constant("a0", i64s({0})), b.constant("st", i64s({1}))});
  const ValueId y = b.layer_norm(b.add(t, pos), b.constant("g", uniform(rng, {8})),
                                 b.constant("beta", uniform(rng, {8})));
  b.output(y, "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> runs;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 20}, {2, 45}, {1, 7}})
    runs.push_back({uniform(rng, {batch, 4, seq})});
  expect_matches_reference(*g, runs, {{"dim_bounds", "batch=2,seq=60"}});
  auto be = build_aot(*g, {{"dim_bounds", "batch=2,seq=60"}});
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
}

// The Conformer's subsampling: two strided 2-D convs over [batch, 1, mels,
// seq], then x.transpose(1, 3).reshape(b, t, c * f) with the target built
// from Shape entries (one a product of two), then a projection.
TEST(AotDerivedDims, ReshapeToATargetOfStridedConvLengths) {
  std::mt19937 rng(72);
  GraphBuilder b("conformer_stem");
  const ValueId x =
      b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 1, 12, Dim::symbol("seq")});
  const GraphBuilder::ConvOptions s2{
      .strides = {2, 2}, .pads = {0, 0, 0, 0}, .dilations = {1, 1}, .group = 1};
  ValueId h = b.relu(b.conv(x, b.constant("w1", uniform(rng, {4, 1, 3, 3})),
                            b.constant("b1", uniform(rng, {4})), s2));
  h = b.relu(b.conv(h, b.constant("w2", uniform(rng, {4, 4, 3, 3})),
                    b.constant("b2", uniform(rng, {4})), s2));  // [batch, 4, 2, T]
  const ValueId t = b.transpose(h, {0, 3, 1, 2});
  const ValueId cf = b.mul(size_of(b, h, 1, "c"), size_of(b, h, 2, "f"));
  const ValueId target = b.concat({size_of(b, h, 0, "n"), size_of(b, h, 3, "t"), cf}, 0);
  const ValueId r = b.op("Reshape", {t, target});
  b.output(b.add(b.matmul(r, b.constant("proj", uniform(rng, {8, 6}))),
                 b.constant("pb", uniform(rng, {6}))),
           "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> runs;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 9}, {2, 30}, {1, 16}})
    runs.push_back({uniform(rng, {batch, 1, 12, seq})});
  expect_matches_reference(*g, runs, {{"dim_bounds", "batch=2,seq=40"}});
}

// wav2vec2's feature encoder and positional conv: samples unsqueezed to one
// channel, a conv of stride 5, then an even-kernel grouped conv padded by
// half its width, whose last frame is sliced off (x[:, :, :-1]) before the
// residual add.
TEST(AotDerivedDims, SliceTrimsAFrameOffAPaddedConvOverADerivedLength) {
  std::mt19937 rng(73);
  GraphBuilder b("wav2vec2_stem");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), Dim::symbol("seq")});
  const ValueId u = b.op("Unsqueeze", {x, b.constant("ax1", i64s({1}))});
  const ValueId f = b.gelu(b.conv(u, b.constant("w1", uniform(rng, {8, 1, 10})), kNoValue,
                                  conv1d(5, 0)));  // [batch, 8, (((seq-10)/5)+1)]
  const ValueId p = b.conv(f, b.constant("wp", uniform(rng, {8, 2, 4})),
                           b.constant("bp", uniform(rng, {8})), conv1d(1, 2, 4));
  const ValueId trimmed =
      b.op("Slice", {p, b.constant("s0", i64s({0})), b.constant("e", i64s({-1})),
                     b.constant("a2", i64s({2})), b.constant("st", i64s({1}))});
  b.output(b.transpose(b.add(f, b.gelu(trimmed)), {0, 2, 1}), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> runs;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 50}, {2, 83}, {1, 10}})
    runs.push_back({uniform(rng, {batch, seq})});
  expect_matches_reference(*g, runs, {{"dim_bounds", "batch=2,seq=100"}});
}

// Whisper's and the Conformer's attention output: [L, batch, C] (L the
// conv's length) flattened to [(L*batch), C] by a constant target, projected
// by a Gemm, then reshaped back to [L, batch, C] by a target concatenated
// from Shape entries. Neither L nor batch is a dim of the flattened input,
// so the target's dims are read as the block binds them (edge_dims.h's
// bound_symbol); before, the Reshape ran on the reference.
TEST(AotDerivedDims, ReshapeBackToAConvLengthAndBatchTheInputHasOnlyAsAProduct) {
  std::mt19937 rng(75);
  GraphBuilder b("whisper_attention_out");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, Dim::symbol("seq")});
  const ValueId h = b.conv(x, b.constant("w1", uniform(rng, {8, 4, 3})),
                           b.constant("b1", uniform(rng, {8})), conv1d(2, 1));
  const ValueId t = b.transpose(h, {2, 0, 1});  // [(((seq-1)/2)+1), batch, 8]
  const ValueId flat = b.reshape(t, {-1, 8});
  const ValueId proj =
      b.gemm(flat, b.constant("wo", uniform(rng, {8, 8})), b.constant("bo", uniform(rng, {8})));
  const ValueId target =
      b.concat({size_of(b, t, 0, "l"), size_of(b, t, 1, "n"), b.constant("c", i64s({8}))}, 0);
  const ValueId back = b.op("Reshape", {proj, target});
  b.output(b.add(b.transpose(back, {1, 0, 2}), b.transpose(h, {0, 2, 1})), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> runs;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 20}, {2, 45}, {3, 8}})
    runs.push_back({uniform(rng, {batch, 4, seq})});
  expect_matches_reference(*g, runs, {{"dim_bounds", "batch=3,seq=60"}});
  auto be = build_aot(*g, {{"dim_bounds", "batch=3,seq=60"}});
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
}

// wav2vec2's attention: heads folded into the batch, [(2*batch), L, 4], then
// unfolded to [batch, 2, L, 4] by a target built from the input's Shape
// entries: batch is a symbol of the model's input, not of the Reshape's.
TEST(AotDerivedDims, ReshapeUnfoldsHeadsFromABatchTheInputHasOnlyAsAProduct) {
  std::mt19937 rng(76);
  GraphBuilder b("wav2vec2_heads");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, Dim::symbol("seq")});
  const ValueId h =
      b.transpose(b.conv(x, b.constant("w1", uniform(rng, {8, 4, 3})), kNoValue, conv1d(2, 0)),
                  {0, 2, 1});  // [batch, L, 8]
  const ValueId n = size_of(b, h, 0, "n"), l = size_of(b, h, 1, "l");
  const ValueId two = b.constant("two", i64s({2})), four = b.constant("four", i64s({4}));
  const ValueId heads = b.transpose(b.op("Reshape", {h, b.concat({n, l, two, four}, 0)}),
                                    {0, 2, 1, 3});  // [batch, 2, L, 4]
  const ValueId folded = b.op("Reshape", {heads, b.concat({b.mul(n, two), l, four}, 0)});
  const ValueId att = b.matmul(b.softmax(b.matmul(folded, b.transpose(folded, {0, 2, 1}))), folded);
  const ValueId unfolded = b.op("Reshape", {att, b.concat({n, two, l, four}, 0)});
  b.output(b.add(b.transpose(unfolded, {0, 2, 1, 3}), b.reshape(h, {0, 0, 2, 4})), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  std::vector<std::vector<Tensor>> runs;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 20}, {2, 33}, {3, 5}})
    runs.push_back({uniform(rng, {batch, 4, seq})});
  expect_matches_reference(*g, runs, {{"dim_bounds", "batch=3,seq=40"}});
  auto be = build_aot(*g, {{"dim_bounds", "batch=3,seq=40"}});
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
}

// A block input whose dim the graph names by an expression of another
// input's symbol: the code reads it as that expression, and an input that
// does not hold it is refused naming the dim.
TEST(AotDerivedDims, AnInputBreakingTheArithmeticIsAnErrorNamingTheDim) {
  std::mt19937 rng(74);
  GraphBuilder b("two_inputs");
  const Dim t = Dim::symbol("(((seq-1)/2)+1)");
  const ValueId a = b.input("a", DType::kF32, Shape{1, 4, Dim::symbol("seq")});
  const ValueId e = b.input("e", DType::kF32, Shape{1, t, 4});
  const ValueId h = b.conv(a, b.constant("w", uniform(rng, {4, 4, 3})), kNoValue, conv1d(2, 1));
  b.output(b.add(b.transpose(h, {0, 2, 1}), e), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(*g,
                           {{uniform(rng, {1, 4, 9}), uniform(rng, {1, 5, 4})},
                            {uniform(rng, {1, 4, 30}), uniform(rng, {1, 15, 4})}},
                           {{"dim_bounds", "seq=40"}});
  auto be = build_aot(*g, {{"dim_bounds", "seq=40"}});
  ASSERT_TRUE(be);
  auto bad = be->infer({uniform(rng, {1, 4, 9}), uniform(rng, {1, 6, 4})});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("(((seq-1)/2)+1)"), std::string::npos)
      << bad.error().to_string();
  EXPECT_NE(bad.error().message().find("is 6"), std::string::npos) << bad.error().to_string();
}

TEST(AotDerivedDims, ExpressionsCompareByValueAndBoundSymbolsStayOpaque) {
  const DimExpr seq = DimExpr::symbol("seq");
  // A window's extent and the same dim read back from the graph's name.
  const DimExpr window = (seq - DimExpr(1)) / DimExpr(2) + DimExpr(1);
  auto named = dim_expr_of(Dim::symbol("(((seq-1)/2)+1)"),
                           [&](const std::string& s) -> std::optional<DimExpr> {
                             if (s == "seq") return seq;
                             return std::nullopt;
                           });
  ASSERT_TRUE(named);
  EXPECT_EQ(window, *named);
  EXPECT_FALSE(window == (seq + DimExpr(1)) / DimExpr(2));
  EXPECT_EQ(seq * DimExpr(4) + seq, DimExpr(5) * seq);
  EXPECT_TRUE(((seq + DimExpr(3)) - seq).is_const());
  // A derived name bound as a symbol of its own is not its expression: only
  // a check when the code runs makes them one (edge_dims.h).
  EXPECT_FALSE(DimExpr::symbol("(4*seq)") == seq * DimExpr(4));
  EXPECT_FALSE(DimExpr::symbol("a-b") == DimExpr::symbol("a") - DimExpr::symbol("b"));
}

}  // namespace
}  // namespace hone::aot
