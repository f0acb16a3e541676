// Models importing ai.onnx opsets newer than libonnx's schemas (18 to 26):
// they load, and their nodes are checked against hone's own signature rows
// (src/ops/signature.h) as strictly as older opsets are against libonnx's.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "onnx_test_util.h"

namespace hone::onnx {
namespace {

using ::onnx::AttributeProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

/// x: f32[2, 6] -> one node of `op` with `inputs` (names; "x" is the model
/// input) -> y, at ai.onnx `opset`, IR `ir`.
ModelProto one_node(const std::string& op, int64_t opset, std::initializer_list<std::string> inputs,
                    int outputs = 1, int64_t ir = 10) {
  ModelProto m;
  m.set_ir_version(ir);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  testing::set_tensor_type(g->add_input(), "x", TensorProto::FLOAT, {2, 6});
  NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("the_node");
  for (const auto& i : inputs) n->add_input(i);
  for (int k = 0; k < outputs; ++k) {
    const std::string name = "y" + std::to_string(k);
    n->add_output(name);
    g->add_output()->set_name(name);
  }
  return m;
}

AttributeProto* add_attr(ModelProto& m, const std::string& name, AttributeProto::AttributeType t) {
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

void expect_refused(const ModelProto& m, ErrorCode code,
                    std::initializer_list<std::string> needles) {
  auto g = testing::load_proto(m);
  ASSERT_FALSE(g) << "expected an error";
  EXPECT_EQ(g.error().code(), code) << g.error().to_string();
  const std::string text = g.error().to_string();
  for (const auto& s : needles)
    EXPECT_NE(text.find(s), std::string::npos) << s << " not in: " << text;
}

TEST(OnnxNewerOpsets, EveryOpsetUpToTwentySixLoads) {
  for (int64_t opset = 18; opset <= 26; ++opset) {
    auto m = one_node("Relu", opset, {"x"});
    auto g = testing::load_proto(m);
    ASSERT_TRUE(g) << "opset " << opset << ": " << g.error().to_string();
    EXPECT_EQ(g->opset(""), opset);
  }
  expect_refused(one_node("Relu", 27, {"x"}), ErrorCode::kUnsupported,
                 {"opset 27", "hone reads 1 to 26"});
}

TEST(OnnxNewerOpsets, IrVersionsUpToThirteenLoad) {
  for (int64_t ir : {11, 12, 13}) {
    auto g = testing::load_proto(one_node("Relu", 24, {"x"}, 1, ir));
    ASSERT_TRUE(g) << "IR " << ir << ": " << g.error().to_string();
  }
  expect_refused(one_node("Relu", 24, {"x"}, 1, 14), ErrorCode::kUnsupported,
                 {"IR version 14", "3 to 13"});
}

TEST(OnnxNewerOpsets, ChangedOpIsCheckedAgainstItsNewerRow) {
  // Split-18 takes num_outputs; at opset 17 (libonnx's Split-13) it did not.
  auto m = one_node("Split", 20, {"x"}, 2);
  add_attr(m, "num_outputs", AttributeProto::INT)->set_i(2);
  add_attr(m, "axis", AttributeProto::INT)->set_i(1);
  auto g = testing::load_proto(m);
  ASSERT_TRUE(g) << g.error().to_string();
  auto old = one_node("Split", 17, {"x"}, 2);
  add_attr(old, "num_outputs", AttributeProto::INT)->set_i(2);
  expect_refused(old, ErrorCode::kInvalidArgument, {"'the_node' (Split)", "num_outputs"});
  // A name the row does not declare, or the wrong kind, is refused naming the version.
  auto bogus = one_node("Split", 20, {"x"}, 2);
  add_attr(bogus, "parts", AttributeProto::INT)->set_i(2);
  expect_refused(bogus, ErrorCode::kInvalidArgument,
                 {"'the_node' (Split)", "attribute 'parts'", "Split (opset 18) does not take",
                  "axis, num_outputs"});
  auto swish = one_node("Swish", 24, {"x"});
  add_attr(swish, "alpha", AttributeProto::INT)->set_i(2);
  expect_refused(swish, ErrorCode::kInvalidArgument, {"'alpha' of type INT", "takes FLOAT"});
}

TEST(OnnxNewerOpsets, CountsAndRequiredAttributesOfNewOps) {
  // RMSNormalization-23 takes X and scale.
  expect_refused(one_node("RMSNormalization", 23, {"x"}), ErrorCode::kInvalidArgument,
                 {"(RMSNormalization)", "has 1 inputs", "(opset 23) takes 2"});
  // It does not exist before 23 (nor in libonnx's schemas).
  expect_refused(one_node("RMSNormalization", 22, {"x", "x"}), ErrorCode::kInvalidArgument,
                 {"is not an operator of domain 'ai.onnx' at opset 22"});
  // BitCast-26 requires 'to'.
  expect_refused(one_node("BitCast", 26, {"x"}), ErrorCode::kInvalidArgument,
                 {"(BitCast)", "lacks the required attribute 'to'"});
  // Attention-24 added a seventh input; 23 takes at most six.
  expect_refused(one_node("Attention", 23, {"x", "x", "x", "", "", "", "x"}),
                 ErrorCode::kInvalidArgument,
                 {"has 7 inputs", "Attention (opset 23) takes 3 to 6"});
  auto attn = testing::load_proto(one_node("Attention", 24, {"x", "x", "x", "", "", "", "x"}));
  EXPECT_TRUE(attn) << attn.error().to_string();
}

TEST(OnnxNewerOpsets, UnchangedOpsKeepTheirOpsetSeventeenSchema) {
  // Relu has no version after 14: at 24 libonnx's Relu-14 still checks it.
  auto m = one_node("Relu", 24, {"x"});
  add_attr(m, "alpha", AttributeProto::FLOAT)->set_f(1);
  expect_refused(m, ErrorCode::kInvalidArgument, {"(Relu)", "attribute 'alpha'"});
  expect_refused(one_node("NoSuchOp", 24, {"x"}), ErrorCode::kInvalidArgument,
                 {"'the_node' (NoSuchOp)", "is not an operator of domain 'ai.onnx' at opset 24"});
}

TEST(OnnxNewerOpsets, NewerElementTypesAreRefusedByName) {
  auto m = one_node("Identity", 21, {"w"});
  TensorProto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(22);  // INT4
  w->add_dims(2);
  w->set_raw_data(std::string(1, '\x12'));
  expect_refused(m, ErrorCode::kUnsupported, {"INT4 tensors are not supported"});
}

}  // namespace
}  // namespace hone::onnx
