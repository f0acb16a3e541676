#include "hone/precision.h"

#include <gtest/gtest.h>

namespace hone {
namespace {

TEST(Precision, ParsesTheSpellingsUsersType) {
  const std::pair<const char*, Precision> cases[] = {
      {"fp32", Precision::kFp32},      {"f32", Precision::kFp32},
      {"FP32", Precision::kFp32},      {"float32", Precision::kFp32},
      {"fp64", Precision::kFp64},      {"f64", Precision::kFp64},
      {"tf32", Precision::kTf32},      {"bf16", Precision::kBf16},
      {"bfloat16", Precision::kBf16},  {"fp16", Precision::kFp16},
      {"f16", Precision::kFp16},       {"half", Precision::kFp16},
      {"fp8", Precision::kFp8},        {"FP8", Precision::kFp8},
      {"e4m3", Precision::kFp8},       {"E4M3", Precision::kFp8},
      {"float8_e4m3", Precision::kFp8}};
  for (const auto& [text, want] : cases) {
    auto p = parse_precision(text);
    ASSERT_TRUE(p) << text << ": " << p.error().to_string();
    EXPECT_EQ(*p, want) << text;
  }
}

TEST(Precision, NamesRoundTrip) {
  for (Precision p : {Precision::kFp64, Precision::kFp32, Precision::kTf32, Precision::kBf16,
                      Precision::kFp16, Precision::kFp8}) {
    auto back = parse_precision(to_string(p));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, p);
  }
  EXPECT_EQ(to_string(Precision::kFp32), "fp32");
  EXPECT_EQ(to_string(Precision::kBf16), "bf16");
  EXPECT_EQ(to_string(Precision::kFp16), "fp16");
  EXPECT_EQ(to_string(Precision::kFp8), "fp8");
}

TEST(Precision, UnknownNameIsAnErrorListingTheKnownOnes) {
  for (const char* bad : {"", "int8", "fp4", "e5m2", "bf 16"}) {
    auto p = parse_precision(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(p.error().message().find("'" + std::string(bad) + "'"), std::string::npos);
    EXPECT_NE(p.error().message().find("bf16"), std::string::npos);
  }
}

TEST(Precision, ReducedAreTheOnesBelowFp32) {
  EXPECT_FALSE(is_reduced(Precision::kFp64));
  EXPECT_FALSE(is_reduced(Precision::kFp32));
  EXPECT_TRUE(is_reduced(Precision::kTf32));
  EXPECT_TRUE(is_reduced(Precision::kBf16));
  EXPECT_TRUE(is_reduced(Precision::kFp16));
  EXPECT_TRUE(is_reduced(Precision::kFp8));
}

}  // namespace
}  // namespace hone
