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

TEST(PadShape, SymbolicAxesKeepTheirDimOrBecomeAnExpressionOfIt) {
  const Dim seq = Dim::symbol("seq"), batch = Dim::symbol("batch");
  // RWKV's token shift, ZeroPad2d((0, 0, 1, -1)) over [batch, seq, 64]: seq stays seq.
  const auto shift = pad_shape({batch, seq, 64}, {0, 1, 0, 0, -1, 0}, nullptr).value();
  EXPECT_EQ(Shape(shift).to_string(), "[batch,seq,64]");
  const auto grown = pad_shape({batch, seq, 64}, {0, 2, 0, 0, 1, 1}, nullptr).value();
  EXPECT_EQ(Shape(grown).to_string(), "[batch,(seq+3),65]");
  const auto unknown = pad_shape({Dim::unknown(), 4}, {1, 0, 0, 0}, nullptr).value();
  EXPECT_TRUE(unknown[0].is_unknown());
}

TEST(PadSourceOffsets, EachModeReadsTheElementOnnxNames) {
  // [a b c d] padded 3 before and 2 after, as numpy.pad's modes do.
  const PadWindow w = pad_window({4}, {3, 2}, nullptr).value();
  auto offs = [&](const char* mode) { return pad_source_offsets({4}, w, mode).value()[0]; };
  EXPECT_EQ(offs("constant"), (Ints{-1, -1, -1, 0, 1, 2, 3, -1, -1}));
  EXPECT_EQ(offs("reflect"), (Ints{3, 2, 1, 0, 1, 2, 3, 2, 1}));  // d c b | a b c d | c b
  EXPECT_EQ(offs("edge"), (Ints{0, 0, 0, 0, 1, 2, 3, 3, 3}));
  EXPECT_EQ(offs("wrap"), (Ints{1, 2, 3, 0, 1, 2, 3, 0, 1}));
  // A pad past the axis reflects periodically; strides are the input's, and a
  // crop's start is counted in: [2, 3] cropped by one row, reflected by 2 columns.
  EXPECT_EQ(pad_source_offsets({2}, pad_window({2}, {3, 0}, nullptr).value(), "reflect").value()[0],
            (Ints{1, 0, 1, 0, 1}));
  const auto two_d =
      pad_source_offsets({2, 3}, pad_window({2, 3}, {-1, 2, 0, 0}, nullptr).value(), "reflect")
          .value();
  EXPECT_EQ(two_d[0], (Ints{3}));
  EXPECT_EQ(two_d[1], (Ints{2, 1, 0, 1, 2}));
}

TEST(PadSourceOffsets, RefusesUnknownModesAndPaddingAnEmptyAxis) {
  const PadWindow w = pad_window({4}, {1, 1}, nullptr).value();
  EXPECT_TRUE(fails_with(pad_source_offsets({4}, w, "mirror"), ErrorCode::kInvalidArgument,
                         "Pad mode 'mirror'"));
  const PadWindow empty = pad_window({0}, {1, 0}, nullptr).value();
  EXPECT_TRUE(fails_with(pad_source_offsets({0}, empty, "edge"), ErrorCode::kInvalidArgument,
                         "which is empty"));
  EXPECT_TRUE(pad_source_offsets({0}, empty, "constant"));
}

}  // namespace
}  // namespace hone::ops
