// Slice of a run-time length in aot's code (slice_bounds.cpp,
// ops/run_length.h): over an axis whose dim and bounds fix no expression of
// its length (x[:3] of a NonZero's count, starts read from an input), the
// length is worked out when the code runs as ONNX says, clamped, any step
// sign, a symbol the run sets; the block ends with the Slice and the block
// after it binds that length, 0 included. Every node runs compiled and
// matches the reference.
#include <limits>

#include "aot_test_util.h"
#include "hone/graph_builder.h"
#include "ops/run_length.h"
#include "passes/shape_propagation.h"

namespace hone::aot {
namespace {

using backend_test::ints;
using testing_util::build_aot;
using testing_util::expect_matches_reference;
using testing_util::i64s;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// The scores of x [n] above 0.5 (NonZero, GatherND); their first three
/// ("first", doubled) and every second from the last backwards ("back").
Graph slices_of_a_count() {
  GraphBuilder b("slice_of_count", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n")});
  const ValueId keep = b.op("Greater", {x, b.constant("", Tensor::from<float>({}, {0.5f}))});
  const ValueId at = b.op("Transpose", {b.op("NonZero", {keep}, {}, "nonzero")},
                          {{"perm", std::vector<int64_t>{1, 0}}});
  const ValueId scores = b.op("GatherND", {x, at});
  const ValueId first =
      b.op("Slice", {scores, ints(b, {0}), ints(b, {3}), ints(b, {0})}, {}, "first");
  b.output(b.mul(first, b.constant("", Tensor::from<float>({}, {2.0f}))), "first");
  b.output(b.op("Slice", {scores, ints(b, {-1}), ints(b, {kMin}), ints(b, {0}), ints(b, {-2})}, {},
                "back"),
           "back");
  return *std::move(b).build();
}

// Five scores (3 and 3 kept), two (2 and 1) and none (both empty).
TEST(AotSliceRunLength, SlicesOfACountRunCompiledForEveryCount) {
  const Graph g = slices_of_a_count();
  const std::vector<std::pair<std::string, std::string>> config = {{"dim_bounds", "n=8"},
                                                                   {"min_block_size", "1"}};
  expect_matches_reference(g,
                           {{Tensor::from<float>({7}, {0.9f, 0.1f, 0.7f, 0.8f, 0.95f, 0.6f, 0.2f})},
                            {Tensor::from<float>({4}, {0.1f, 0.75f, 0.3f, 0.6f})},
                            {Tensor::from<float>({3}, {0.1f, 0.2f, 0.0f})}},
                           config);
  auto be = build_aot(g, config);
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
}

/// x [2, n] sliced along axis 1 from a start read from input `start` to the
/// end, then 1 added (the Slice's block ends; the Add's binds the length).
Graph slice_from_an_input_start() {
  GraphBuilder b("slice_input_start", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{2, Dim::symbol("n")});
  const ValueId start = b.input("start", DType::kI64, Shape{1});
  const ValueId y = b.op("Slice",
                         {x, start, b.constant("", Tensor::from<int64_t>({1}, {kMax})),
                          b.constant("", Tensor::from<int64_t>({1}, {1}))},
                         {}, "tail");
  b.output(b.add(y, b.constant("", Tensor::from<float>({}, {1.0f}))), "y");
  return *std::move(b).build();
}

// The shape pass names the length; starts from the end, the front, inside,
// past the end (empty) and before the front (clamped).
TEST(AotSliceRunLength, StartsReadFromAnInputAreClampedAsOnnxSays) {
  const Graph g = slice_from_an_input_start();
  Graph shaped = g;
  passes::propagate_shapes(shaped);
  for (const Node& n : shaped.nodes())
    if (n.op_type == "Slice") EXPECT_TRUE(ops::slice_length_at_run_time(shaped, n));
  const Tensor x = Tensor::from<float>({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
  expect_matches_reference(
      g, {{x, i64s({-2})}, {x, i64s({0})}, {x, i64s({3})}, {x, i64s({7})}, {x, i64s({-9})}},
      {{"dim_bounds", "n=6"}, {"min_block_size", "1"}});
}

// A length named while the input's dim was symbolic is refined once a pass
// makes it static (folding a Reshape target): the Slice then ends no block.
TEST(AotSliceRunLength, ALengthNamedBeforeFoldingIsRefinedOnceTheInputIsStatic) {
  GraphBuilder b("slice_refined", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("n")});
  auto one = [&b](int64_t v) { return b.constant("", Tensor::from<int64_t>({1}, {v})); };
  b.output(b.op("Slice", {x, one(0), one(kMax), one(0), one(2)}, {}, "every_second"), "y");
  Graph g = *std::move(b).build();
  passes::propagate_shapes(g);
  const Value& y = g.value(g.outputs()[0]);
  ASSERT_TRUE(y.shape);
  EXPECT_EQ(*y.shape, (Shape{ops::slice_length(y.name, 0)}));
  EXPECT_TRUE(ops::slice_length_at_run_time(g, g.node(0)));
  g.value(g.inputs()[0]).shape = Shape{7};
  passes::propagate_shapes(g);
  EXPECT_EQ(*g.value(g.outputs()[0]).shape, (Shape{4}));
  EXPECT_FALSE(ops::slice_length_at_run_time(g, g.node(0)));
}

}  // namespace
}  // namespace hone::aot
