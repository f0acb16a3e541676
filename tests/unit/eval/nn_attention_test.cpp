// Attention's parts ONNX Runtime 1.30 cannot check (tests/conformance/
// newer_opsets checks the rest against it): opset 25's sliding window, a
// mask shorter than the keys (padded with -inf), and the refusals. With
// Q = 0 every score is equal, so Y is the mean of the attended keys' V.
#include <gtest/gtest.h>

#include "nn_test_util.h"

namespace hone::nn_test {
namespace {

/// V[0, 0, j, 0] = j, so a uniform softmax over keys S gives mean(S).
Tensor key_index_values(int64_t keys) {
  return iota({1, 1, keys, 1});
}

Result<Tensor> uniform_attention(int64_t queries, int64_t keys,
                                 std::map<std::string, Attribute> attrs, int64_t opset,
                                 Tensor mask = Tensor()) {
  const Tensor q = Tensor::zeros(DType::kF32, {1, 1, queries, 2});
  const Tensor k = iota({1, 1, keys, 2});
  std::vector<Tensor> in{q, k, key_index_values(keys)};
  if (mask.defined()) in.push_back(mask);
  return run1("Attention", in, std::move(attrs), opset);
}

TEST(NnAttention, SlidingWindowBothSides) {
  // The spec's example: 4 queries, 6 keys, left 2, right 1, offset 0.
  auto y = uniform_attention(
      4, 6, {{"left_window_size", int64_t{2}}, {"right_window_size", int64_t{1}}}, 25);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 4, 1}, {0.5f, 1.0f, 1.5f, 2.5f});  // {0,1} {0,1,2} {0..3} {1..4}
}

TEST(NnAttention, SlidingWindowWithCausal) {
  // Causal with left 1: query i attends keys i-1 and i of the 5 (offset 0).
  auto y =
      uniform_attention(5, 5, {{"is_causal", int64_t{1}}, {"left_window_size", int64_t{1}}}, 25);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 5, 1}, {0.0f, 0.5f, 1.5f, 2.5f, 3.5f});
  // Before opset 25 there is no window: plain causal means.
  auto old =
      uniform_attention(3, 3, {{"is_causal", int64_t{1}}, {"left_window_size", int64_t{0}}}, 23);
  ASSERT_TRUE(old) << old.error().to_string();
  expect_values(*old, {1, 1, 3, 1}, {0.0f, 0.5f, 1.0f});
}

TEST(NnAttention, SlidingWindowIsRelativeToThePastLength) {
  // 3 cached keys and 2 new ones: query i sits at absolute position 3 + i
  // and, causal with left 1, attends keys 2 + i and 3 + i.
  const Tensor q = Tensor::zeros(DType::kF32, {1, 1, 2, 2});
  auto y = run1("Attention",
                {q, iota({1, 1, 2, 2}), iota({1, 1, 2, 1}, 3.0f), Tensor(), iota({1, 1, 3, 2}),
                 iota({1, 1, 3, 1})},
                {{"is_causal", int64_t{1}}, {"left_window_size", int64_t{1}}}, 25);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 2, 1}, {2.5f, 3.5f});
}

TEST(NnAttention, ShortMaskIsPaddedWithMinusInfinity) {
  // A 2-key float mask for 4 keys: keys 2 and 3 are masked out.
  auto y = uniform_attention(2, 4, {}, 23, f32({2}, {0.0f, 0.0f}));
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 2, 1}, {0.5f, 0.5f});
  Tensor b = Tensor::zeros(DType::kBool, {1, 3});
  b.data<bool>()[0] = b.data<bool>()[2] = true;
  auto yb = uniform_attention(1, 4, {}, 23, b);
  ASSERT_TRUE(yb) << yb.error().to_string();
  expect_values(*yb, {1, 1, 1, 1}, {1.0f});  // keys 0 and 2
}

TEST(NnAttention, FullyMaskedRowIsZero) {
  Tensor b = Tensor::zeros(DType::kBool, {2, 3});
  b.data<bool>()[3] = true;  // row 0 attends nothing, row 1 key 0
  auto y = uniform_attention(2, 3, {}, 23, b);
  ASSERT_TRUE(y) << y.error().to_string();
  expect_values(*y, {1, 1, 2, 1}, {0.0f, 0.0f});
}

TEST(NnAttention, BadInputsAreErrors) {
  const Tensor x3 = iota({1, 2, 4});
  auto no_heads = run1("Attention", {x3, x3, x3}, {}, 23);
  EXPECT_TRUE(fails_with(no_heads, ErrorCode::kInvalidArgument, "q_num_heads"));
  const Tensor q = iota({1, 3, 2, 2}), kv = iota({1, 2, 2, 2});
  auto heads = run1("Attention", {q, kv, kv}, {}, 23);  // 2 K/V heads do not divide 3
  EXPECT_TRUE(fails_with(heads, ErrorCode::kInvalidArgument, "divide"));
  auto past = run1("Attention", {kv, kv, kv, Tensor(), kv}, {}, 23);
  EXPECT_TRUE(fails_with(past, ErrorCode::kInvalidArgument, "together"));
}

}  // namespace
}  // namespace hone::nn_test
