// Concat in place (lower_shape.cpp's concat_in_place, buffers.cpp): sources
// whose part of the output is one run of bytes are written straight into it
// by the steps that make them, DenseNet's growing concats into one buffer;
// the rest are reordered into their parts. Results match the reference in
// both conv layouts, with and without the copies.
#include <cmath>
#include <functional>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::close;
using testing_util::uniform;

/// Chains of wide convs sum hundreds of products in another order than the
/// reference: a little more rounding than close()'s default allows, while a
/// source written into the wrong part would be off by whole units.
::testing::AssertionResult near(const Tensor& a, const Tensor& e) {
  return close(a, e, 1e-3, 1e-4);
}

size_t count_steps(const Plan& p, const std::string& kind) {
  size_t n = 0;
  for (const Step& s : p.steps) n += s.kind == kind;
  return n;
}

/// A dense block in small: x0 = relu(conv(x)); each layer reads the concat
/// of x0 and every layer's output so far (through Relu and a 3x3 conv) and
/// adds 16 channels; the block's output is the last concat, through a 1x1 conv.
/// The first layer's concat has one source: a slice of its output in any layout.
Graph dense_block(std::mt19937& rng, Dim batch, int layers) {
  GraphBuilder b("dense");
  ValueId x = b.input("x", DType::kF32, Shape{batch, 16, 10, 10});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t k) {
    const int64_t p = k / 2;
    const float s = 1.0f / std::sqrt(static_cast<float>(cin * k * k));  // values stay O(1)
    return b.conv(in, b.constant("", uniform(rng, {cout, cin, k, k}, -s, s)),
                  b.constant("", uniform(rng, {cout})), {.pads = {p, p, p, p}});
  };
  std::vector<ValueId> features{b.relu(conv(x, 16, 32, 3))};
  for (int i = 0; i < layers; ++i) {
    ValueId joined = b.op("Concat", features, {{"axis", int64_t{1}}});
    features.push_back(conv(b.relu(joined), 32 + 16 * i, 16, 3));
  }
  ValueId all = b.op("Concat", features, {{"axis", int64_t{1}}});
  b.output(conv(all, 32 + 16 * layers, 16, 1), "y");
  return *std::move(b).build();
}

/// Builds `g` for `dims` in both conv layouts and compares every output with
/// the reference; `check` sees each plan.
void expect_both_layouts_match(const Graph& g, const std::vector<Tensor>& in,
                               const std::function<void(const Plan&, bool)>& check) {
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  std::vector<dims_t> dims;
  for (const Tensor& t : in) dims.push_back(t.shape());
  for (bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "nChw16c" : "oneDNN's pick");
    PlanBuilder builder(g);
    builder.set_prefer_blocked16(blocked);
    // The plans' shapes are checked: no timed nhwc trial of a conv.
    builder.set_layout_trials(false);
    auto plan = builder.build(dims);
    ASSERT_TRUE(plan) << plan.error().to_string();
    EXPECT_TRUE(builder.has_channel_concat());
    std::atomic<uint64_t> executions{0};
    for (int run = 0; run < 2; ++run) {  // the second run reuses the arena
      auto got = (*plan)->run(in, &executions);
      ASSERT_TRUE(got) << got.error().to_string();
      ASSERT_EQ(got->size(), want->size());
      for (size_t i = 0; i < want->size(); ++i)
        EXPECT_TRUE(near((*got)[i], (*want)[i])) << "output " << i << ": " << (*plan)->describe();
    }
    check(**plan, blocked);
  }
}

TEST(OnednnConcatInPlace, DenseBlockOnNChw16cAtBatchOneCopiesNothing) {
  std::mt19937 rng(1);
  Graph g = dense_block(rng, 1, 4);
  expect_both_layouts_match(g, {uniform(rng, {1, 16, 10, 10})}, [](const Plan& p, bool blocked) {
    // On nChw16c every channel range of 16 is one run of bytes at batch 1:
    // the convs write into the last concat's buffer, and no step copies.
    if (blocked) {
      EXPECT_EQ(count_steps(p, "concat"), 0u) << p.describe();
      EXPECT_LE(count_steps(p, "reorder"), 2u) << p.describe();  // the block's input and output
    }
  });
}

TEST(OnednnConcatInPlace, DenseBlockAtBatchTwoStillJoinsByCopies) {
  // At batch 2 a channel range is strided: the concat primitive joins all
  // but the first layer's single source.
  std::mt19937 rng(2);
  Graph g = dense_block(rng, 2, 3);
  expect_both_layouts_match(g, {uniform(rng, {2, 16, 10, 10})}, [](const Plan& p, bool) {
    EXPECT_EQ(count_steps(p, "concat"), 3u) << p.describe();
  });
}

TEST(OnednnConcatInPlace, SourcesThatCannotStayAreCopiedIntoTheirParts) {
  // The block's input (plain, not a temporary), one value twice, a value
  // that is also a block output, and a value a later residual Add reads: the
  // convs' outputs go in place where they can, the rest is reordered in.
  std::mt19937 rng(3);
  GraphBuilder b("mixed");
  ValueId x = b.input("x", DType::kF32, Shape{1, 16, 6, 6});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout) {
    const float s = 1.0f / std::sqrt(static_cast<float>(cin * 9));
    return b.relu(b.conv(in, b.constant("", uniform(rng, {cout, cin, 3, 3}, -s, s)),
                         b.constant("", uniform(rng, {cout})), {.pads = {1, 1, 1, 1}}));
  };
  ValueId a = conv(x, 16, 16), c = conv(a, 16, 32);
  ValueId joined = b.op("Concat", {x, a, c, a}, {{"axis", int64_t{1}}});
  ValueId mixed = conv(joined, 80, 16);
  b.output(c, "c");
  b.output(b.add(mixed, a), "y");
  Graph g = *std::move(b).build();
  expect_both_layouts_match(g, {uniform(rng, {1, 16, 6, 6})}, [](const Plan& p, bool blocked) {
    if (blocked) EXPECT_EQ(count_steps(p, "concat"), 0u) << p.describe();
  });
}

TEST(OnednnConcatInPlace, PlainRowsJoinInPlaceAndTheBackendMatches) {
  // Gemm outputs [1, 8] joined on the last axis are plain runs of bytes in
  // any layout choice; the backend (both plans timed) matches too.
  std::mt19937 rng(4);
  GraphBuilder b("rows");
  ValueId x = b.input("x", DType::kF32, Shape{1, 12});
  ValueId p = b.relu(b.gemm(x, b.constant("w1", uniform(rng, {12, 8})), kNoValue));
  ValueId q = b.sigmoid(b.gemm(x, b.constant("w2", uniform(rng, {12, 8})), kNoValue));
  ValueId joined = b.op("Concat", {p, q}, {{"axis", int64_t{1}}});
  b.output(b.gemm(joined, b.constant("w3", uniform(rng, {16, 4})), kNoValue), "y");
  Graph g = *std::move(b).build();
  std::vector<Tensor> in{uniform(rng, {1, 12})};
  auto want = eval::Interpreter().run_tensors(g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  PlanBuilder builder(g);
  auto plan = builder.build({{1, 12}});
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(count_steps(**plan, "concat"), 0u) << (*plan)->describe();
  EXPECT_EQ(count_steps(**plan, "reorder"), 0u) << (*plan)->describe();
  std::atomic<uint64_t> executions{0};
  auto got = (*plan)->run(in, &executions);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(near((*got)[0], (*want)[0]));

  std::mt19937 rng2(5);
  Graph dense = dense_block(rng2, Dim::symbol("batch"), 2);
  auto be = build_onednn(dense);
  eval::Interpreter ref;
  for (int64_t n : {1, 2}) {
    std::vector<Tensor> xin{uniform(rng2, {n, 16, 10, 10})};
    auto out = be->infer(xin);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_TRUE(near((*out)[0], (*ref.run_tensors(dense, xin))[0])) << "batch " << n;
  }
  EXPECT_EQ(be->fallback_runs(), 0u);
}

}  // namespace
}  // namespace hone::onednn
