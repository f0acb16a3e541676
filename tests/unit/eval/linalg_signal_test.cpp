// Reference DFT, STFT, MelWeightMatrix and window ops against hand-computed
// transforms and window formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "linalg_test_util.h"

namespace hone {
namespace {

using lr_test::expect_near;
using lr_test::f32;
using lr_test::fails_with;
using lr_test::run1;

TEST(Dft, RealForwardOnesidedAndInverse) {
  Tensor x = f32({1, 4, 1}, {1, 2, 3, 4});
  auto full = run1("DFT", {x});
  ASSERT_TRUE(full) << full.error().to_string();
  EXPECT_EQ(full->shape(), (std::vector<int64_t>{1, 4, 2}));
  expect_near(*full, {10, 0, -2, 2, -2, 0, -2, -2}, 1e-5);
  auto half = run1("DFT", {x}, {{"onesided", int64_t{1}}});
  ASSERT_TRUE(half);
  EXPECT_EQ(half->shape(), (std::vector<int64_t>{1, 3, 2}));
  expect_near(*half, {10, 0, -2, 2, -2, 0}, 1e-5);
  auto back = run1("DFT", {*full}, {{"inverse", int64_t{1}}});
  ASSERT_TRUE(back) << back.error().to_string();
  expect_near(*back, {1, 0, 2, 0, 3, 0, 4, 0}, 1e-5);
}

TEST(Dft, DftLengthPadsAndOtherAxis) {
  Tensor x = f32({1, 2, 1}, {1, 1});
  auto y = run1("DFT", {x, Tensor::scalar<int64_t>(4)});
  ASSERT_TRUE(y) << y.error().to_string();
  // [1,1,0,0] → X = [2, 1-i, 0, 1+i]
  expect_near(*y, {2, 0, 1, -1, 0, 0, 1, 1}, 1e-6);
  // Axis 2 of a [1, 1, 2, 2] complex input: transform each length-2 row.
  Tensor c = f32({1, 1, 2, 2}, {1, 1, 0, 1});  // (1+i), (0+i)
  auto z = run1("DFT", {c}, {{"axis", int64_t{2}}});
  ASSERT_TRUE(z) << z.error().to_string();
  expect_near(*z, {1, 2, 1, 0}, 1e-6);
  EXPECT_TRUE(fails_with(run1("DFT", {x}, {{"axis", int64_t{2}}}), "axis"));
}

TEST(Stft, FramesWithAndWithoutWindow) {
  Tensor sig = lr_test::iota({1, 8, 1});
  auto y = run1("STFT", {sig, Tensor::scalar<int64_t>(4), Tensor(), Tensor::scalar<int64_t>(4)});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 2, 3, 2}));
  expect_near(*y, {6, 0, -2, 2, -2, 0, 22, 0, -2, 2, -2, 0}, 1e-5);
  auto w = run1("STFT", {sig, Tensor::scalar<int64_t>(4), f32({4}, {0, 1, 1, 0})});
  ASSERT_TRUE(w) << w.error().to_string();
  // frame 0 windowed: [0, 1, 2, 0] → X0 = 3, X1 = -2 - i, X2 = 1
  EXPECT_EQ(w->shape(), (std::vector<int64_t>{1, 2, 3, 2}));
  expect_near(*w, {3, 0, -2, -1, 1, 0, 11, 0, -6, -5, 1, 0}, 1e-5);
  EXPECT_TRUE(fails_with(run1("STFT", {sig, Tensor::scalar<int64_t>(4)}), "frame_length"));
}

TEST(Windows, PeriodicSymmetricAndDtype) {
  auto hann = run1("HannWindow", {Tensor::scalar<int64_t>(4)});
  ASSERT_TRUE(hann) << hann.error().to_string();
  EXPECT_EQ(hann->dtype(), DType::kF32);
  expect_near(*hann, {0, 0.5, 1, 0.5}, 1e-6);
  auto sym = run1("HannWindow", {Tensor::scalar<int32_t>(4)}, {{"periodic", int64_t{0}}});
  ASSERT_TRUE(sym);
  expect_near(*sym, {0, 0.75, 0.75, 0}, 1e-6);
  auto ham =
      run1("HammingWindow", {Tensor::scalar<int64_t>(4)}, {{"output_datatype", int64_t{11}}});
  ASSERT_TRUE(ham);
  EXPECT_EQ(ham->dtype(), DType::kF64);
  expect_near(*ham, {4.0 / 46, 25.0 / 46, 1, 25.0 / 46}, 1e-12);
  auto bl = run1("BlackmanWindow", {Tensor::scalar<int64_t>(4)});
  ASSERT_TRUE(bl);
  expect_near(*bl, {0, 0.34, 1, 0.34}, 1e-6);
  EXPECT_TRUE(fails_with(run1("HannWindow", {Tensor::scalar<int64_t>(-1)}), "size"));
  EXPECT_TRUE(fails_with(
      run1("HannWindow", {Tensor::scalar<int64_t>(2)}, {{"output_datatype", int64_t{99}}}),
      "output_datatype", ErrorCode::kUnsupported));
}

TEST(MelWeightMatrix, SmallBank) {
  // Edges land on DFT bins [0, 0, 1, 2] (see the ONNX definition).
  auto y = run1("MelWeightMatrix",
                {Tensor::scalar<int64_t>(2), Tensor::scalar<int64_t>(8),
                 Tensor::scalar<int64_t>(8000), Tensor::scalar(0.0f), Tensor::scalar(4000.0f)});
  ASSERT_TRUE(y) << y.error().to_string();
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{5, 2}));
  expect_near(*y, {1, 0, 0, 1, 0, 0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace hone
