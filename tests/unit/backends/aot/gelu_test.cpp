// Gelu chains use the generated code's own erf polynomial (hone_erf in the
// prelude) instead of libm's: it must match the reference everywhere, from
// tiny to saturated inputs, infinities and NaN, with an element-wise op after.
#include <cmath>
#include <limits>

#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;

TEST(AotGelu, PolynomialErfMatchesReferenceOverTheWholeRange) {
  GraphBuilder b("gelu");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4001});
  b.output(b.add(b.gelu(x), b.scalar_f32("one", 1.0f)), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g);
  ASSERT_TRUE(be);
  // The graph passes fold the Erf pattern into Gelu, which takes the polynomial.
  EXPECT_NE(be->sources().at(0).find("hone_erf("), std::string::npos);
  std::vector<float> row(4001);
  for (size_t i = 0; i < row.size(); ++i) row[i] = -10.0f + 20.0f * static_cast<float>(i) / 4000.0f;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {0.0f,
                                      -0.0f,
                                      1e-30f,
                                      -1e-30f,
                                      1e-6f,
                                      -1e-6f,
                                      3.9f,
                                      -3.9f,
                                      4.0f,
                                      -4.0f,
                                      5.66f,
                                      -5.66f,
                                      1e30f,
                                      -1e30f,
                                      inf,
                                      -inf,
                                      std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> two = row;
  for (size_t i = 0; i < special.size(); ++i) two[i * 7] = special[i];
  two.insert(two.end(), row.begin(), row.end());
  const std::vector<Tensor> in{Tensor::from<float>({2, 4001}, two)};
  auto want = eval::Interpreter().run_tensors(*g, in);
  ASSERT_TRUE(want) << want.error().to_string();
  auto got = be->infer(in);
  ASSERT_TRUE(got) << got.error().to_string();
  // Tighter than the suite's tolerance (rtol 1e-4, atol 1e-5): the
  // polynomial's absolute error is under 2e-7 of erf. Equal infinities and
  // NaN against NaN count as matching.
  const Tensor& a = (*got)[0];
  const Tensor& e = (*want)[0];
  ASSERT_EQ(a.shape(), e.shape());
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double v = a.data<float>()[i], w = e.data<float>()[i];
    if ((std::isnan(v) && std::isnan(w)) || v == w) continue;
    EXPECT_LE(std::abs(v - w), 1e-6 + 1e-6 * std::abs(w))
        << "element " << i << ": x = " << two[static_cast<size_t>(i)];
  }
}

}  // namespace
}  // namespace hone::aot
