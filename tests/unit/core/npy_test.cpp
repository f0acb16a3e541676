#include "hone/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "hone/half.h"

namespace hone {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& name) {
  return fs::path(HONE_SOURCE_DIR) / "tests/unit/core/data/npy" / name;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path temp_dir() {
  fs::path d =
      fs::temp_directory_path() /
      ("hone_npy_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(d);
  return d;
}

// --- files written by NumPy 1.24 (tests/unit/core/data/npy) -------------------

TEST(Npy, LoadsFloat32WrittenByNumpy) {
  auto t = load_npy(fixture("f32_2x3.npy"));
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 3}));
  // np.arange(6) * 0.5 - 1
  const float expect[] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->data<float>()[i], expect[i]) << i;
}

TEST(Npy, LoadsEveryIntegerAndBoolDtype) {
  auto i8 = load_npy(fixture("i8_3.npy"));
  ASSERT_TRUE(i8);
  EXPECT_EQ(i8->dtype(), DType::kI8);
  EXPECT_EQ(i8->data<int8_t>()[0], -128);
  EXPECT_EQ(i8->data<int8_t>()[2], 127);

  auto u8 = load_npy(fixture("u8_3.npy"));
  ASSERT_TRUE(u8);
  EXPECT_EQ(u8->dtype(), DType::kU8);
  EXPECT_EQ(u8->data<uint8_t>()[1], 128);
  EXPECT_EQ(u8->data<uint8_t>()[2], 255);

  auto i16 = load_npy(fixture("i16_3.npy"));
  ASSERT_TRUE(i16);
  EXPECT_EQ(i16->dtype(), DType::kI16);
  EXPECT_EQ(i16->data<int16_t>()[0], -300);

  auto u16 = load_npy(fixture("u16_2.npy"));
  ASSERT_TRUE(u16);
  EXPECT_EQ(u16->dtype(), DType::kU16);
  EXPECT_EQ(u16->data<uint16_t>()[1], 65535);

  auto i32 = load_npy(fixture("i32_2.npy"));
  ASSERT_TRUE(i32);
  EXPECT_EQ(i32->dtype(), DType::kI32);
  EXPECT_EQ(i32->data<int32_t>()[0], -7);
  EXPECT_EQ(i32->data<int32_t>()[1], 2147483647);

  auto u32 = load_npy(fixture("u32_2.npy"));
  ASSERT_TRUE(u32);
  EXPECT_EQ(u32->dtype(), DType::kU32);
  EXPECT_EQ(u32->data<uint32_t>()[1], 4294967295u);

  auto i64 = load_npy(fixture("i64_2x2.npy"));
  ASSERT_TRUE(i64);
  EXPECT_EQ(i64->dtype(), DType::kI64);
  EXPECT_EQ(i64->data<int64_t>()[1], int64_t{1} << 40);
  EXPECT_EQ(i64->data<int64_t>()[3], -(int64_t{1} << 62));

  auto u64 = load_npy(fixture("u64_2.npy"));
  ASSERT_TRUE(u64);
  EXPECT_EQ(u64->dtype(), DType::kU64);
  EXPECT_EQ(u64->data<uint64_t>()[1], std::numeric_limits<uint64_t>::max());

  auto b = load_npy(fixture("bool_5.npy"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dtype(), DType::kBool);
  const bool expect[] = {true, false, true, true, false};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b->data<bool>()[i], expect[i]) << i;
}

TEST(Npy, LoadsHalfScalarAndEmpty) {
  auto h = load_npy(fixture("f16_4.npy"));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->dtype(), DType::kF16);
  EXPECT_EQ(h->data<Half>()[1].to_float(), -2.5f);
  EXPECT_EQ(h->data<Half>()[2].to_float(), 65504.0f);
  EXPECT_TRUE(std::isinf(h->data<Half>()[3].to_float()));

  auto s = load_npy(fixture("f64_scalar.npy"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->rank(), 0u);
  EXPECT_EQ(s->data<double>()[0], 3.25);

  auto e = load_npy(fixture("empty_0x3.npy"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(e->numel(), 0);
}

TEST(Npy, LoadsVersions2And3) {
  auto v2 = load_npy(fixture("v2_f32_3.npy"));
  ASSERT_TRUE(v2) << v2.error().to_string();
  EXPECT_EQ(v2->data<float>()[2], 3.5f);
  auto v3 = load_npy(fixture("v3_i32_2.npy"));
  ASSERT_TRUE(v3) << v3.error().to_string();
  EXPECT_EQ(v3->data<int32_t>()[1], -9);
}

TEST(Npy, TransposesFortranOrder) {
  // np.asfortranarray(np.arange(24).reshape(2,3,4)): element [i,j,k] is 12i+4j+k.
  auto t = load_npy(fixture("fortran_f64_2x3x4.npy"));
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 3, 4}));
  for (int i = 0; i < 24; ++i) EXPECT_EQ(t->data<double>()[i], static_cast<double>(i)) << i;
}

TEST(Npy, SwapsBigEndian) {
  auto t = load_npy(fixture("bigendian_i4_2x2.npy"));
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->dtype(), DType::kI32);
  const int32_t expect[] = {1, -2, 300, 70000};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t->data<int32_t>()[i], expect[i]) << i;
}

TEST(Npy, RejectsComplexAndStringsAsUnsupported) {
  auto c = load_npy(fixture("unsupported_c8.npy"));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(c.error().message().find("<c8"), std::string::npos) << c.error().message();
  auto s = load_npy(fixture("unsupported_str.npy"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kUnsupported);
}

// --- writing ------------------------------------------------------------------

TEST(Npy, WritesTheSameBytesAsNumpy) {
  // NumPy's own file for this array is the reference for our writer.
  Tensor t = Tensor::from<float>({2, 3}, {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});
  auto bytes = serialize_npy(t);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, read_bytes(fixture("f32_2x3.npy")));

  auto b = Tensor::from<bool>({5}, {true, false, true, true, false});
  EXPECT_EQ(*serialize_npy(b), read_bytes(fixture("bool_5.npy")));
  auto s = Tensor::scalar<double>(3.25);
  EXPECT_EQ(*serialize_npy(s), read_bytes(fixture("f64_scalar.npy")));
  auto e = Tensor::zeros(DType::kF32, {0, 3});
  EXPECT_EQ(*serialize_npy(e), read_bytes(fixture("empty_0x3.npy")));
}

TEST(Npy, RoundTripsEveryDtypeThroughAFile) {
  const fs::path dir = temp_dir();
  for (DType dt : {DType::kF16, DType::kF32, DType::kF64, DType::kI8, DType::kU8, DType::kI16,
                   DType::kU16, DType::kI32, DType::kU32, DType::kI64, DType::kU64, DType::kBool}) {
    Tensor t = Tensor::zeros(dt, {3, 2});
    auto* p = static_cast<uint8_t*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(i * 37 + 1);
    if (dt == DType::kBool)
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>(i % 2);
    const fs::path file = dir / (std::string(dtype_name(dt)) + ".npy");
    ASSERT_TRUE(save_npy(t, file)) << dtype_name(dt);
    EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
    auto back = load_npy(file);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_TRUE(back->bitwise_equal(t)) << dtype_name(dt);
  }
  fs::remove_all(dir);
}

TEST(Npy, RefusesToSaveBFloat16) {
  Tensor t = Tensor::zeros(DType::kBF16, {2});
  auto r = serialize_npy(t);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message().find("bf16"), std::string::npos);
  const fs::path dir = temp_dir();
  EXPECT_FALSE(save_npy(t, dir / "x.npy"));
  EXPECT_FALSE(fs::exists(dir / "x.npy"));
  fs::remove_all(dir);
}

TEST(Npy, SaveIntoMissingDirectoryIsAnIoError) {
  auto r = save_npy(Tensor::scalar(1.0f), "/nonexistent-dir-hone/x.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kIo);
  EXPECT_NE(r.error().message().find("/nonexistent-dir-hone/x.npy"), std::string::npos);
}

// --- corrupt input --------------------------------------------------------------

TEST(Npy, MissingFileIsNotFound) {
  auto r = load_npy("/nonexistent-dir-hone/x.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
}

TEST(Npy, TruncatedDataIsCorruptAndSaysSo) {
  auto bytes = read_bytes(fixture("f32_2x3.npy"));
  bytes.resize(bytes.size() - 4);
  auto r = parse_npy(bytes, "cut.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("cut.npy"), std::string::npos);
  EXPECT_NE(r.error().message().find("needs 24 bytes but only 20"), std::string::npos)
      << r.error().message();
}

TEST(Npy, TruncatedHeaderAndBadMagicAreCorrupt) {
  auto bytes = read_bytes(fixture("f32_2x3.npy"));
  std::vector<uint8_t> head(bytes.begin(), bytes.begin() + 30);
  auto r = parse_npy(head, "head.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("truncated .npy header"), std::string::npos);

  bytes[1] = 'X';
  auto m = parse_npy(bytes, "magic.npy");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(m.error().message().find("magic"), std::string::npos);
}

std::vector<uint8_t> make_file(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

TEST(Npy, MalformedHeadersAreCorrupt) {
  for (const std::string h : {"{'descr': '<f4', 'shape': (2,), }\n",
                              "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }\n",
                              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }\n",
                              "['descr']\n", "{'descr': '<f4' 'fortran_order': False}\n"}) {
    auto r = parse_npy(make_file(h, 8), "h.npy");
    ASSERT_FALSE(r) << h;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << h;
    EXPECT_NE(r.error().message().find("bad .npy header"), std::string::npos)
        << r.error().message();
  }
}

TEST(Npy, HugeShapeDoesNotAllocate) {
  auto r = parse_npy(
      make_file(
          "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000000), }\n", 8),
      "huge.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
}

TEST(Npy, AcceptsKeysInAnyOrderAndDoubleQuotes) {
  auto r = parse_npy(
      make_file("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}\n", 8), "q.npy");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->dtype(), DType::kI32);
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{2}));
}

TEST(Npy, TrailingBytesAreCorrupt) {
  auto r = parse_npy(make_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", 12),
                     "t.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
}

TEST(Npy, BoolBytesOtherThanZeroOrOneAreCorrupt) {
  auto f = make_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", 2);
  f.back() = 7;
  auto r = parse_npy(f, "b.npy");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace hone
