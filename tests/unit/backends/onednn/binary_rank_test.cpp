// A binary op whose operand has fewer dims than the output, as positional
// tables are added to activations ([1,T,D] + [T,D]: whisper's encoder,
// maxvit's relative position bias): it must plan on oneDNN, whatever layout
// the other operand is in, instead of leaving its block to the reference.
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;

TEST(OnednnBinaryRank, LowerRankOperandThatOnlyLacksLeadingOnes) {
  std::mt19937 rng(41);
  for (const bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "after a Transpose" : "plain");
    GraphBuilder b("rank");
    ValueId x = b.input("x", DType::kF32, transposed ? Shape{1, 8, 10} : Shape{1, 10, 8});
    ValueId r = b.relu(x);
    ValueId a = transposed ? b.transpose(r, {0, 2, 1}) : r;  // [1, 10, 8]
    ValueId table = b.constant("table", uniform(rng, {10, 8}));
    ValueId sum = b.add(a, table);                                    // table second
    ValueId scaled = b.mul(b.constant("w", uniform(rng, {8})), sum);  // lower rank first
    b.output(b.sub(scaled, b.constant("t2", uniform(rng, {10, 8}))), "y");
    const Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, transposed ? std::vector<int64_t>{1, 8, 10}
                                                         : std::vector<int64_t>{1, 10, 8})});
  }
}

// A 4-D attention-score shape with a 3-D bias, as relative position biases are.
TEST(OnednnBinaryRank, ThreeDimBiasOnFourDimScores) {
  std::mt19937 rng(42);
  GraphBuilder b("bias");
  ValueId s = b.input("s", DType::kF32, Shape{2, 3, 5, 5});
  ValueId bias = b.constant("bias", uniform(rng, {3, 5, 5}));
  b.output(b.op("Softmax", {b.add(b.relu(s), bias)}, {{"axis", int64_t{-1}}}), "p");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 5, 5})});
}

}  // namespace
}  // namespace hone::onednn
