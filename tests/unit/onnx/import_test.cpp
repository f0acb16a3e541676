#include "hone/onnx.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "onnx_test_util.h"

namespace hone::onnx {
namespace {

using testing::find;
using testing::find_op;
using testing::kNodeData;

TEST(OnnxImport, ConvWithStridesPadding) {
  auto g = load_model(kNodeData / "test_conv_with_strides_padding" / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->name(), "test_conv_with_strides_padding");
  ASSERT_EQ(g->inputs().size(), 2u);
  const Value& x = g->value(g->inputs()[0]);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::kF32);
  ASSERT_TRUE(x.shape);
  EXPECT_EQ(*x.shape, (Shape{1, 1, 7, 5}));
  ASSERT_EQ(g->outputs().size(), 1u);
  const Value& y = g->value(g->outputs()[0]);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.dtype, DType::kF32);
  EXPECT_EQ(*y.shape, (Shape{1, 1, 4, 3}));
  ASSERT_EQ(g->nodes().size(), 1u);
  const Node& conv = g->nodes()[0];
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(conv.name, "Conv_0");  // unnamed in the file
  EXPECT_EQ(conv.attr_ints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(g->opset(""), 11);
  EXPECT_EQ(g->metadata().at("onnx.producer_name"), "backend-test");
  EXPECT_EQ(g->metadata().at("onnx.ir_version"), "6");
}

TEST(OnnxImport, IfBranchesAreSubgraphsWithFoldedConstants) {
  auto g = load_model(kNodeData / "test_if" / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  const Node* node = find_op(*g, "If");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(g->value(node->inputs[0]).dtype, DType::kBool);
  const Graph* then_g = node->attr_graph("then_branch");
  const Graph* else_g = node->attr_graph("else_branch");
  ASSERT_NE(then_g, nullptr);
  ASSERT_NE(else_g, nullptr);
  EXPECT_EQ(then_g->name(), "then_body");
  // The branch's only node was a Constant: it is now an initializer.
  EXPECT_TRUE(then_g->nodes().empty());
  ASSERT_EQ(then_g->outputs().size(), 1u);
  const Value& out = then_g->value(then_g->outputs()[0]);
  ASSERT_TRUE(out.initializer);
  EXPECT_EQ(out.initializer->shape(), (std::vector<int64_t>{5}));
  const float* p = out.initializer->data<float>();
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(p[4], 5.0f);
  const Value& else_out = else_g->value(else_g->outputs()[0]);
  ASSERT_TRUE(else_out.initializer);
  EXPECT_EQ(else_out.initializer->data<float>()[0], 5.0f);
}

TEST(OnnxImport, LoopBodyCapturesNothingButHasTypedInputs) {
  auto g = load_model(kNodeData / "test_loop11" / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  const Node* loop = find_op(*g, "Loop");
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->outputs.size(), 2u);
  const Graph* body = loop->attr_graph("body");
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(body->inputs().size(), 3u);
  EXPECT_EQ(body->value(body->inputs()[0]).name, "iter_count");
  EXPECT_EQ(body->value(body->inputs()[0]).dtype, DType::kI64);
  EXPECT_EQ(body->outputs().size(), 3u);
  // The Constant tensor from float_data is folded.
  const Value* x = find(*body, "x");
  ASSERT_NE(x, nullptr);
  ASSERT_TRUE(x->initializer);
  EXPECT_EQ(x->initializer->data<float>()[2], 3.0f);
  const Value* one = find(*body, "one");
  ASSERT_TRUE(one && one->initializer);
  EXPECT_EQ(one->initializer->rank(), 0u);
  EXPECT_EQ(one->initializer->data<int64_t>()[0], 1);
  EXPECT_TRUE(body->captured_values().empty());
  const Value& res_scan = g->value(loop->outputs[1]);
  EXPECT_EQ(*res_scan.shape, (Shape{5, 1}));
}

TEST(OnnxImport, SequenceTypes) {
  auto g = load_model(kNodeData / "test_sequence_insert_at_back" / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  const Value& seq = g->value(g->inputs()[0]);
  EXPECT_EQ(seq.kind, ValueKind::kSequence);
  EXPECT_EQ(seq.dtype, DType::kI64);
  const Value& t = g->value(g->inputs()[1]);
  EXPECT_EQ(t.kind, ValueKind::kTensor);
  EXPECT_EQ(*t.shape, (Shape{3}));
  EXPECT_EQ(g->value(g->outputs()[0]).kind, ValueKind::kSequence);
}

TEST(OnnxImport, OptionalTypes) {
  auto g = load_model(kNodeData / "test_optional_has_element" / "model.onnx");
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->value(g->inputs()[0]).kind, ValueKind::kOptional);
  EXPECT_EQ(g->value(g->inputs()[0]).dtype, DType::kF32);
  EXPECT_EQ(g->value(g->outputs()[0]).dtype, DType::kBool);
}

TEST(OnnxImport, SymbolicAndUnknownDims) {
  auto m = testing::small_model();
  auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("batch");
  shape->mutable_dim(1)->clear_dim_value();
  shape->add_dim()->set_dim_value(3);
  auto g = testing::load_proto(m);
  ASSERT_TRUE(g) << g.error().to_string();
  const Value& x = g->value(g->inputs()[0]);
  ASSERT_TRUE(x.shape);
  EXPECT_TRUE((*x.shape)[0].is_symbolic());
  EXPECT_EQ((*x.shape)[0].symbol_name(), "batch");
  ASSERT_EQ(x.shape->rank(), 3u);
  EXPECT_TRUE((*x.shape)[1].is_unknown());
  EXPECT_EQ((*x.shape)[2].value(), 3);
}

TEST(OnnxImport, ShapeInferenceTypesIntermediateValues) {
  auto g = testing::load_proto(testing::small_model());
  ASSERT_TRUE(g) << g.error().to_string();
  const Value* s = find(*g, "s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->dtype, DType::kF32);
  ASSERT_TRUE(s->shape);
  EXPECT_EQ(*s->shape, (Shape{2, 3}));
}

TEST(OnnxImport, InputWithInitializerBecomesAConstant) {
  auto m = testing::small_model();
  testing::set_tensor_type(m.mutable_graph()->add_input(), "w", ::onnx::TensorProto::FLOAT, {2, 3});
  auto g = testing::load_proto(m);
  ASSERT_TRUE(g) << g.error().to_string();
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->value(g->inputs()[0]).name, "x");
  const Value* w = find(*g, "w");
  ASSERT_TRUE(w && w->initializer);
  EXPECT_EQ(w->initializer->data<float>()[5], 5.0f);
}

TEST(OnnxImport, ModelMetadataAndOpsets) {
  auto m = testing::small_model();
  m.set_producer_name("me");
  m.set_producer_version("1.2");
  m.set_doc_string("docs");
  m.set_domain("org.example");
  m.set_model_version(7);
  auto* kv = m.add_metadata_props();
  kv->set_key("author");
  kv->set_value("someone");
  auto* op = m.add_opset_import();
  op->set_domain("ai.onnx.ml");
  op->set_version(3);
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  auto g = testing::load_proto(m);
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->opset(""), 17);
  EXPECT_EQ(g->opset("ai.onnx.ml"), 3);
  EXPECT_EQ(g->metadata().at("onnx.producer_name"), "me");
  EXPECT_EQ(g->metadata().at("onnx.producer_version"), "1.2");
  EXPECT_EQ(g->metadata().at("onnx.doc_string"), "docs");
  EXPECT_EQ(g->metadata().at("onnx.domain"), "org.example");
  EXPECT_EQ(g->metadata().at("onnx.model_version"), "7");
  EXPECT_EQ(g->metadata().at("author"), "someone");
}

TEST(OnnxImport, AttributesOfEveryKind) {
  auto m = testing::small_model();
  auto* n = m.mutable_graph()->mutable_node(1);
  n->set_domain("org.custom");  // no schema: any attributes go
  using A = ::onnx::AttributeProto;
  auto add = [&](const std::string& name, A::AttributeType type) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  };
  add("i", A::INT)->set_i(-4);
  add("f", A::FLOAT)->set_f(2.5f);
  add("s", A::STRING)->set_s("hello");
  auto* t = add("t", A::TENSOR)->mutable_t();
  t->set_data_type(::onnx::TensorProto::INT32);
  t->add_dims(2);
  t->add_int32_data(7);
  t->add_int32_data(-8);
  auto* ints = add("ints", A::INTS);
  ints->add_ints(1);
  ints->add_ints(2);
  auto* floats = add("floats", A::FLOATS);
  floats->add_floats(0.5f);
  auto* strings = add("strings", A::STRINGS);
  strings->add_strings("a");
  strings->add_strings("b");
  auto* tensors = add("tensors", A::TENSORS)->add_tensors();
  tensors->set_data_type(::onnx::TensorProto::DOUBLE);
  tensors->add_double_data(3.25);
  auto* sg = add("g", A::GRAPH)->mutable_g();
  sg->set_name("sub");
  testing::set_tensor_type(sg->add_output(), "x", ::onnx::TensorProto::FLOAT, {2, 3});  // captured
  auto* gs = add("gs", A::GRAPHS)->add_graphs();
  gs->set_name("sub2");
  testing::set_tensor_type(gs->add_output(), "w", ::onnx::TensorProto::FLOAT, {2, 3});
  auto* sp = add("sp", A::SPARSE_TENSOR)->mutable_sparse_tensor();
  sp->add_dims(2);
  sp->add_dims(2);
  sp->mutable_values()->set_data_type(::onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(1);
  sp->mutable_values()->add_float_data(9.0f);
  sp->mutable_indices()->set_data_type(::onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(1);
  sp->mutable_indices()->add_int64_data(3);
  auto* tp = add("tp", A::TYPE_PROTO)->mutable_tp();
  tp->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      ::onnx::TensorProto::FLOAT);
  auto* tps = add("tps", A::TYPE_PROTOS);
  tps->add_type_protos()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);

  auto g = testing::load_proto(m);
  ASSERT_TRUE(g) << g.error().to_string();
  const Node* relu = find_op(*g, "Relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->domain, "org.custom");
  EXPECT_EQ(relu->attr_int("i", 0), -4);
  EXPECT_EQ(relu->attr_float("f", 0), 2.5f);
  EXPECT_EQ(relu->attr_string("s", ""), "hello");
  ASSERT_NE(relu->attr_tensor("t"), nullptr);
  EXPECT_EQ(relu->attr_tensor("t")->dtype(), DType::kI32);
  EXPECT_EQ(relu->attr_tensor("t")->data<int32_t>()[1], -8);
  EXPECT_EQ(relu->attr_ints("ints"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(relu->attr_floats("floats"), (std::vector<float>{0.5f}));
  EXPECT_EQ(relu->attr_strings("strings"), (std::vector<std::string>{"a", "b"}));
  const auto& ts = std::get<std::vector<Tensor>>(relu->attrs.at("tensors"));
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_EQ(ts[0].data<double>()[0], 3.25);
  const Graph* sub = relu->attr_graph("g");
  ASSERT_NE(sub, nullptr);
  ASSERT_EQ(sub->captured_values().size(), 1u);
  EXPECT_EQ(sub->value(sub->captured_values()[0]).name, "x");
  EXPECT_EQ(sub->value(sub->captured_values()[0]).dtype, DType::kF32);
  const auto& graphs = std::get<std::vector<std::shared_ptr<const Graph>>>(relu->attrs.at("gs"));
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_EQ(graphs[0]->name(), "sub2");
  const Tensor* dense = relu->attr_tensor("sp");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(dense->data<float>()[3], 9.0f);
  EXPECT_EQ(dense->data<float>()[0], 0.0f);
  EXPECT_EQ(relu->attr_string("tp", ""), "seq(tensor(float))");
  EXPECT_EQ(relu->attr_strings("tps"), (std::vector<std::string>{"tensor(int64)"}));
}

TEST(OnnxImport, ConstantVariantsFold) {
  auto m = testing::small_model();
  auto* g = m.mutable_graph();
  using A = ::onnx::AttributeProto;
  auto constant = [&](const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type("Constant");
    n->add_output(out);
    return n->add_attribute();
  };
  auto* a = constant("cf");
  a->set_name("value_float");
  a->set_type(A::FLOAT);
  a->set_f(1.5f);
  a = constant("cfs");
  a->set_name("value_floats");
  a->set_type(A::FLOATS);
  a->add_floats(1);
  a->add_floats(2);
  a = constant("ci");
  a->set_name("value_int");
  a->set_type(A::INT);
  a->set_i(42);
  a = constant("cis");
  a->set_name("value_ints");
  a->set_type(A::INTS);
  a->add_ints(3);
  for (const char* name : {"cf", "cfs", "ci", "cis"}) testing::set_tensor_type(g->add_output(), name, 0, {});
  for (int i = 0; i < 4; ++i) g->mutable_output(i + 1)->clear_type();
  auto r = testing::load_proto(m);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->nodes().size(), 2u);
  EXPECT_EQ(find(*r, "cf")->initializer->data<float>()[0], 1.5f);
  EXPECT_EQ(find(*r, "cfs")->initializer->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(find(*r, "ci")->initializer->dtype(), DType::kI64);
  EXPECT_EQ(find(*r, "ci")->initializer->data<int64_t>()[0], 42);
  EXPECT_EQ(find(*r, "cis")->initializer->data<int64_t>()[0], 3);

  auto s = testing::small_model();
  auto* bad = s.mutable_graph()->add_node();
  bad->set_op_type("Constant");
  bad->set_name("str");
  bad->add_output("cs");
  auto* sa = bad->add_attribute();
  sa->set_name("value_string");
  sa->set_type(A::STRING);
  sa->set_s("x");
  auto e = testing::load_proto(s);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(e.error().to_string().find("'str'"), std::string::npos) << e.error().to_string();
}

TEST(OnnxImport, UnnamedNodesGetUniqueNames) {
  auto m = testing::small_model();
  m.mutable_graph()->mutable_node(0)->clear_name();
  m.mutable_graph()->mutable_node(1)->set_name("Add_0");  // collides with the generated name
  auto g = testing::load_proto(m);
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_NE(g->nodes()[0].name, g->nodes()[1].name);
  EXPECT_EQ(g->nodes()[0].name.rfind("Add_0", 0), 0u);
}

// Every model of the node tests loads, or fails for a reason hone owns up to
// (a dtype or type it does not support), never as corrupt or internal.
TEST(OnnxImport, EveryNodeTestModelLoadsOrIsUnsupported) {
  int loaded = 0, unsupported = 0;
  std::vector<std::string> failures;
  for (const auto& entry : std::filesystem::directory_iterator(kNodeData)) {
    const auto file = entry.path() / "model.onnx";
    if (!std::filesystem::exists(file)) continue;
    auto g = load_model(file);
    if (g) {
      ++loaded;
    } else if (g.error().code() == ErrorCode::kUnsupported) {
      ++unsupported;
    } else {
      failures.push_back(entry.path().filename().string() + ": " + g.error().to_string());
    }
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  std::printf("node models: %d loaded, %d unsupported\n", loaded, unsupported);
  EXPECT_GT(loaded, 800);
  EXPECT_LT(unsupported, 100);
}

}  // namespace
}  // namespace hone::onnx
