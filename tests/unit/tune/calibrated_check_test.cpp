// The calibrated gate on hand-made outputs (bounds from the f32 reference's
// error, the floor, exact integers, NaN placement, merging over check
// inputs, --tolerance parsing) and the reference's f64 mode it relies on.
#include <cmath>

#include <gtest/gtest.h>

#include "hone/correctness.h"
#include "hone/graph_builder.h"
#include "hone/registry.h"

namespace hone {
namespace {

/// 64 values of a smooth signal around 10, in f64: the truth.
std::vector<double> truth_values() {
  std::vector<double> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 10.0 + std::sin(0.3 * static_cast<double>(i));
  return v;
}

Tensor f64_tensor(const std::vector<double>& v) {
  return Tensor::from<double>({static_cast<int64_t>(v.size())}, v);
}

/// The truth in f32 with every element off by `rel` (alternating sign).
Tensor f32_off_by(const std::vector<double>& v, double rel) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<float>(v[i] * (1.0 + (i % 2 == 0 ? rel : -rel)));
  return Tensor::from<float>({static_cast<int64_t>(v.size())}, out);
}

const GateTolerance kF32 = GateTolerance::for_precision(Precision::kFp32);

TEST(CalibratedCheck, BitExactReferenceGetsTheFloorNotAZeroBound) {
  const auto t = truth_values();
  const Tensor ref = f32_off_by(t, 0);  // f32 rounding only (~3e-8 relative)
  const CorrectnessResult close =
      calibrated_check({f32_off_by(t, 2e-6)}, {ref}, {f64_tensor(t)}, {"y"}, kF32);
  EXPECT_TRUE(close.passed) << close.message;
  ASSERT_EQ(close.outputs.size(), 1u);
  EXPECT_EQ(close.outputs[0].bound_rel_l2, kF32.floor_rel_l2);  // 100 x ~3e-8 is under the floor
  EXPECT_NEAR(close.outputs[0].rel_l2, 2e-6, 2e-7);
  EXPECT_LT(close.outputs[0].ref_rel_l2, 1e-7);
  // 1% off: far past the floor, and the message names the output and the figures.
  const CorrectnessResult off =
      calibrated_check({f32_off_by(t, 1e-2)}, {ref}, {f64_tensor(t)}, {"y"}, kF32);
  EXPECT_FALSE(off.passed);
  EXPECT_NE(off.message.find("output 'y'"), std::string::npos) << off.message;
  EXPECT_NE(off.message.find("bound"), std::string::npos) << off.message;
}

TEST(CalibratedCheck, BoundScalesWithTheReferencesOwnError) {
  // An f32 reference 1e-4 away from the truth (an ill-conditioned model):
  // the bound is 100x that, so 5e-3 passes and 2e-2 does not.
  const auto t = truth_values();
  const Tensor ref = f32_off_by(t, 1e-4);
  const auto pass = calibrated_check({f32_off_by(t, 5e-3)}, {ref}, {f64_tensor(t)}, {}, kF32);
  EXPECT_TRUE(pass.passed) << pass.message;
  EXPECT_NEAR(pass.outputs[0].bound_rel_l2, 100 * 1e-4, 1e-5);
  const auto fail = calibrated_check({f32_off_by(t, 2e-2)}, {ref}, {f64_tensor(t)}, {}, kF32);
  EXPECT_FALSE(fail.passed);
  // A user's --tolerance overrides the factor.
  const auto loose = calibrated_check({f32_off_by(t, 2e-2)}, {ref}, {f64_tensor(t)}, {},
                                      GateTolerance{1000, 1e-5, 1e-4});
  EXPECT_TRUE(loose.passed) << loose.message;
}

TEST(CalibratedCheck, IntegersMustMatchTheTruthOrTheF32Reference) {
  const Tensor truth = Tensor::from<int64_t>({4}, {1, 2, 3, 4});
  const Tensor ref = Tensor::from<int64_t>({4}, {1, 2, 3, 5});  // a near tie f32 already flips
  EXPECT_TRUE(calibrated_check({truth}, {ref}, {truth}, {"idx"}, kF32).passed);
  EXPECT_TRUE(calibrated_check({ref}, {ref}, {truth}, {"idx"}, kF32).passed);
  const auto bad =
      calibrated_check({Tensor::from<int64_t>({4}, {1, 7, 3, 4})}, {ref}, {truth}, {"idx"}, kF32);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.worst_index, 1);
  EXPECT_EQ(bad.outputs[0].mismatches, 1);
  EXPECT_NE(bad.message.find("integers must be equal"), std::string::npos) << bad.message;
}

// ArgMax over rows of 4: row 0 has a near-tie (values 1e-6 apart on an RMS of
// about 2), row 1 a clear winner. Another correct backend may pick either of
// row 0's two; picking the loser of row 1 is wrong.
TEST(CalibratedCheck, AnIndexFlipIsAcceptedExactlyWhereTheValuesTie) {
  TieWitness w;
  w.output = 0;
  w.values = Tensor::from<double>({2, 4}, {1.0, 3.0, 3.000001, -2.0, 0.5, 2.5, 1.0, -1.0});
  w.axis = 1;
  const Tensor truth = Tensor::from<int64_t>({2}, {2, 1});
  const Tensor tied = Tensor::from<int64_t>({2}, {1, 1});
  const Tensor wrong = Tensor::from<int64_t>({2}, {2, 2});
  const CorrectnessResult ok = calibrated_check({tied}, {truth}, {truth}, {"idx"}, kF32, {w});
  EXPECT_TRUE(ok.passed) << ok.message;
  ASSERT_EQ(ok.outputs.size(), 1u);
  EXPECT_EQ(ok.outputs[0].tied_flips, 1);
  const CorrectnessResult bad = calibrated_check({wrong}, {truth}, {truth}, {"idx"}, kF32, {w});
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.outputs[0].mismatches, 1);
  EXPECT_NE(bad.message.find("element 1"), std::string::npos) << bad.message;
  // Without the witness the tie is a mismatch, as before.
  EXPECT_FALSE(calibrated_check({tied}, {truth}, {truth}, {"idx"}, kF32).passed);
  // bf16's looser bound accepts values a bf16 product cannot tell apart.
  w.values = Tensor::from<double>({2, 4}, {1.0, 3.0, 3.01, -2.0, 0.5, 2.5, 1.0, -1.0});
  EXPECT_FALSE(calibrated_check({tied}, {truth}, {truth}, {"idx"}, kF32, {w}).passed);
  EXPECT_TRUE(calibrated_check({tied}, {truth}, {truth}, {"idx"},
                               GateTolerance::for_precision(Precision::kBf16), {w})
                  .passed);
}

// TopK's indices: K along the axis; a tie between the 2nd and 3rd largest
// may come out in either order.
TEST(CalibratedCheck, TopKIndicesMayOrderTiedValuesEitherWay) {
  TieWitness w;
  w.values = Tensor::from<double>({1, 5}, {4.0, 2.0, 7.0, 4.0000001, -1.0});
  w.axis = 1;
  w.along_axis = true;
  const Tensor truth = Tensor::from<int64_t>({1, 3}, {2, 0, 3});
  const Tensor swapped = Tensor::from<int64_t>({1, 3}, {2, 3, 0});
  const Tensor wrong = Tensor::from<int64_t>({1, 3}, {2, 1, 3});
  EXPECT_TRUE(calibrated_check({swapped}, {truth}, {truth}, {"i"}, kF32, {w}).passed);
  EXPECT_FALSE(calibrated_check({wrong}, {truth}, {truth}, {"i"}, kF32, {w}).passed);
}

TEST(CalibratedCheck, NonFiniteValuesMustSitWhereTheTruthHasThem) {
  const double nan = std::nan("");
  const Tensor truth = Tensor::from<double>({3}, {1.0, nan, 2.0});
  const Tensor ref = Tensor::from<float>({3}, {1.0f, std::nanf(""), 2.0f});
  EXPECT_TRUE(calibrated_check({ref}, {ref}, {truth}, {}, kF32).passed);
  const auto bad = calibrated_check({Tensor::from<float>({3}, {1.0f, std::nanf(""), INFINITY})},
                                    {ref}, {truth}, {"y"}, kF32);
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.worst_index, 2);
  EXPECT_NE(bad.message.find("where the truth has"), std::string::npos) << bad.message;
}

TEST(CalibratedCheck, DtypeAndShapeMismatchesAreNamed) {
  const auto t = truth_values();
  const Tensor ref = f32_off_by(t, 0);
  const auto shape =
      calibrated_check({Tensor::zeros(DType::kF32, {2, 32})}, {ref}, {f64_tensor(t)}, {"y"}, kF32);
  EXPECT_FALSE(shape.passed);
  EXPECT_NE(shape.message.find("shape"), std::string::npos) << shape.message;
  const auto dtype = calibrated_check({f64_tensor(t)}, {ref}, {f64_tensor(t)}, {"y"}, kF32);
  EXPECT_FALSE(dtype.passed);
  EXPECT_NE(dtype.message.find("the reference's is"), std::string::npos) << dtype.message;
}

TEST(CalibratedCheck, MergeKeepsTheWorstPerOutputAndAnyFailure) {
  const auto t = truth_values();
  const Tensor ref = f32_off_by(t, 0);
  const auto a = calibrated_check({f32_off_by(t, 1e-6)}, {ref}, {f64_tensor(t)}, {}, kF32);
  const auto b = calibrated_check({f32_off_by(t, 3e-6)}, {ref}, {f64_tensor(t)}, {}, kF32);
  const auto c = calibrated_check({f32_off_by(t, 1e-2)}, {ref}, {f64_tensor(t)}, {}, kF32);
  const auto ab = merge_checks(a, b);
  EXPECT_TRUE(ab.passed);
  EXPECT_NEAR(ab.outputs[0].rel_l2, 3e-6, 3e-7);
  const auto abc = merge_checks(ab, c);
  EXPECT_FALSE(abc.passed);
  EXPECT_FALSE(abc.outputs[0].passed);
  EXPECT_FALSE(merge_checks(c, a).passed);
}

TEST(CalibratedCheck, ToleranceParsesAndNamesWhatIsWrong) {
  auto f = GateTolerance::parse("300");
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_EQ(f->factor, 300);
  EXPECT_EQ(f->floor_rel_l2, kF32.floor_rel_l2);
  auto all = GateTolerance::parse("50:1e-4:2e-3");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->floor_rel_l2, 1e-4);
  EXPECT_EQ(all->floor_max, 2e-3);
  for (const char* bad : {"", "x", "-1", "10:", "1:2:3:4", "0"}) {
    auto r = GateTolerance::parse(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_NE(GateTolerance::parse("10:abc").error().message().find("relative L2 floor"),
            std::string::npos);
  // Reduced precisions have looser floors than f32.
  EXPECT_GT(GateTolerance::for_precision(Precision::kBf16).floor_rel_l2,
            GateTolerance::for_precision(Precision::kFp16).floor_rel_l2);
  EXPECT_GT(GateTolerance::for_precision(Precision::kTf32).floor_rel_l2, kF32.floor_rel_l2);
}

/// y = Cast<float>(x * w) summed with 1e-8 steps: f32 loses what f64 keeps.
Graph accumulating_graph() {
  GraphBuilder b("acc");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  ValueId w = b.constant("w", Tensor::from<float>({4}, {1.0f, 1e-7f, 1e-7f, 1e-7f}));
  ValueId p = b.mul(x, w);
  ValueId c = b.op("Cast", {p}, {{"to", int64_t{1}}});  // to FLOAT: f32 output, widened in f64 mode
  ValueId s = b.op("ReduceSum", {c}, {{"keepdims", int64_t{0}}});
  b.output(b.add(s, s), "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

TEST(ReferenceF64, WidensTheGraphAndReturnsF64Outputs) {
  const Graph g = accumulating_graph();
  auto f32 = default_registry().create("reference");
  auto f64 = default_registry().create("reference");
  ASSERT_TRUE(f32 && f64);
  ASSERT_TRUE((*f64)->configure("precision", "f64"));
  ASSERT_TRUE((*f32)->build(g));
  ASSERT_TRUE((*f64)->build(g));
  const Tensor x = Tensor::from<float>({4}, {1.0f, 1.0f, 1.0f, 1.0f});
  auto a = (*f32)->infer({x});
  auto b = (*f64)->infer({x});
  ASSERT_TRUE(a) << a.error().to_string();
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ((*a)[0].dtype(), DType::kF32);
  ASSERT_EQ((*b)[0].dtype(), DType::kF64);
  // 2 * (1 + 3 * float(1e-7)): the f64 run keeps the small terms at full precision.
  const double want = 2.0 * (1.0 + 3.0 * static_cast<double>(1e-7f));
  EXPECT_NEAR((*b)[0].span<double>()[0], want, 1e-15);
  EXPECT_NE(static_cast<double>((*a)[0].span<float>()[0]), (*b)[0].span<double>()[0]);
  // An unknown precision is refused when configured, naming it.
  auto bad = default_registry().create("reference");
  auto set = (*bad)->configure("precision", "f128");
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().to_string().find("f128"), std::string::npos);
}

}  // namespace
}  // namespace hone
