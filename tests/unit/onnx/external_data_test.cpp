// External data: resolved inside the model's folder, sizes checked.
#include <gtest/gtest.h>

#include <cstdio>

#include "hone/onnx.h"
#include "onnx_test_util.h"

namespace hone::onnx {
namespace {

using ::onnx::TensorProto;
using testing::TempDir;

void write_floats(const std::filesystem::path& file, int count, float start) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  for (int i = 0; i < count; ++i) {
    const float v = start + static_cast<float>(i);
    std::fwrite(&v, sizeof v, 1, f);
  }
  std::fclose(f);
}

/// small_model() with w (f32[2,3]) stored externally under `location`.
::onnx::ModelProto external_model(const std::string& location, const std::string& offset = "",
                                  const std::string& length = "") {
  auto m = testing::small_model();
  TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* kv = w->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
  return m;
}

Result<Graph> load_in(const TempDir& dir, const ::onnx::ModelProto& m) {
  const auto file = dir.path() / "model.onnx";
  std::FILE* f = std::fopen(file.c_str(), "wb");
  const auto bytes = testing::serialize(m);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return load_model(file);
}

void expect_error(const Result<Graph>& r, ErrorCode code, std::initializer_list<std::string> needles) {
  ASSERT_FALSE(r) << "expected an error";
  EXPECT_EQ(r.error().code(), code) << r.error().to_string();
  for (const auto& n : needles)
    EXPECT_NE(r.error().to_string().find(n), std::string::npos) << "'" << n << "' not in: " << r.error().to_string();
}

TEST(OnnxExternalData, LoadsAtOffset) {
  TempDir dir;
  write_floats(dir.path() / "w.bin", 10, 100.0f);
  auto g = load_in(dir, external_model("w.bin", "8", "24"));
  ASSERT_TRUE(g) << g.error().to_string();
  const Tensor& w = *testing::find(*g, "w")->initializer;
  EXPECT_EQ(w.data<float>()[0], 102.0f);
  EXPECT_EQ(w.data<float>()[5], 107.0f);
}

TEST(OnnxExternalData, LengthDefaultsToTheRestOfTheFile) {
  TempDir dir;
  write_floats(dir.path() / "w.bin", 6, 1.0f);
  auto g = load_in(dir, external_model("w.bin"));
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(testing::find(*g, "w")->initializer->data<float>()[5], 6.0f);
  // A path that wanders but stays inside is fine.
  std::filesystem::create_directories(dir.path() / "sub");
  auto h = load_in(dir, external_model("sub/../w.bin"));
  EXPECT_TRUE(h) << h.error().to_string();
}

TEST(OnnxExternalData, AbsolutePathRejected) {
  TempDir dir;
  write_floats(dir.path() / "w.bin", 6, 1.0f);
  expect_error(load_in(dir, external_model((dir.path() / "w.bin").string())), ErrorCode::kInvalidArgument,
               {"tensor 'w'", "absolute"});
}

TEST(OnnxExternalData, DotDotEscapeRejected) {
  TempDir outer;
  const auto inner = outer.path() / "model_dir";
  std::filesystem::create_directories(inner);
  write_floats(outer.path() / "secret.bin", 6, 1.0f);
  const auto m = external_model("../secret.bin");
  const auto bytes = testing::serialize(m);
  expect_error(load_model_from_bytes(bytes, inner), ErrorCode::kInvalidArgument,
               {"tensor 'w'", "outside the model's folder"});
}

TEST(OnnxExternalData, SymlinkOutsideRejected) {
  TempDir outer;
  const auto inner = outer.path() / "model_dir";
  std::filesystem::create_directories(inner);
  write_floats(outer.path() / "secret.bin", 6, 1.0f);
  std::filesystem::create_symlink(outer.path() / "secret.bin", inner / "link.bin");
  const auto bytes = testing::serialize(external_model("link.bin"));
  expect_error(load_model_from_bytes(bytes, inner), ErrorCode::kInvalidArgument,
               {"tensor 'w'", "outside the model's folder"});
}

TEST(OnnxExternalData, MissingFileNamesTensorAndFile) {
  TempDir dir;
  expect_error(load_in(dir, external_model("nope.bin")), ErrorCode::kNotFound, {"tensor 'w'", "nope.bin"});
  expect_error(load_in(dir, external_model("")), ErrorCode::kCorrupt, {"tensor 'w'", "location"});
}

TEST(OnnxExternalData, OffsetAndLengthPastTheEnd) {
  TempDir dir;
  write_floats(dir.path() / "w.bin", 6, 1.0f);  // 24 bytes
  expect_error(load_in(dir, external_model("w.bin", "25", "")), ErrorCode::kCorrupt, {"tensor 'w'", "offset 25"});
  expect_error(load_in(dir, external_model("w.bin", "4", "24")), ErrorCode::kCorrupt, {"tensor 'w'", "past the end"});
  expect_error(load_in(dir, external_model("w.bin", "0", "99999999999999999999")), ErrorCode::kCorrupt,
               {"tensor 'w'", "length"});
  expect_error(load_in(dir, external_model("w.bin", "-4", "")), ErrorCode::kCorrupt, {"tensor 'w'", "offset"});
}

TEST(OnnxExternalData, LengthNotMatchingDims) {
  TempDir dir;
  write_floats(dir.path() / "w.bin", 10, 1.0f);
  expect_error(load_in(dir, external_model("w.bin", "0", "20")), ErrorCode::kCorrupt,
               {"tensor 'w'", "20 bytes", "24"});
}

TEST(OnnxExternalData, AbsurdDimsWithExternalDataDoNotAllocate) {
  TempDir dir;
  write_floats(dir.path() / "w.bin", 6, 1.0f);
  auto m = external_model("w.bin");
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 40);
  m.mutable_graph()->mutable_initializer(0)->set_dims(1, int64_t{1} << 20);
  expect_error(load_in(dir, m), ErrorCode::kCorrupt, {"tensor 'w'"});
}

}  // namespace
}  // namespace hone::onnx
