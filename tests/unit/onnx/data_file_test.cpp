// Test data files (TensorProto / SequenceProto / OptionalProto) and tensor protos.
#include <gtest/gtest.h>

#include "hone/onnx.h"
#include "onnx_test_util.h"

namespace hone::onnx {
namespace {

using ::onnx::TensorProto;
using testing::kNodeData;
using testing::TempDir;

std::filesystem::path data(const std::string& test, const std::string& file) {
  return kNodeData / test / "test_data_set_0" / file;
}

TEST(OnnxDataFile, Tensor) {
  auto v = load_data_file(data("test_conv_with_strides_padding", "output_0.pb"));
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(v->kind, DataValue::Kind::kTensor);
  EXPECT_FALSE(v->optional);
  EXPECT_EQ(v->name, "y");
  EXPECT_EQ(v->elem_type, DType::kF32);
  EXPECT_EQ(v->tensor.shape(), (std::vector<int64_t>{1, 1, 4, 3}));
  EXPECT_EQ(v->tensor.data<float>()[0], 12.0f);
}

TEST(OnnxDataFile, Sequence) {
  auto v = load_data_file(data("test_sequence_insert_at_back", "input_0.pb"));
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(v->kind, DataValue::Kind::kSequence);
  EXPECT_EQ(v->elem_type, DType::kI64);
  ASSERT_GE(v->sequence.size(), 2u);
  EXPECT_EQ(v->sequence[0].shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(v->sequence[0].data<int64_t>()[3], 4);
  EXPECT_EQ(v->sequence[1].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(v->sequence[1].data<int64_t>()[0], 5);
  auto same = load_data_file(data("test_sequence_insert_at_back", "input_0.pb"), ValueKind::kSequence);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->sequence.size(), v->sequence.size());
}

TEST(OnnxDataFile, EmptyOptional) {
  auto v = load_data_file(data("test_optional_has_element_empty", "input_0.pb"));
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(v->kind, DataValue::Kind::kOptionalNone);
  EXPECT_TRUE(v->optional);
  auto out = load_data_file(data("test_optional_has_element_empty", "output_0.pb"));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->kind, DataValue::Kind::kTensor);
  EXPECT_EQ(out->tensor.dtype(), DType::kBool);
  EXPECT_EQ(out->tensor.data<uint8_t>()[0], 0);
}

TEST(OnnxDataFile, OptionalSequence) {
  auto v = load_data_file(data("test_optional_get_element_sequence", "input_0.pb"));
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(v->kind, DataValue::Kind::kSequence);
  EXPECT_TRUE(v->optional);
  ASSERT_EQ(v->sequence.size(), 1u);
  EXPECT_EQ(v->sequence[0].dtype(), DType::kI32);
  EXPECT_EQ(v->sequence[0].data<int32_t>()[3], 4);
}

TEST(OnnxDataFile, OptionalTensorNeedsTheExpectedKind) {
  const auto file = data("test_optional_get_element", "input_0.pb");
  auto v = load_data_file(file, ValueKind::kOptional);
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(v->kind, DataValue::Kind::kTensor);
  EXPECT_TRUE(v->optional);
  EXPECT_EQ(v->tensor.shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(v->tensor.data<float>()[3], 4.0f);
  // Undecided, the same bytes read as a one-element sequence (documented).
  auto guess = load_data_file(file);
  ASSERT_TRUE(guess);
  EXPECT_EQ(guess->kind, DataValue::Kind::kSequence);
  ASSERT_EQ(guess->sequence.size(), 1u);
  EXPECT_TRUE(guess->sequence[0].bitwise_equal(v->tensor));
}

TEST(OnnxDataFile, EveryNodeTestDataFileReads) {
  int files = 0;
  std::vector<std::string> failures;
  for (const auto& test : std::filesystem::directory_iterator(kNodeData))
    for (const auto& set : std::filesystem::directory_iterator(test.path())) {
      if (!set.is_directory()) continue;
      for (const auto& f : std::filesystem::directory_iterator(set.path())) {
        auto v = load_data_file(f.path());
        ++files;
        if (!v && v.error().code() != ErrorCode::kUnsupported)
          failures.push_back(f.path().string() + ": " + v.error().to_string());
      }
    }
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(files, 2000);
}

TEST(OnnxDataFile, TypedFieldsOfEveryDtype) {
  auto parse = [](const TensorProto& t) {
    const auto bytes = testing::serialize(t);
    return parse_tensor_proto(bytes);
  };
  TensorProto t;
  t.add_dims(2);
  t.set_data_type(TensorProto::INT8);
  t.add_int32_data(-5);
  t.add_int32_data(7);
  auto i8 = parse(t);
  ASSERT_TRUE(i8) << i8.error().to_string();
  EXPECT_EQ(i8->data<int8_t>()[0], -5);
  t.set_data_type(TensorProto::UINT16);
  t.set_int32_data(0, 65535);
  EXPECT_EQ(parse(t)->data<uint16_t>()[0], 65535);
  t.set_data_type(TensorProto::FLOAT16);
  t.set_int32_data(0, 0x3C00);  // 1.0
  EXPECT_EQ(static_cast<const uint16_t*>(parse(t)->raw())[0], 0x3C00);
  t.set_data_type(TensorProto::BFLOAT16);
  t.set_int32_data(0, 0x4049);
  EXPECT_EQ(parse(t)->dtype(), DType::kBF16);
  EXPECT_EQ(static_cast<const uint16_t*>(parse(t)->raw())[0], 0x4049);
  t.set_data_type(TensorProto::BOOL);
  t.set_int32_data(0, 2);
  t.set_int32_data(1, 0);
  EXPECT_EQ(parse(t)->data<uint8_t>()[0], 1);
  EXPECT_EQ(parse(t)->data<uint8_t>()[1], 0);
  t.clear_int32_data();
  t.set_data_type(TensorProto::UINT32);
  t.add_uint64_data(4000000000u);
  t.add_uint64_data(1);
  EXPECT_EQ(parse(t)->data<uint32_t>()[0], 4000000000u);
  t.set_data_type(TensorProto::UINT64);
  t.set_uint64_data(0, ~uint64_t{0});
  EXPECT_EQ(parse(t)->data<uint64_t>()[0], ~uint64_t{0});
  t.clear_uint64_data();
  t.set_data_type(TensorProto::DOUBLE);
  t.add_double_data(0.125);
  t.add_double_data(-2);
  EXPECT_EQ(parse(t)->data<double>()[1], -2.0);
  t.clear_double_data();
  t.set_data_type(TensorProto::INT64);
  t.add_int64_data(int64_t{1} << 40);
  t.add_int64_data(-1);
  EXPECT_EQ(parse(t)->data<int64_t>()[0], int64_t{1} << 40);
  // A scalar has no dims and one value.
  TensorProto s;
  s.set_data_type(TensorProto::FLOAT);
  s.add_float_data(3.5f);
  auto scalar = parse(s);
  ASSERT_TRUE(scalar);
  EXPECT_EQ(scalar->rank(), 0u);
  EXPECT_EQ(scalar->data<float>()[0], 3.5f);
  // Zero elements need no data.
  TensorProto e;
  e.set_data_type(TensorProto::FLOAT);
  e.add_dims(0);
  e.add_dims(3);
  auto empty = parse(e);
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_EQ(empty->numel(), 0);
}

TEST(OnnxDataFile, SaveAndParseTensorProto) {
  TempDir dir;
  Tensor t = Tensor::from<int16_t>({3}, {-1, 2, 30000});
  const auto file = dir.path() / "t.pb";
  ASSERT_TRUE(save_tensor_proto(t, file, "named"));
  auto back = load_data_file(file);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->name, "named");
  EXPECT_TRUE(back->tensor.bitwise_equal(t));
  auto typed = load_data_file(file, ValueKind::kTensor);
  ASSERT_TRUE(typed);
  EXPECT_TRUE(typed->tensor.bitwise_equal(t));
}

TEST(OnnxDataFile, BadInput) {
  const std::vector<uint8_t> junk{0xff, 0xff, 0xff};
  auto r = parse_tensor_proto(junk);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  TensorProto ext;
  ext.set_name("e");
  ext.set_data_type(TensorProto::FLOAT);
  ext.set_data_location(TensorProto::EXTERNAL);
  auto* kv = ext.add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  auto bytes = testing::serialize(ext);
  auto x = parse_tensor_proto(bytes);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(x.error().message().find("tensor 'e'"), std::string::npos);
  auto missing = load_data_file("/nonexistent/input_0.pb");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace hone::onnx
