// Helpers shared by the ONNX importer/exporter tests: temp folders, building
// ModelProtos by hand, serializing them.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "hone/error.h"
#include "hone/graph.h"
#include "hone/onnx.h"

namespace hone::onnx::testing {

inline const std::filesystem::path kNodeData = "/usr/share/libonnx-testdata/data/node";

/// A fresh folder under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("hone_onnx_test_" + std::to_string(rd()) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::vector<uint8_t> serialize(const ::google::protobuf::MessageLite& m) {
  std::string s = m.SerializeAsString();
  return {s.begin(), s.end()};
}

inline Result<Graph> load_proto(const ::onnx::ModelProto& m, const std::filesystem::path& base = ".") {
  auto bytes = serialize(m);
  return load_model_from_bytes(bytes, base);
}

inline void set_tensor_type(::onnx::ValueInfoProto* vi, const std::string& name, int32_t elem,
                            const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
}

/// A valid model: y = Relu(x + w), x: f32[2,3], w an initializer f32[2,3].
inline ::onnx::ModelProto small_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("small");
  set_tensor_type(g->add_input(), "x", ::onnx::TensorProto::FLOAT, {2, 3});
  set_tensor_type(g->add_output(), "y", ::onnx::TensorProto::FLOAT, {2, 3});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  for (int i = 0; i < 6; ++i) w->add_float_data(static_cast<float>(i));
  auto* add = g->add_node();
  add->set_name("add");
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("s");
  auto* relu = g->add_node();
  relu->set_name("relu");
  relu->set_op_type("Relu");
  relu->add_input("s");
  relu->add_output("y");
  return m;
}

/// The value named `name` in `g`, or nullptr.
inline const Value* find(const Graph& g, const std::string& name) {
  const ValueId id = g.find_value(name);
  return id == kNoValue ? nullptr : &g.value(id);
}

/// The first node with op `op`, or nullptr.
inline const Node* find_op(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes())
    if (n.op_type == op) return &n;
  return nullptr;
}

}  // namespace hone::onnx::testing
