// Export, then import again: same structure, bitwise-equal initializers, and
// files the ONNX checker accepts.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <cstring>
#include <fstream>

#include "hone/graph_builder.h"
#include "hone/half.h"
#include "hone/onnx.h"
#include "onnx_test_util.h"

namespace hone::onnx {
namespace {

using testing::find;
using testing::kNodeData;
using testing::TempDir;

Tensor iota_f32(std::vector<int64_t> shape) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 0.25f * static_cast<float>(i) - 3.0f;
  return t;
}

Graph mlp() {
  GraphBuilder b("mlp");
  auto x = b.input("x", DType::kF32, {Dim::symbol("batch"), 64});
  auto w = b.constant("w", iota_f32({64, 64}));   // 16 KiB: goes external
  auto bias = b.constant("b", iota_f32({64}));    // 256 B: stays inline
  auto h = b.relu(b.gemm(x, w, bias, {.trans_b = true, .alpha = 0.5f}));
  b.output(b.softmax(h, 1), "y");
  auto g = std::move(b).build();
  EXPECT_TRUE(g) << g.error().to_string();
  g->metadata()["author"] = "tests";
  return std::move(*g);
}

std::string check(const std::filesystem::path& file) {
  try {
    ::onnx::checker::check_model(file.string());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

::onnx::ModelProto read_proto(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  ::onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromIstream(&in));
  return m;
}

template <class T>
bool same_if(const Attribute& a, const Attribute& b, bool* decided) {
  const T* x = std::get_if<T>(&a);
  if (x == nullptr) return false;
  *decided = true;
  const T* y = std::get_if<T>(&b);
  return y != nullptr && *x == *y;
}

/// Equality of the attribute kinds that have operator== (graphs and tensor
/// lists are compared elsewhere or by count).
bool plain_attr_equal(const Attribute& a, const Attribute& b) {
  bool decided = false;
  bool eq = same_if<int64_t>(a, b, &decided) || same_if<float>(a, b, &decided) ||
            same_if<std::string>(a, b, &decided) || same_if<std::vector<int64_t>>(a, b, &decided) ||
            same_if<std::vector<float>>(a, b, &decided) || same_if<std::vector<std::string>>(a, b, &decided);
  if (decided) return eq;
  if (const auto* ts = std::get_if<std::vector<Tensor>>(&a)) {
    const auto& us = std::get<std::vector<Tensor>>(b);
    if (ts->size() != us.size()) return false;
    for (size_t i = 0; i < ts->size(); ++i)
      if (!(*ts)[i].bitwise_equal(us[i])) return false;
    return true;
  }
  return std::get<std::vector<std::shared_ptr<const Graph>>>(a).size() ==
         std::get<std::vector<std::shared_ptr<const Graph>>>(b).size();
}

/// Same values (names, kinds, dtypes, shapes, initializer bytes) and nodes.
void expect_same_structure(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    const Value& va = a.value(a.inputs()[i]);
    const Value& vb = b.value(b.inputs()[i]);
    EXPECT_EQ(va.name, vb.name);
    EXPECT_EQ(va.kind, vb.kind);
    EXPECT_EQ(va.dtype, vb.dtype);
    EXPECT_EQ(va.shape, vb.shape) << va.name;
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i)
    EXPECT_EQ(a.value(a.outputs()[i]).name, b.value(b.outputs()[i]).name);
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& na = a.nodes()[i];
    const Node* nb = nullptr;
    for (const Node& n : b.nodes())
      if (n.name == na.name) nb = &n;
    ASSERT_NE(nb, nullptr) << na.name;
    EXPECT_EQ(na.op_type, nb->op_type);
    EXPECT_EQ(na.domain, nb->domain);
    ASSERT_EQ(na.inputs.size(), nb->inputs.size());
    for (size_t k = 0; k < na.inputs.size(); ++k)
      EXPECT_EQ(na.inputs[k] == kNoValue ? "" : a.value(na.inputs[k]).name,
                nb->inputs[k] == kNoValue ? "" : b.value(nb->inputs[k]).name);
    ASSERT_EQ(na.attrs.size(), nb->attrs.size()) << na.name;
    for (const auto& [key, attr] : na.attrs) {
      ASSERT_TRUE(nb->attrs.count(key)) << key;
      const Attribute& other = nb->attrs.at(key);
      EXPECT_EQ(attr.index(), other.index()) << key;
      if (const auto* g = std::get_if<std::shared_ptr<const Graph>>(&attr))
        expect_same_structure(**g, *std::get<std::shared_ptr<const Graph>>(other));
      else if (const auto* t = std::get_if<Tensor>(&attr))
        EXPECT_TRUE(t->bitwise_equal(std::get<Tensor>(other))) << key;
      else
        EXPECT_TRUE(plain_attr_equal(attr, other)) << key;
    }
  }
  for (const Value& va : a.values()) {
    if (!va.initializer) continue;
    const Value* vb = find(b, va.name);
    ASSERT_TRUE(vb && vb->initializer) << va.name;
    EXPECT_TRUE(va.initializer->bitwise_equal(*vb->initializer)) << va.name;
  }
}

TEST(OnnxRoundTrip, InlineBuilderGraph) {
  TempDir dir;
  const Graph g = mlp();
  const auto file = dir.path() / "mlp.onnx";
  ASSERT_TRUE(save_model(g, file));
  EXPECT_EQ(check(file), "");
  auto back = load_model(file);
  ASSERT_TRUE(back) << back.error().to_string();
  expect_same_structure(g, *back);
  EXPECT_EQ(back->opset(""), 17);
  EXPECT_EQ(back->metadata().at("author"), "tests");
  // Shape inference at export typed the output, symbolic batch included.
  const Value& y = back->value(back->outputs()[0]);
  EXPECT_EQ(y.dtype, DType::kF32);
  ASSERT_TRUE(y.shape);
  EXPECT_EQ((*y.shape)[0].symbol_name(), "batch");
  EXPECT_EQ((*y.shape)[1].value(), 64);
  // No temporary files are left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(OnnxRoundTrip, ExternalData) {
  TempDir dir;
  const Graph g = mlp();
  const auto file = dir.path() / "mlp.onnx";
  ASSERT_TRUE(save_model(g, file, {.external_data = true, .external_threshold_bytes = 1024}));
  const auto weights = dir.path() / "mlp.weights";
  ASSERT_TRUE(std::filesystem::exists(weights));
  EXPECT_EQ(std::filesystem::file_size(weights), 64u * 64u * 4u);
  EXPECT_EQ(check(file), "");
  const auto proto = read_proto(file);
  int external = 0;
  for (const auto& t : proto.graph().initializer()) {
    if (t.data_location() != ::onnx::TensorProto::EXTERNAL) {
      EXPECT_EQ(t.name(), "b");
      continue;
    }
    ++external;
    EXPECT_EQ(t.name(), "w");
    std::map<std::string, std::string> kv;
    for (const auto& e : t.external_data()) kv[e.key()] = e.value();
    EXPECT_EQ(kv["location"], "mlp.weights");
    EXPECT_EQ(std::stoll(kv["offset"]) % 64, 0);
    EXPECT_EQ(kv["length"], "16384");
  }
  EXPECT_EQ(external, 1);
  auto back = load_model(file);
  ASSERT_TRUE(back) << back.error().to_string();
  expect_same_structure(g, *back);
}

TEST(OnnxRoundTrip, ExternalDataSeveralTensorsAreAligned) {
  TempDir dir;
  GraphBuilder b("many", 17);
  auto x = b.input("x", DType::kF32, {3});
  ValueId acc = x;
  for (int i = 0; i < 3; ++i) acc = b.add(acc, b.constant("c" + std::to_string(i), iota_f32({3})));
  b.output(acc, "y");
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  const auto file = dir.path() / "many.onnx";
  ASSERT_TRUE(save_model(*g, file, {.external_data = true, .external_threshold_bytes = 1, .external_file = "w.bin"}));
  EXPECT_EQ(std::filesystem::file_size(dir.path() / "w.bin"), 64u * 2 + 12u);
  EXPECT_EQ(check(file), "");
  auto back = load_model(file);
  ASSERT_TRUE(back) << back.error().to_string();
  expect_same_structure(*g, *back);
  // A weights file outside the model's folder is refused.
  EXPECT_FALSE(save_model(*g, file, {.external_data = true, .external_file = "../escape.bin"}));
}

TEST(OnnxRoundTrip, EveryDtypeBitwise) {
  TempDir dir;
  GraphBuilder b("dtypes");
  const std::vector<DType> dtypes{DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                                  DType::kU8,  DType::kI16, DType::kU16, DType::kI32,  DType::kU32,
                                  DType::kI64, DType::kU64, DType::kBool};
  std::vector<Tensor> tensors;
  for (DType dt : dtypes) {
    Tensor t = Tensor::zeros(dt, {2, 5});
    auto* bytes = static_cast<uint8_t*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(dt == DType::kBool ? i % 2 : i * 37 + 11);
    tensors.push_back(t);
    auto c = b.constant(std::string("c_") + std::string(dtype_name(dt)), t);
    b.output(b.op("Identity", {c}));
  }
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  for (bool external : {false, true}) {
    const auto file = dir.path() / (external ? "ext.onnx" : "inline.onnx");
    ASSERT_TRUE(save_model(*g, file, {.external_data = external, .external_threshold_bytes = 8}));
    EXPECT_EQ(check(file), "");
    auto back = load_model(file);
    ASSERT_TRUE(back) << back.error().to_string();
    for (size_t i = 0; i < dtypes.size(); ++i) {
      const Value* v = find(*back, std::string("c_") + std::string(dtype_name(dtypes[i])));
      ASSERT_TRUE(v && v->initializer);
      EXPECT_TRUE(v->initializer->bitwise_equal(tensors[i])) << dtype_name(dtypes[i]);
    }
  }
}

TEST(OnnxRoundTrip, RealModelsWithSubgraphs) {
  TempDir dir;
  for (const char* name : {"test_if", "test_loop11", "test_scan9_sum", "test_sequence_insert_at_back",
                           "test_conv_with_strides_padding", "test_optional_has_element"}) {
    auto g = load_model(kNodeData / name / "model.onnx");
    ASSERT_TRUE(g) << name << ": " << g.error().to_string();
    const auto file = dir.path() / (std::string(name) + ".onnx");
    auto saved = save_model(*g, file);
    ASSERT_TRUE(saved) << name << ": " << saved.error().to_string();
    EXPECT_EQ(check(file), "") << name;
    auto back = load_model(file);
    ASSERT_TRUE(back) << name << ": " << back.error().to_string();
    expect_same_structure(*g, *back);
  }
}

TEST(OnnxRoundTrip, TypeProtoAttributeGoesBackAsTypeProto) {
  GraphBuilder b("opt", 17);
  auto o = b.op("Optional", {}, {{"type", std::string("tensor(float)")}});
  b.output(b.op("OptionalHasElement", {o}), "has");
  auto g = std::move(b).build();
  ASSERT_TRUE(g);
  TempDir dir;
  const auto file = dir.path() / "opt.onnx";
  ASSERT_TRUE(save_model(*g, file));
  EXPECT_EQ(check(file), "");
  const auto proto = read_proto(file);
  ASSERT_EQ(proto.graph().node(0).attribute(0).type(), ::onnx::AttributeProto::TYPE_PROTO);
  auto back = load_model(file);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->nodes()[0].attr_string("type", ""), "tensor(float)");
}

TEST(OnnxRoundTrip, SaveIntoMissingFolderFailsCleanly) {
  auto r = save_model(mlp(), "/nonexistent/folder/m.onnx");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kIo);
  EXPECT_NE(r.error().to_string().find("/nonexistent/folder/m.onnx"), std::string::npos);
}

// Every node test model that imports exports to something the checker takes
// and that imports again to the same structure.
TEST(OnnxRoundTrip, EveryNodeTestModel) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kNodeData)) {
    auto g = load_model(entry.path() / "model.onnx");
    if (!g) continue;
    auto bytes = save_model_to_bytes(*g);
    ASSERT_TRUE(bytes) << entry.path() << ": " << bytes.error().to_string();
    ::onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromArray(bytes->data(), static_cast<int>(bytes->size())));
    try {
      ::onnx::checker::check_model(m);
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path().filename() << ": " << e.what();
    }
    auto back = load_model_from_bytes(*bytes, ".");
    ASSERT_TRUE(back) << entry.path() << ": " << back.error().to_string();
    expect_same_structure(*g, *back);
    ++checked;
  }
  EXPECT_GT(checked, 800);
}

}  // namespace
}  // namespace hone::onnx
