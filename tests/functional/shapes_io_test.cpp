// Shapes and I/O on every backend: static and dynamic axes, every batch size
// in a range, several inputs and outputs, integer and bool tensors.
#include <cmath>

#include "functional/backends.h"
#include "functional/helpers.h"
#include "functional/matrix.h"
#include "functional/models/toy_models.h"

namespace hone::functional {
namespace {

class Shapes : public BackendTest {};
class Io : public BackendTest {};

HONE_MATRIX_TEST_P(Shapes, StaticShapeConvNet, "shapes.static", "models.conv-net") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(21);
  Graph g = conv_net(s);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  auto x = s.inputs(g, {{"batch", 3}});
  EXPECT_TRUE(matches_reference(c, g, x, **be));
  EXPECT_TRUE(batch_consistent(c, **be, x));
}

HONE_MATRIX_TEST_P(Shapes, EveryBatchSizeInBounds, "shapes.dynamic-batch",
                   "shapes.every-batch-in-bounds") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(22);
  MlpWeights w;
  Graph g = mlp(s, &w);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  for (int64_t batch = 1; batch <= 8; ++batch) {
    auto x = s.inputs(g, {{"batch", batch}});
    auto y = (*be)->infer(x);
    ASSERT_TRUE(y) << "batch " << batch << ": " << y.error().to_string();
    EXPECT_EQ((*y)[0].dim(0), batch);
    EXPECT_TRUE(c.tolerance.assert_close((*y)[0], mlp_oracle(w, x[0]))) << "batch " << batch;
  }
}

HONE_MATRIX_TEST_P(Shapes, DynamicBatchAndSequence, "shapes.dynamic-seq", "models.dynamic-axes",
                   "models.attention") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(23);
  for (Graph g : {dynamic_seq(s), attention_block(s)}) {
    auto be = build_backend(c, g);
    ASSERT_TRUE(be) << g.name() << ": " << be.error().to_string();
    for (int64_t batch : {1, 2, 4})
      for (int64_t seq : {1, 5, 16}) {
        auto x = s.inputs(g, {{"batch", batch}, {"seq", seq}});
        EXPECT_TRUE(matches_reference(c, g, x, **be))
            << g.name() << " batch " << batch << " seq " << seq;
      }
    EXPECT_TRUE(batch_consistent(c, **be, s.inputs(g, {{"batch", 3}, {"seq", 7}}))) << g.name();
  }
}

HONE_MATRIX_TEST_P(Io, SeveralInputsAndOutputs, "io.multi-tensor") {
  const BackendCase& c = GetParam();
  Seeded s = seeded(31);
  Graph g = multi_io(s);
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  auto x = s.inputs(g, {{"batch", 3}});
  auto y = (*be)->infer(x);
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->size(), 2u);
  // Independent answer for both outputs.
  Tensor p = Tensor::zeros(DType::kF32, {3, 4}), q = Tensor::zeros(DType::kF32, {3, 4});
  for (int64_t i = 0; i < 12; ++i) {
    const double a = x[0].data<float>()[i], b = x[1].data<float>()[i];
    p.data<float>()[i] = static_cast<float>(a * b + 1.0);
    q.data<float>()[i] = static_cast<float>(1.0 / (1.0 + std::exp(-(a - b))));
  }
  EXPECT_TRUE(c.tolerance.assert_close((*y)[0], p));
  EXPECT_TRUE(c.tolerance.assert_close((*y)[1], q));
}

HONE_MATRIX_TEST_P(Io, IntegerAndBoolTensors, "io.integer-inputs") {
  const BackendCase& c = GetParam();
  if (!c.has("integer-io")) HONE_SKIP("backend declares no integer/bool I/O");
  Seeded s = seeded(32);
  Graph g = integer_io(s);
  const Tensor table = *g.value(g.find_value("table")).initializer;
  auto be = build_backend(c, g);
  ASSERT_TRUE(be) << be.error().to_string();
  auto x = s.inputs(g, {{"batch", 2}});
  auto y = (*be)->infer(x);
  ASSERT_TRUE(y) << y.error().to_string();
  ASSERT_EQ(y->size(), 2u);
  ASSERT_EQ((*y)[1].dtype(), DType::kI64);
  for (int64_t b = 0; b < 2; ++b) {
    int64_t count = 0;
    for (int64_t j = 0; j < 3; ++j) {
      const bool on = x[1].data<bool>()[b * 3 + j];
      count += on;
      const int64_t id = x[0].data<int64_t>()[b * 3 + j];
      for (int64_t e = 0; e < 4; ++e)
        EXPECT_EQ((*y)[0].data<float>()[(b * 3 + j) * 4 + e],
                  on ? table.data<float>()[id * 4 + e] : 0.0f);
    }
    EXPECT_EQ((*y)[1].data<int64_t>()[b], count);
  }
}

HONE_WITH_BACKENDS(Shapes);
HONE_WITH_BACKENDS(Io);

}  // namespace
}  // namespace hone::functional
