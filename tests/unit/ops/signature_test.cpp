// hone's rows for the ai.onnx op versions after libonnx's opset 17.
#include "ops/signature.h"

#include <gtest/gtest.h>

namespace hone::ops {
namespace {

TEST(OpSignature, RowsAreSortedAndStartAfterLibonnx) {
  const auto& rows = newer_signatures();
  ASSERT_FALSE(rows.empty());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_GT(rows[i].since, kLibonnxNewestOpset) << rows[i].op_type;
    EXPECT_LE(rows[i].since, kNewestOnnxOpset) << rows[i].op_type;
    EXPECT_LE(rows[i].min_inputs, rows[i].max_inputs == kVariadic ? 1 << 20 : rows[i].max_inputs);
    if (i > 0) {
      const auto& a = rows[i - 1];
      const auto& b = rows[i];
      EXPECT_TRUE(a.op_type < b.op_type || (a.op_type == b.op_type && a.since < b.since))
          << a.op_type << "-" << a.since << " then " << b.op_type << "-" << b.since;
    }
  }
}

TEST(OpSignature, NewestRowAtOrBelowTheOpset) {
  EXPECT_EQ(newer_signature("Attention", 22), nullptr);
  ASSERT_NE(newer_signature("Attention", 23), nullptr);
  EXPECT_EQ(newer_signature("Attention", 23)->max_inputs, 6);
  EXPECT_EQ(newer_signature("Attention", 24)->max_inputs, 7);
  EXPECT_EQ(newer_signature("Attention", 26)->since, 25);
  EXPECT_NE(newer_signature("Attention", 26)->find("left_window_size"), nullptr);
  // Conv-22 only widened its types: no row, libonnx's Conv-11 applies.
  EXPECT_EQ(newer_signature("Conv", 22), nullptr);
  const OpSignature* cast = newer_signature("Cast", 26);
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->since, 24);
  ASSERT_NE(cast->find("to"), nullptr);
  EXPECT_TRUE(cast->find("to")->required);
  EXPECT_EQ(cast->find("round_mode")->kind, AttrKind::kString);
  EXPECT_EQ(newer_signature("Split", 18)->max_outputs, kVariadic);
  EXPECT_EQ(attr_kind_name(AttrKind::kInts), "INTS");
}

}  // namespace
}  // namespace hone::ops
