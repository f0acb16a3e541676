// Malformed models: each must give a clear Error naming what was wrong.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "hone/onnx.h"
#include "onnx_test_util.h"

namespace hone::onnx {
namespace {

using ::onnx::ModelProto;
using ::onnx::TensorProto;
using testing::load_proto;
using testing::small_model;

/// Expects failure with `code` and a message mentioning each of `needles`.
void expect_error(const Result<Graph>& r, ErrorCode code,
                  std::initializer_list<std::string> needles) {
  ASSERT_FALSE(r) << "expected an error";
  EXPECT_EQ(r.error().code(), code) << r.error().to_string();
  const std::string text = r.error().to_string();
  for (const auto& n : needles)
    EXPECT_NE(text.find(n), std::string::npos) << "'" << n << "' not in: " << text;
}

TensorProto* weight(ModelProto& m) {
  return m.mutable_graph()->mutable_initializer(0);
}

TEST(OnnxHostile, NotProtobufAtAll) {
  const std::string text = "this is not an onnx model";
  std::vector<uint8_t> bytes(text.begin(), text.end());
  expect_error(load_model_from_bytes(bytes, "."), ErrorCode::kCorrupt, {"ModelProto"});
  const std::vector<uint8_t> huge_len{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f};
  expect_error(load_model_from_bytes(huge_len, "."), ErrorCode::kCorrupt, {"ModelProto"});
  expect_error(load_model_from_bytes({}, "."), ErrorCode::kCorrupt, {"no graph"});
}

TEST(OnnxHostile, TruncatedFilesFailAtEveryCut) {
  const auto bytes = testing::serialize(small_model());
  for (size_t cut = 1; cut < bytes.size(); cut += 3) {
    auto r = load_model_from_bytes(std::span<const uint8_t>(bytes.data(), cut), ".");
    // A cut may land on a field boundary and leave a well-formed but
    // incomplete model; it must then be rejected structurally.
    if (r) {
      ADD_FAILURE() << "a model truncated to " << cut << " of " << bytes.size() << " bytes loaded";
      continue;
    }
    EXPECT_NE(r.error().code(), ErrorCode::kInternal);
  }
}

TEST(OnnxHostile, MissingFile) {
  auto r = load_model("/nonexistent/dir/model.onnx");
  expect_error(r, ErrorCode::kNotFound, {"/nonexistent/dir/model.onnx"});
}

TEST(OnnxHostile, RawDataSizeDoesNotMatchDims) {
  auto m = small_model();
  weight(m)->clear_float_data();
  weight(m)->set_raw_data(std::string(20, '\0'));  // 2x3 floats need 24
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'", "20 bytes", "24"});
}

TEST(OnnxHostile, TypedDataCountDoesNotMatchDims) {
  auto m = small_model();
  weight(m)->add_float_data(1.0f);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'", "7 values"});
}

TEST(OnnxHostile, DataInTheWrongTypedField) {
  auto m = small_model();
  weight(m)->clear_float_data();
  for (int i = 0; i < 6; ++i) weight(m)->add_int64_data(i);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'", "typed field"});
}

TEST(OnnxHostile, NegativeDim) {
  auto m = small_model();
  weight(m)->set_dims(1, -3);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'", "negative dim -3"});
  auto n = small_model();
  n.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-1);
  expect_error(load_proto(n), ErrorCode::kCorrupt, {"graph input 'x'", "negative dim"});
}

TEST(OnnxHostile, AbsurdDimsDoNotAllocate) {
  auto m = small_model();
  weight(m)->set_dims(0, int64_t{1} << 40);
  weight(m)->set_dims(1, int64_t{1} << 40);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'"});
  // 2^40 x 2^40 overflows nothing in int64 until multiplied by more dims.
  weight(m)->add_dims(int64_t{1} << 40);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'", "absurd"});
  // Raw data of 2^40 * 2^40 * 4 bytes claimed with 4 present.
  auto r = small_model();
  weight(r)->clear_float_data();
  weight(r)->set_dims(0, int64_t{1} << 30);
  weight(r)->set_dims(1, int64_t{1} << 30);
  weight(r)->set_raw_data(std::string(4, '\0'));
  expect_error(load_proto(r), ErrorCode::kCorrupt, {"tensor 'w'", "raw_data"});
}

TEST(OnnxHostile, UnknownAndStringDataTypes) {
  auto m = small_model();
  weight(m)->set_data_type(99);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"tensor 'w'", "99"});
  auto s = small_model();
  weight(s)->clear_float_data();
  weight(s)->set_data_type(TensorProto::STRING);
  for (int i = 0; i < 6; ++i) weight(s)->add_string_data("a");
  expect_error(load_proto(s), ErrorCode::kUnsupported,
               {"string tensors are not supported", "tensor 'w'"});
}

TEST(OnnxHostile, UndefinedValueNameNamesTheNode) {
  auto m = small_model();
  m.mutable_graph()->mutable_node(0)->set_input(1, "nowhere");
  m.mutable_graph()->clear_initializer();
  expect_error(load_proto(m), ErrorCode::kInvalidArgument, {"'add' (Add)", "'nowhere'"});
}

TEST(OnnxHostile, Cycle) {
  auto m = small_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "y");  // add reads relu's output, relu reads add's
  expect_error(load_proto(m), ErrorCode::kInvalidArgument, {"cycle"});
}

TEST(OnnxHostile, DuplicateValueNames) {
  auto m = small_model();
  m.mutable_graph()->mutable_node(1)->set_output(0, "s");
  m.mutable_graph()->mutable_output(0)->set_name("s");
  expect_error(load_proto(m), ErrorCode::kInvalidArgument, {"'s'", "twice", "'relu'"});
  auto i = small_model();
  *i.mutable_graph()->add_initializer() = i.graph().initializer(0);
  expect_error(load_proto(i), ErrorCode::kInvalidArgument, {"'w'", "twice"});
  auto in = small_model();
  *in.mutable_graph()->add_input() = in.graph().input(0);
  expect_error(load_proto(in), ErrorCode::kInvalidArgument, {"'x'", "twice"});
  auto over = small_model();
  over.mutable_graph()->mutable_node(0)->set_output(0, "x");
  over.mutable_graph()->mutable_node(1)->set_input(0, "x");
  expect_error(load_proto(over), ErrorCode::kInvalidArgument, {"'x'", "graph input"});
}

TEST(OnnxHostile, NodeWithoutOpType) {
  auto m = small_model();
  m.mutable_graph()->mutable_node(1)->clear_op_type();
  expect_error(load_proto(m), ErrorCode::kInvalidArgument, {"'relu'", "no op_type"});
}

TEST(OnnxHostile, GraphOutputNeverProduced) {
  auto m = small_model();
  m.mutable_graph()->mutable_output(0)->set_name("ghost");
  expect_error(load_proto(m), ErrorCode::kInvalidArgument, {"'ghost'", "not produced"});
}

TEST(OnnxHostile, SubgraphReadingUndefinedName) {
  auto m = small_model();
  auto* n = m.mutable_graph()->mutable_node(1);
  n->set_domain("org.custom");
  auto* a = n->add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  body->set_name("body");
  auto* inner = body->add_node();
  inner->set_name("inner");
  inner->set_op_type("Neg");
  inner->add_input("undefined_outer");
  inner->add_output("z");
  testing::set_tensor_type(body->add_output(), "z", TensorProto::FLOAT, {});
  expect_error(load_proto(m), ErrorCode::kInvalidArgument,
               {"'inner' (Neg)", "'undefined_outer'", "body"});
  // The same body reading an outer value is fine.
  inner->set_input(0, "s");
  EXPECT_TRUE(load_proto(m)) << load_proto(m).error().to_string();
}

TEST(OnnxHostile, AttributeDeclaredTypeDisagreesWithItsValue) {
  auto m = small_model();
  auto* a = m.mutable_graph()->mutable_node(1)->add_attribute();
  m.mutable_graph()->mutable_node(1)->set_domain("org.custom");
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_f(0.5f);
  expect_error(load_proto(m), ErrorCode::kCorrupt, {"'alpha'", "'relu'"});
}

TEST(OnnxHostile, FunctionAttributeReference) {
  auto m = small_model();
  auto* a = m.mutable_graph()->mutable_node(1)->add_attribute();
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_ref_attr_name("outer_alpha");
  expect_error(load_proto(m), ErrorCode::kUnsupported, {"'outer_alpha'", "'relu'"});
}

TEST(OnnxHostile, DeeplyNestedSubgraphsAreRejectedNotOverflowingTheStack) {
  ModelProto m = small_model();
  ::onnx::GraphProto* g = m.mutable_graph();
  for (int depth = 0; depth < 200; ++depth) {
    auto* n = g->add_node();
    n->set_op_type("If");
    n->set_domain("org.custom");
    auto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(::onnx::AttributeProto::GRAPH);
    g = a->mutable_g();
  }
  auto r = load_proto(m);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
}

// Found by the fuzzer: ONNX's Scan shape inference reads through a null
// pointer when num_scan_inputs is missing. Import must not run it then.
TEST(OnnxHostile, SchemaInvalidNodeDoesNotReachShapeInference) {
  const auto bytes = testing::serialize([] {
    ModelProto m;
    auto data = load_model(testing::kNodeData / "test_scan9_sum" / "model.onnx");
    EXPECT_TRUE(data);
    std::FILE* f = std::fopen((testing::kNodeData / "test_scan9_sum" / "model.onnx").c_str(), "rb");
    std::string s;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    EXPECT_TRUE(m.ParseFromString(s));
    auto* attrs = m.mutable_graph()->mutable_node(0)->mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
      if (attrs->Get(i).name() == "num_scan_inputs") attrs->DeleteSubrange(i, 1);
    return m;
  }());
  // The schema check (as strict as ONNX Runtime's load) refuses it, naming
  // the node and the attribute, before libonnx's shape inference sees it.
  expect_error(load_model_from_bytes(bytes, "."), ErrorCode::kInvalidArgument,
               {"(Scan)", "required attribute 'num_scan_inputs'"});
}

// Every input the fuzzer ever crashed on (tests/fuzz/regressions) must import
// or fail with an Error. The ConvTranspose one crashes inside libonnx's own
// shape inference, which import now runs in a child process.
TEST(OnnxHostile, FuzzRegressionsImportWithoutCrashing) {
  const std::filesystem::path dir =
      std::filesystem::path(HONE_SOURCE_DIR) / "tests/fuzz/regressions";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    auto g = load_model(entry.path());
    if (g)
      EXPECT_TRUE(g->validate()) << entry.path();
    else
      EXPECT_FALSE(g.error().to_string().empty()) << entry.path();
    ++seen;
  }
  EXPECT_GE(seen, 2);
}

}  // namespace
}  // namespace hone::onnx
