// ops::pad_window: ONNX Pad's pads and axes resolved once, and its errors.
#include "ops/pad.h"

#include <gtest/gtest.h>

#include "ops/shape_fn_test_util.h"

namespace hone::ops {
namespace {

using namespace shape_fn_test;  // Ints, fails_with

TEST(PadWindow, EveryAxisBeforeThenAfter) {
  const PadWindow w = pad_window({2, 3}, {1, 0, 2, 4}, nullptr).value();
  EXPECT_EQ(w.begin, (Ints{1, 0}));
  EXPECT_EQ(w.end, (Ints{2, 4}));
  EXPECT_EQ(w.out, (Ints{5, 7}));
  EXPECT_EQ(w.kept_from, (Ints{0, 0}));
  EXPECT_EQ(w.kept, (Ints{2, 3}));
  EXPECT_TRUE(w.pads_any());
}

TEST(PadWindow, NegativePadsCropAndAxesNameTheirAxes) {
  // Opset 18's axes, one negative: pads are for axis 2 then axis 0.
  const Ints axes{-1, 0};
  const PadWindow w = pad_window({4, 5, 6}, {-1, 0, 2, -3}, &axes).value();
  EXPECT_EQ(w.begin, (Ints{0, 0, -1}));
  EXPECT_EQ(w.end, (Ints{-3, 0, 2}));
  EXPECT_EQ(w.out, (Ints{1, 5, 7}));
  EXPECT_EQ(w.kept_from, (Ints{0, 0, 1}));
  EXPECT_EQ(w.kept, (Ints{1, 5, 5}));
  EXPECT_TRUE(w.pads_any());
  // Only crops: no element is a pad value.
  EXPECT_FALSE(pad_window({4}, {-1, -1}, nullptr).value().pads_any());
  // Empty axes: nothing padded.
  const Ints none;
  EXPECT_EQ(pad_window({4, 2}, {}, &none).value().out, (Ints{4, 2}));
}

TEST(PadWindow, ErrorsNameTheValues) {
  EXPECT_TRUE(fails_with(pad_window({2, 3}, {1, 1}, nullptr), ErrorCode::kInvalidArgument,
                         "Pad pads [1,1] must have 4 entries"));
  EXPECT_TRUE(fails_with(pad_window({2}, {-3, 0}, nullptr), ErrorCode::kInvalidArgument,
                         "crop axis 0 of input shape [2] below zero"));
  const Ints twice{0, 0}, out_of_range{2};
  EXPECT_TRUE(fails_with(pad_window({2, 3}, {0, 0, 0, 0}, &twice), ErrorCode::kInvalidArgument,
                         "Pad axes"));
  EXPECT_TRUE(fails_with(pad_window({2, 3}, {0, 0}, &out_of_range), ErrorCode::kInvalidArgument,
                         "Pad axes"));
  EXPECT_TRUE(fails_with(pad_window({2}, {int64_t{1} << 41, 0}, nullptr),
                         ErrorCode::kInvalidArgument, "too large"));
}

}  // namespace
}  // namespace hone::ops
