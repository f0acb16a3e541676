// Helpers the CLI commands share: --dim parsing, tensor summaries, atomic writes.
#include "hone/cli_common.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace hone::cli {
namespace {

TEST(CliDim, ParsesNameEqualsValue) {
  std::map<std::string, int64_t> dims;
  ASSERT_TRUE(parse_dim_binding("batch=8", dims));
  ASSERT_TRUE(parse_dim_binding("p2o.DynamicDimension.0=0", dims));
  EXPECT_EQ(dims.at("batch"), 8);
  EXPECT_EQ(dims.at("p2o.DynamicDimension.0"), 0);
  ASSERT_TRUE(parse_dim_binding("batch=8", dims));  // same value again is fine
}

TEST(CliDim, RejectsMalformedBindings) {
  std::map<std::string, int64_t> dims;
  for (const char* bad :
       {"batch", "=3", "batch=", "batch=-1", "batch=1.5", "batch=99999999999999999999"}) {
    auto r = parse_dim_binding(bad, dims);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << bad;
  }
  ASSERT_TRUE(parse_dim_binding("batch=2", dims));
  auto twice = parse_dim_binding("batch=3", dims);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message().find("twice"), std::string::npos);
}

TEST(CliStats, MinMaxMeanIgnoreNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto s = tensor_stats(Tensor::from<float>({5}, {1, -2, nan, 4, 7}), 3);
  EXPECT_EQ(s.min, -2);
  EXPECT_EQ(s.max, 7);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_EQ(s.nan_count, 1);
  ASSERT_EQ(s.head.size(), 3u);
  EXPECT_TRUE(std::isnan(s.head[2]));
  auto b = tensor_stats(Tensor::from<bool>({4}, {true, false, true, true}));
  EXPECT_DOUBLE_EQ(b.mean, 0.75);
}

TEST(CliFormat, NumbersAreCompact) {
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(-1.25e-07), "-1.25e-07");
  EXPECT_EQ(format_number(std::nan("")), "nan");
  EXPECT_EQ(format_number(-INFINITY), "-inf");
}

TEST(CliValueType, DescribesShapesAndKinds) {
  Value v;
  v.dtype = DType::kF32;
  v.shape = Shape{Dim::symbol("batch"), 3};
  EXPECT_EQ(describe_value_type(v), "f32[batch,3]");
  v.kind = ValueKind::kSequence;
  EXPECT_EQ(describe_value_type(v), "seq<f32>");
}

// hone::write_file_atomic (core) as the commands use it.
TEST(CliFiles, AtomicWriteLeavesNoTemporary) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hone_cli_common_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_file_atomic(dir / "a.json", "{}\n"));
  std::ifstream in(dir / "a.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{}\n");
  ASSERT_TRUE(write_file_atomic(dir / "a.json", "[]\n"));  // replaces, leaves one file
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  auto bad = write_file_atomic(dir / "missing/a.json", "x");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kIo);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hone::cli
