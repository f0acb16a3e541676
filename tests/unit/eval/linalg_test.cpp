// Reference Gemm, MatMul, Det, MatMulInteger and QLinearMatMul against
// hand-computed values.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "linalg_test_util.h"

namespace hone {
namespace {

using lr_test::expect_near;
using lr_test::f32;
using lr_test::fails_with;
using lr_test::run1;
using lr_test::values;

TEST(LinalgMatMul, TwoByTwo) {
  auto y = run1("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 2}));
  expect_near(*y, {58, 64, 139, 154});
}

TEST(LinalgMatMul, OneDimensionalOperandsArePromotedAndDropped) {
  auto vm = run1("MatMul", {f32({2}, {1, 2}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(vm) << vm.error().to_string();
  EXPECT_EQ(vm->shape(), (std::vector<int64_t>{3}));
  expect_near(*vm, {9, 12, 15});
  auto mv = run1("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 0, -1})});
  ASSERT_TRUE(mv);
  EXPECT_EQ(mv->shape(), (std::vector<int64_t>{2}));
  expect_near(*mv, {-2, -2});
  auto vv = run1("MatMul", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  ASSERT_TRUE(vv);
  EXPECT_EQ(vv->rank(), 0u);
  expect_near(*vv, {32});
  // A 1-D operand against a batched one keeps the batch dims.
  auto bv = run1("MatMul", {lr_test::iota({2, 2, 3}), f32({3}, {1, 1, 1})});
  ASSERT_TRUE(bv);
  EXPECT_EQ(bv->shape(), (std::vector<int64_t>{2, 2}));
  expect_near(*bv, {3, 12, 21, 30});
}

TEST(LinalgMatMul, BatchDimsBroadcast) {
  // [2,1,2,2] x [3,2,1] -> [2,3,2,1]
  Tensor a = f32({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  Tensor b = f32({3, 2, 1}, {1, 2, 3, 4, 5, 6});
  auto y = run1("MatMul", {a, b});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 3, 2, 1}));
  expect_near(*y, {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12});
}

TEST(LinalgMatMul, LargeMatchesNaiveAcrossTiles) {
  const int64_t M = 9, K = 17, N = 300;  // N spans two 256-column tiles, M a partial row tile
  Tensor a = Tensor::zeros(DType::kF32, {M, K}), b = Tensor::zeros(DType::kF32, {K, N});
  for (int64_t i = 0; i < M * K; ++i) a.data<float>()[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < K * N; ++i) b.data<float>()[i] = static_cast<float>((i * 5) % 13) * 0.25f;
  auto y = run1("MatMul", {a, b});
  ASSERT_TRUE(y) << y.error().to_string();
  std::vector<double> want(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        want[static_cast<size_t>(i * N + j)] +=
            a.data<float>()[i * K + k] * b.data<float>()[k * N + j];
  expect_near(*y, want, 1e-4);
}

TEST(LinalgMatMul, LargeBroadcastBatchesMatchNaive) {
  // [3,1,40,33] x [2,33,70] -> [3,2,40,70]: each operand repeats along one batch dim,
  // large enough for the BLAS path, its row blocks and batch offsets.
  const int64_t M = 40, K = 33, N = 70;
  Tensor a = Tensor::zeros(DType::kF32, {3, 1, M, K}), b = Tensor::zeros(DType::kF32, {2, K, N});
  for (int64_t i = 0; i < a.numel(); ++i)
    a.data<float>()[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < b.numel(); ++i)
    b.data<float>()[i] = static_cast<float>((i * 5) % 13) * 0.25f;
  auto y = run1("MatMul", {a, b});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{3, 2, M, N}));
  std::vector<double> want(static_cast<size_t>(y->numel()), 0.0);
  for (int64_t p = 0; p < 3; ++p)
    for (int64_t q = 0; q < 2; ++q)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t k = 0; k < K; ++k)
            want[static_cast<size_t>(((p * 2 + q) * M + i) * N + j)] +=
                a.data<float>()[(p * M + i) * K + k] * b.data<float>()[(q * K + k) * N + j];
  expect_near(*y, want, 1e-4);
}

TEST(LinalgMatMul, BatchesOverOneWeightMatchNaive) {
  // [6,30,20] x [20,50]: every batch reads the same B, so the product runs as
  // one 180-row GEMM; rows of different batches must land in their places.
  const int64_t B = 6, M = 30, K = 20, N = 50;
  Tensor a = Tensor::zeros(DType::kF32, {B, M, K}), b = Tensor::zeros(DType::kF32, {K, N});
  for (int64_t i = 0; i < a.numel(); ++i)
    a.data<float>()[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < b.numel(); ++i)
    b.data<float>()[i] = static_cast<float>((i * 5) % 13) * 0.25f;
  auto y = run1("MatMul", {a, b});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{B, M, N}));
  std::vector<double> want(static_cast<size_t>(y->numel()), 0.0);
  for (int64_t r = 0; r < B * M; ++r)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        want[static_cast<size_t>(r * N + j)] +=
            a.data<float>()[r * K + k] * b.data<float>()[k * N + j];
  expect_near(*y, want, 1e-4);
}

TEST(LinalgMatMul, Int64IsExact) {
  const int64_t big = (int64_t{1} << 40) + 3;
  auto y = run1("MatMul", {lr_test::i64({1, 2}, {big, 1}), lr_test::i64({2, 1}, {3, -7})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{big * 3 - 7}));
  auto i32 = run1("MatMul", {lr_test::t<int32_t>({2, 2}, {1, -2, 3, 4}),
                             lr_test::t<int32_t>({2, 2}, {5, 6, 7, 8})});
  ASSERT_TRUE(i32);
  EXPECT_EQ(values<int32_t>(*i32), (std::vector<int32_t>{-9, -10, 43, 50}));
}

TEST(LinalgMatMul, EmptyInnerDimGivesZeros) {
  auto y = run1("MatMul", {Tensor::zeros(DType::kF32, {2, 0}), Tensor::zeros(DType::kF32, {0, 3})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 3}));
  expect_near(*y, {0, 0, 0, 0, 0, 0});
}

TEST(LinalgMatMul, Errors) {
  EXPECT_TRUE(
      fails_with(run1("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 2}, {1, 2, 3, 4})}),
                 "inner dimensions"));
  EXPECT_TRUE(fails_with(run1("MatMul", {lr_test::iota({2, 1, 2}), lr_test::iota({3, 2, 1})}),
                         "broadcast"));
  EXPECT_TRUE(fails_with(run1("MatMul", {Tensor::scalar(1.0f), f32({1}, {1})}), "rank"));
}

TEST(LinalgGemm, TransposesAlphaBetaAndBias) {
  // A is given as Aᵀ [K=2, M=3]; B as Bᵀ [N=2, K=2].
  Tensor at = f32({2, 3}, {1, 3, 5, 2, 4, 6});  // A = [[1,2],[3,4],[5,6]]
  Tensor bt = f32({2, 2}, {1, 0, 1, 1});        // B = [[1,1],[0,1]]
  Tensor c = f32({2}, {10, 20});
  auto y = run1("Gemm", {at, bt, c},
                {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 2.0f}, {"beta", 0.5f}});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{3, 2}));
  // A·B = [[1,3],[3,7],[5,11]]; 2·AB + 0.5·c
  expect_near(*y, {7, 16, 11, 24, 15, 32});
}

TEST(LinalgGemm, BiasShapesBroadcastUnidirectionally) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {1, 0, 0, 1});
  auto none = run1("Gemm", {a, b});
  ASSERT_TRUE(none) << none.error().to_string();
  expect_near(*none, {1, 2, 3, 4});
  auto scalar = run1("Gemm", {a, b, Tensor::scalar(1.0f)});
  ASSERT_TRUE(scalar);
  expect_near(*scalar, {2, 3, 4, 5});
  auto column = run1("Gemm", {a, b, f32({2, 1}, {10, 20})});
  ASSERT_TRUE(column);
  expect_near(*column, {11, 12, 23, 24});
  auto full = run1("Gemm", {a, b, f32({2, 2}, {1, 1, 1, 1})}, {{"beta", 0.0f}});
  ASSERT_TRUE(full);
  expect_near(*full, {1, 2, 3, 4});
  EXPECT_TRUE(fails_with(run1("Gemm", {a, b, f32({3}, {1, 2, 3})}), "cannot be broadcast"));
  EXPECT_TRUE(fails_with(run1("Gemm", {a, f32({3, 2}, {1, 2, 3, 4, 5, 6})}), "inner dimensions"));
  EXPECT_TRUE(fails_with(run1("Gemm", {lr_test::iota({2}), b}), "2-D"));
}

TEST(LinalgGemm, Opset6BroadcastZeroNeedsFullC) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {1, 0, 0, 1});
  EXPECT_TRUE(fails_with(run1("Gemm", {a, b, f32({2}, {1, 1})}, {}, 6), "broadcast=0"));
  auto ok = run1("Gemm", {a, b, f32({2}, {1, 1})}, {{"broadcast", int64_t{1}}}, 6);
  ASSERT_TRUE(ok) << ok.error().to_string();
  expect_near(*ok, {2, 3, 4, 5});
}

TEST(LinalgGemm, IntegerIsExact) {
  const int64_t big = int64_t{1} << 50;
  auto y = run1("Gemm",
                {lr_test::i64({1, 1}, {big}), lr_test::i64({1, 1}, {3}), lr_test::i64({1}, {1})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{3 * big + 1}));
}

TEST(LinalgDet, SmallBatchedAndSingular) {
  auto d2 = run1("Det", {f32({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(d2) << d2.error().to_string();
  EXPECT_EQ(d2->rank(), 0u);
  expect_near(*d2, {-2});
  // Needs a pivot swap (leading zero); det = -(1·(1·1 - 0)) ... computed by hand: 0,1,2 / 1,0,3 /
  // 4,-3,8 → -2
  auto d3 = run1("Det", {f32({2, 3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8,  //
                                         2, 0, 0, 0, 3, 0, 0, 0, 4})});
  ASSERT_TRUE(d3) << d3.error().to_string();
  EXPECT_EQ(d3->shape(), (std::vector<int64_t>{2}));
  expect_near(*d3, {-2, 24});
  auto sing = run1("Det", {f32({2, 2}, {1, 2, 2, 4})});
  ASSERT_TRUE(sing);
  expect_near(*sing, {0});
  EXPECT_TRUE(fails_with(run1("Det", {lr_test::iota({2, 3})}), "[..., M, M]"));
}

TEST(LinalgMatMulInteger, ZeroPointsScalarAndPerRowColumn) {
  Tensor a = lr_test::t<uint8_t>({2, 2}, {10, 12, 14, 16});
  Tensor b = lr_test::t<int8_t>({2, 2}, {1, -1, 2, 3});
  auto plain = run1("MatMulInteger", {a, b});
  ASSERT_TRUE(plain) << plain.error().to_string();
  EXPECT_EQ(plain->dtype(), DType::kI32);
  EXPECT_EQ(values<int32_t>(*plain), (std::vector<int32_t>{34, 26, 46, 34}));
  // a - 10 = [[0,2],[4,6]]; b - [1, 2] per column = [[0,-3],[1,1]]
  auto zp =
      run1("MatMulInteger", {a, b, Tensor::scalar<uint8_t>(10), lr_test::t<int8_t>({2}, {1, 2})});
  ASSERT_TRUE(zp) << zp.error().to_string();
  EXPECT_EQ(values<int32_t>(*zp), (std::vector<int32_t>{2, 2, 6, -6}));
  // Per-row zero point of A: rows minus 10 and 14 → [[0,2],[0,2]]
  auto row = run1("MatMulInteger", {a, b, lr_test::t<uint8_t>({2}, {10, 14})});
  ASSERT_TRUE(row) << row.error().to_string();
  EXPECT_EQ(values<int32_t>(*row), (std::vector<int32_t>{4, 6, 4, 6}));
  EXPECT_TRUE(fails_with(run1("MatMulInteger", {a, b, lr_test::t<int8_t>({1}, {1})}), "dtype"));
}

TEST(LinalgQLinearMatMul, OnnxSpecExample) {
  Tensor a = lr_test::t<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
  Tensor b = lr_test::t<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
  auto y = run1("QLinearMatMul", {a, f32({1}, {0.0066f}), lr_test::t<uint8_t>({1}, {113}), b,
                                  f32({1}, {0.00705f}), lr_test::t<uint8_t>({1}, {114}),
                                  f32({1}, {0.0107f}), lr_test::t<uint8_t>({1}, {118})});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->dtype(), DType::kU8);
  EXPECT_EQ(values<uint8_t>(*y), (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
  EXPECT_TRUE(fails_with(run1("QLinearMatMul", {a, f32({1}, {1.0f})}), "8 inputs"));
}

}  // namespace
}  // namespace hone
