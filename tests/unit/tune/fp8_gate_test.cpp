// precision=fp8 in the gate and the tuner: its own row of the calibrated
// gate (bf16's floors scaled by e4m3's 16 times coarser rounding), which
// passes an e4m3-sized error that bf16's refuses and still refuses a wrong
// answer; and `--precision auto` leaving fp8 out unless asked for.
#include <cmath>

#include <gtest/gtest.h>

#include "hone/correctness.h"
#include "hone/registry.h"
#include "tune/session.h"

namespace hone {
namespace {

std::vector<double> truth_values() {
  std::vector<double> v(256);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i)) + 0.2;
  return v;
}

/// The truth in f32, each element off by `rel` of itself, alternating sign.
Tensor off_by(const std::vector<double>& v, double rel) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<float>(v[i] * (1.0 + (i % 2 == 0 ? rel : -rel)));
  return Tensor::from<float>({static_cast<int64_t>(v.size())}, out);
}

CorrectnessResult judge(double rel, Precision p) {
  const auto t = truth_values();
  return calibrated_check({off_by(t, rel)}, {off_by(t, 0)},
                          {Tensor::from<double>({static_cast<int64_t>(t.size())}, t)}, {"y"},
                          GateTolerance::for_precision(p));
}

TEST(Fp8Gate, ItsRowIsBf16sScaledByE4m3sCoarserRounding) {
  const GateTolerance fp8 = GateTolerance::for_precision(Precision::kFp8);
  const GateTolerance bf16 = GateTolerance::for_precision(Precision::kBf16);
  EXPECT_EQ(fp8.factor, bf16.factor);
  EXPECT_DOUBLE_EQ(fp8.floor_rel_l2, 0.3);
  EXPECT_DOUBLE_EQ(fp8.floor_max, 1.5);
  // 16 = 2^-4 / 2^-8, rounded down; an order of magnitude above bf16's.
  EXPECT_LE(fp8.floor_rel_l2, 16 * bf16.floor_rel_l2);
  EXPECT_GE(fp8.floor_rel_l2, 10 * bf16.floor_rel_l2);
  EXPECT_LE(fp8.floor_max, 16 * bf16.floor_max);
  EXPECT_GE(fp8.floor_max, 10 * bf16.floor_max);
  const Tolerance t8 = Tolerance::for_precision(Precision::kFp8);
  const Tolerance t16 = Tolerance::for_precision(Precision::kBf16);
  EXPECT_GT(t8.rtol, 10 * t16.rtol);
  EXPECT_GT(t8.atol, 10 * t16.atol);
}

TEST(Fp8Gate, PassesAnE4m3SizedErrorThatBf16RefusesAndRefusesAWrongAnswer) {
  // One product in e4m3 lands near 3-4% in relative L2.
  const CorrectnessResult e4m3 = judge(0.04, Precision::kFp8);
  EXPECT_TRUE(e4m3.passed) << e4m3.message;
  EXPECT_FALSE(judge(0.04, Precision::kBf16).passed);
  // Half of every value wrong: past the fp8 bound, named in the message.
  const CorrectnessResult wrong = judge(0.5, Precision::kFp8);
  EXPECT_FALSE(wrong.passed);
  EXPECT_NE(wrong.message.find("y"), std::string::npos) << wrong.message;
}

/// A registry whose one backend "x" declares fp32, tf32, bf16 and fp8 (the
/// reference stands behind it; only the declaration is read).
BackendRegistry declaring_fp8() {
  BackendRegistry reg;
  BackendRegistry::Entry e = *default_registry().find("reference");
  e.name = "x";
  e.capabilities.precisions = {Precision::kFp32, Precision::kTf32, Precision::kBf16,
                               Precision::kFp8};
  EXPECT_TRUE(reg.add(std::move(e)));
  return reg;
}

TEST(Fp8Gate, PrecisionAutoLeavesFp8OutUnlessAskedFor) {
  const BackendRegistry reg = declaring_fp8();
  using tune_internal::precision_variants;
  EXPECT_EQ(precision_variants(reg, "x", false), std::vector<std::string>{"x"});
  EXPECT_EQ(precision_variants(reg, "x", false, true), std::vector<std::string>{"x"});
  EXPECT_EQ(precision_variants(reg, "x", true),
            (std::vector<std::string>{"x", "x@tf32", "x@bf16"}));
  EXPECT_EQ(precision_variants(reg, "x", true, true),
            (std::vector<std::string>{"x", "x@tf32", "x@bf16", "x@fp8"}));
}

}  // namespace
}  // namespace hone
