// The element-wise op table (backends/aot/eltwise.h): every entry runs as
// generated code and matches the reference, with default attributes and
// with the attribute values listed below. A new entry is tested here
// without a new test; give it a line in kAttributeCases when it has
// attributes.
#include "backends/aot/eltwise.h"
#include "aot_test_util.h"
#include "backends/aot/program.h"

namespace hone::aot {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;

/// Ops whose domain is x > 0 read the positive input.
bool positive_only(const std::string& op) {
  return op == "Sqrt" || op == "Log";
}

const std::vector<std::pair<std::string, std::map<std::string, Attribute>>> kAttributeCases = {
    {"LeakyRelu", {{"alpha", 0.2f}}},
    {"Elu", {{"alpha", 0.5f}}},
    {"Selu", {{"alpha", 1.5f}, {"gamma", 1.1f}}},
    {"Celu", {{"alpha", 2.0f}}},
    {"HardSigmoid", {{"alpha", 0.3f}, {"beta", 0.4f}}},
    {"Gelu", {{"approximate", std::string("tanh")}}},
    {"ThresholdedRelu", {{"alpha", 0.5f}}},
};

TEST(AotEltwise, EveryTableOpMatchesTheReference) {
  std::mt19937 rng(11);
  GraphBuilder b("eltwise_table");
  const ValueId x = b.input("x", DType::kF32, Shape{3, 5, 7});      // [-3, 3)
  const ValueId pos = b.input("pos", DType::kF32, Shape{3, 5, 7});  // [0.5, 2)
  const ValueId row = b.input("row", DType::kF32, Shape{5, 1});     // [0.5, 2), broadcast
  size_t outputs = 0;
  auto out = [&](ValueId v) { b.output(v, "y" + std::to_string(outputs++)); };
  for (const EltwiseOp& e : eltwise_ops()) {
    ASSERT_TRUE(is_elementwise_op(e.name)) << e.name;
    if (e.arity == 1) {
      out(b.op(e.name, {positive_only(e.name) ? pos : x}));
    } else if (e.arity == 2) {
      out(b.op(e.name, {pos, row}));
    } else {
      // Where: a constant mask (the generated code reads it as 0 and 1) over x and row.
      ASSERT_EQ(e.arity, 3) << e.name;
      Tensor mask = Tensor::zeros(DType::kBool, {5, 7});
      for (int64_t i = 0; i < mask.numel(); ++i) mask.data<uint8_t>()[i] = (i * 7 % 3) == 0;
      out(b.op(e.name, {b.constant("mask_" + std::string(e.name), mask), x, row}));
    }
  }
  for (const auto& [op, attrs] : kAttributeCases) {
    ASSERT_NE(find_eltwise(op), nullptr) << op << " is not in the table";
    out(b.op(op, {x}, attrs));
  }
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  expect_matches_reference(
      *g, {{uniform(rng, {3, 5, 7}, -3.0f, 3.0f), uniform(rng, {3, 5, 7}, 0.5f, 2.0f),
            uniform(rng, {5, 1}, 0.5f, 2.0f)}});
}

// A value named with "*/" (a dim expression of a detector's Reshape output,
// `(... * /det/Reshape_output_0:1)`, printed in the chain's comments) would
// end the generated C comment early: the compiler then failed on the rest.
TEST(AotEltwise, NamesThatWouldEndACCommentStayInside) {
  std::mt19937 rng(12);
  GraphBuilder b("comment_names");
  const ValueId x = b.input("x*/y", DType::kF32, Shape{2, 3});
  const ValueId w = b.input("w*/", DType::kF32, Shape{2, 3});
  b.output(b.op("Sigmoid", {b.op("Add", {b.op("Relu", {x}), w})}), "out*/z");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  testing_util::expect_compiled_whole(*g,
                                      {{uniform(rng, {2, 3}, -1.0f, 1.0f), uniform(rng, {2, 3})}});
}

TEST(AotEltwise, RefusedAttributesNameTheReason) {
  GraphBuilder b("gelu_bad");
  const ValueId x = b.input("x", DType::kF32, Shape{4});
  b.output(b.op("Gelu", {x}, {{"approximate", std::string("cubic")}}), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  const NodeSupport s = supports_node(*g, g->nodes()[0]);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("approximate must be 'none' or 'tanh'"), std::string::npos) << s.reason;
}

TEST(AotEltwise, MaxOfThreeInputsIsRefusedWithTheReason) {
  GraphBuilder b("max3");
  const ValueId x = b.input("x", DType::kF32, Shape{4});
  b.output(b.op("Max", {x, b.relu(x), b.sigmoid(x)}), "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  const NodeSupport s = supports_node(*g, g->nodes().back());
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("Max of 3 inputs (aot takes two)"), std::string::npos) << s.reason;
}

}  // namespace
}  // namespace hone::aot
