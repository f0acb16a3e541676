// fold_slice_bounds: a Slice whose end is computed from dims gets a constant
// one where it is the axis' dim less a number (a causal conv's `[..., :seq]`),
// with the reference's answer; other computed bounds stay.
#include <gtest/gtest.h>

#include "hone/graph_builder.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

const Tensor* constant_input(const Graph& g, const Node& n, size_t i) {
  const Value& v = g.value(n.inputs[i]);
  return v.initializer ? &*v.initializer : nullptr;
}

/// x[:, :L] where L is dim 1 of `y` (Shape, Gather, Unsqueeze), x's axis `axis_dim`.
Graph sliced_by(const Dim& axis_dim, const Dim& length, int64_t start = 0) {
  GraphBuilder b("slice");
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), axis_dim});
  ValueId y = b.input("y", DType::kF32, Shape{Dim::symbol("batch"), length});
  ValueId shape = b.op("Shape", {y}, {});
  ValueId one = b.constant("one", Tensor::scalar<int64_t>(1));
  ValueId len = b.op("Gather", {shape, one}, {{"axis", int64_t{0}}});
  ValueId zero = b.constant("zero", Tensor::from<int64_t>({1}, {0}));
  ValueId ends = b.op("Unsqueeze", {len, zero}, {});
  ValueId starts = b.constant("starts", Tensor::from<int64_t>({1}, {start}));
  ValueId axes = b.constant("axes", Tensor::from<int64_t>({1}, {1}));
  b.output(b.relu(b.op("Slice", {x, starts, ends, axes}, {})), "out");
  return *std::move(b).build();
}

TEST(PassesSliceBounds, AnEndThatIsTheAxisLessANumberIsCountedFromTheEnd) {
  const Dim seq = Dim::symbol("seq");
  std::mt19937 rng(3);
  struct Case {
    Dim axis;
    int64_t end;  // the constant the pass writes
  };
  for (const Case& c :
       {Case{Dim::symbol("(seq+3)"), -3}, Case{seq, std::numeric_limits<int64_t>::max()}}) {
    SCOPED_TRACE(c.axis.to_string());
    Graph g = sliced_by(c.axis, seq, 1);
    PassStats st;
    auto out = fold_slice_bounds(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(st.folded, 1);
    const Node* slice = nullptr;
    for (const Node& n : out->nodes())
      if (n.op_type == "Slice") slice = &n;
    ASSERT_NE(slice, nullptr);
    const Tensor* ends = constant_input(*out, *slice, 2);
    ASSERT_NE(ends, nullptr);
    EXPECT_EQ(tensor_element_as_int64(*ends, 0), c.end);
    const int64_t extra = c.end == -3 ? 3 : 0;
    for (int64_t n : {2, 7})
      EXPECT_TRUE(
          same_outputs(g, *out, {uniform(rng, {2, n + extra}), uniform(rng, {2, n})}, 0.0, true))
          << "seq " << n;
  }
}

TEST(PassesSliceBounds, OtherComputedBoundsStay) {
  // An axis twice the bound (their difference is not a number), a bound with a
  // term subtracted (it could be negative), a bound larger than the axis.
  const Dim seq = Dim::symbol("seq");
  for (const Graph& g : {sliced_by(Dim::symbol("(2*seq)"), seq),
                         sliced_by(Dim::symbol("(seq+3)"), Dim::symbol("(seq-1)")),
                         sliced_by(seq, Dim::symbol("(seq+2)"))}) {
    PassStats st;
    auto out = fold_slice_bounds(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(st.folded, 0);
    EXPECT_EQ(count_op(*out, "Shape"), 1u);
  }
}

}  // namespace
}  // namespace hone
